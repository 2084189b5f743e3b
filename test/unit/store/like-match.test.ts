/**
 * likeMatches: the search's `mime` LIKE pattern tested in memory (`%` any run, `_` one character,
 * `\` itself, case-insensitive, the whole text), and in time linear in the text per pattern
 * character: a pattern of many `%` that never matches (the RegExp it replaced backtracked for
 * minutes over the ~1,000 known types) answers at once.
 */
import { types as MIME_TYPES } from 'mime-types';
import { describe, expect, it } from 'vitest';
import { likeMatches } from '../../../src/store/storage/like-match.js';

describe('likeMatches', () => {
  it('matches % as any run (empty too), _ as one character, everything else literally, the whole text', () => {
    expect(likeMatches('image/%', 'image/png')).toBe(true);
    expect(likeMatches('image/%', 'image/')).toBe(true);
    expect(likeMatches('image/%', 'video/mp4')).toBe(false);
    expect(likeMatches('%/x-%', 'application/x-tar')).toBe(true);
    expect(likeMatches('%/x-%', 'application/pdf')).toBe(false);
    expect(likeMatches('_mage/png', 'image/png')).toBe(true);
    expect(likeMatches('_mage/png', 'iimage/png')).toBe(false);
    expect(likeMatches('image/pn', 'image/png')).toBe(false);
    expect(likeMatches('image/png', 'image/pn')).toBe(false);
    expect(likeMatches('%a%b%c%', 'xaybzc')).toBe(true);
    expect(likeMatches('%a%b%c', 'xaybzcq')).toBe(false);
    expect(likeMatches('%ab', 'aab')).toBe(true);
    expect(likeMatches('%', '')).toBe(true);
    expect(likeMatches('', '')).toBe(true);
    expect(likeMatches('_', '')).toBe(false);
  });

  it('treats regex characters and the backslash as themselves, and ignores case', () => {
    expect(likeMatches('image/svg+xml', 'image/svg+xml')).toBe(true);
    expect(likeMatches('image/svg+xml', 'image/svggxml')).toBe(false);
    expect(likeMatches('a.b', 'axb')).toBe(false);
    expect(likeMatches('a\\%', 'a\\anything')).toBe(true);
    expect(likeMatches('a\\%', 'a%')).toBe(false);
    expect(likeMatches('IMAGE/%', 'image/PNG')).toBe(true);
  });

  it('answers a pattern of many % that never matches against every known type at once', { timeout: 5_000 }, () => {
    const types = Object.values(MIME_TYPES);
    expect(types.length).toBeGreaterThan(500);
    for (const pattern of ['%%%%%%%%%%%%!', '%_%_%_%_%_%_%_%_%_%_%_%_!', `${'%a'.repeat(60)}!`, '%'.repeat(254) + '!']) {
      expect(types.filter((t) => likeMatches(pattern, t))).toEqual([]);
    }
    expect(types.filter((t) => likeMatches('%%%%%%%%%%%%/pdf', t))).toEqual(['application/pdf']);
  });
});
