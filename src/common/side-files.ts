/**
 * macOS side files (issue 22, item 4): the one rule that says which names are Finder's own
 * bookkeeping. Finder (WebDAVFS) writes an AppleDouble `._<name>` beside every file it copies
 * (extended attributes, tags, resource forks) and a `.DS_Store` in every folder it opens
 * (docs/client-quirks.md §1). They are kept like any file and count toward the quota, but only
 * Finder is shown them: the store's listings (dirlist, public links, the share views) and the
 * bridge's answers to every other client leave them out (docs/store-semantics.md "macOS side
 * files", docs/bridge-design.md). This module only names them; who applies the rule where is
 * said by its callers. Only files are side files: a folder named `._x` is an ordinary folder.
 */

/**
 * driveway's dirlist extension (docs/extensions.md): this request header set to `1` lists side
 * files too, where they are the caller's own. The bridge sends it for its one cached listing.
 */
export const MAC_SIDE_FILES_HEADER = 'x-driveway-mac-side-files';

const DS_STORE = '.DS_Store';
const APPLE_DOUBLE_PREFIX = '._';

/** Whether a file of this name is one of Finder's side files (`._<name>` or `.DS_Store`). */
export function isMacSideFile(name: string): boolean {
  return name === DS_STORE || (name.startsWith(APPLE_DOUBLE_PREFIX) && name.length > APPLE_DOUBLE_PREFIX.length);
}

/** Whether a listed entry is a side file: a file (never a folder) of such a name. */
export function isMacSideEntry(entry: { name: string; isFile: boolean }): boolean {
  return entry.isFile && isMacSideFile(entry.name);
}

/**
 * The AppleDouble twin of a file: `._<name>`. Undefined for a name that is itself a side file
 * (`._._x` is not a twin anyone keeps).
 */
export function appleDoubleOf(name: string): string | undefined {
  return isMacSideFile(name) ? undefined : `${APPLE_DOUBLE_PREFIX}${name}`;
}

/** macOS WebDAVFS, the Finder's WebDAV file system (User-Agent `WebDAVFS/3.0.0 (03008000) Darwin/...`). */
export function isFinderAgent(userAgent: string | undefined): boolean {
  return userAgent !== undefined && /\bWebDAVFS\//.test(userAgent);
}
