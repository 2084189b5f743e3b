/**
 * A group drive's folder name under `/groups/` (docs/bridge-design.md): the one function the
 * bridge (namespace.ts groupSegments) and the web app (api/files.ts, the folder's URL on the
 * bridge) both call, so the page never builds a path the bridge does not have. Browser-safe: no
 * Node.js API (TextEncoder, not Buffer).
 *
 * The name as a path segment: NFC, no `/`, `\` or control characters, trimmed, not empty, `.` or
 * `..`, at most 240 bytes of UTF-8 (cut at a whole character). Names equal after this, compared
 * case-insensitively (Finder and Explorer do), are told apart by the group UUID's first 8
 * characters on all but the first by UUID, so every group keeps a stable, distinct name.
 */

export const GROUP_FOLDER_MAX_BYTES = 240;

const ASCII = /^[\x20-\x7e]*$/;
const encoder = new TextEncoder();

/** `name` cut to at most `max` bytes of UTF-8, never inside a character. */
function cutToBytes(name: string, max: number): string {
  if (ASCII.test(name)) return name.length <= max ? name : name.slice(0, max);
  if (encoder.encode(name).length <= max) return name;
  let bytes = 0;
  let out = '';
  for (const ch of name) {
    const size = encoder.encode(ch).length;
    if (bytes + size > max) break;
    bytes += size;
    out += ch;
  }
  return out;
}

/** One group name made safe as a path segment (before any UUID suffix). */
export function groupFolderBase(name: string): string {
  let s = (ASCII.test(name) ? name : name.normalize('NFC')).replace(/[\u0000-\u001f\u007f/\\]/g, '_').trim();
  if (s === '' || s === '.' || s === '..') s = `group ${s}`.trim();
  return cutToBytes(s, GROUP_FOLDER_MAX_BYTES);
}

/** Each group's folder name, keyed by that name: `group` reads a group's id and name. */
export function groupFolderNames<G>(groups: readonly G[], group: (g: G) => { id: string; name: string }): Map<string, G> {
  const byFolded = new Map<string, Array<{ g: G; id: string; base: string }>>();
  const sorted = groups.map((g) => ({ g, ...group(g) })).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const { g, id, name } of sorted) {
    const base = groupFolderBase(name);
    const key = base.toLowerCase();
    const same = byFolded.get(key);
    if (same) same.push({ g, id, base });
    else byFolded.set(key, [{ g, id, base }]);
  }
  const out = new Map<string, G>();
  for (const same of byFolded.values()) {
    same.forEach(({ g, id, base }, index) => out.set(index === 0 ? base : `${base} (${id.replace(/[^0-9a-zA-Z]/g, '').slice(0, 8)})`, g));
  }
  return out;
}
