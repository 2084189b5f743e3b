/**
 * A LIKE pattern tested in memory (the search's `mime` condition against the known content
 * types): `%` any run, `_` one character, every other character itself (no escape character, `\`
 * included, as the name's LIKE), case-insensitive, the whole text. The greedy two-pointer walk
 * goes back only to the last `%` seen, so its cost is at most the pattern's length times the
 * text's, whatever the pattern: a RegExp of `.*` runs backtracks exponentially
 * (`%%%%%%%%%%%%!` froze the server for minutes against the ~1,000 types).
 */
export function likeMatches(pattern: string, text: string): boolean {
  const p = Array.from(pattern.toLowerCase());
  const t = Array.from(text.toLowerCase());
  let pi = 0;
  let ti = 0;
  /** The pattern's index just after the last `%` seen, and where in the text that `%` ends for now. */
  let afterStar = -1;
  let starEnd = 0;
  while (ti < t.length) {
    const ch = p[pi];
    if (ch === '%') {
      afterStar = ++pi;
      starEnd = ti;
    } else if (ch !== undefined && (ch === '_' || ch === t[ti])) {
      pi++;
      ti++;
    } else if (afterStar >= 0) {
      // The last `%` takes one character more; the rest of the pattern starts again after it.
      pi = afterStar;
      ti = ++starEnd;
    } else {
      return false;
    }
  }
  while (p[pi] === '%') pi++;
  return pi === p.length;
}
