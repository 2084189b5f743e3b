/**
 * What GET /public/{token} answers in JSON (docs/extensions.md "Share links and private shares"):
 * plain types with no imports, so the web app's link page imports them type-only.
 */

/** A folder behind a public link (`?info` adds `expires`). No UUIDs. */
export interface LinkListing {
  name: string;
  type: 'Dir';
  entries: Array<{ name: string; type: 'Dir' | 'File'; size: number; updated: number; revision?: number }>;
}

/**
 * What a link's page shows (`?info`): a file's name, size, date and type; a folder's listing; for
 * an upload link only that it takes uploads (nothing of its folder). `expires`: null is never.
 */
export type LinkInfo =
  | { type: 'File'; name: string; size: number; updated: number; content_type: string; expires: number | null }
  | (LinkListing & { expires: number | null })
  | { type: 'Upload'; expires: number | null };

/** POST /public/{token}/unlock: when the unlock cookie ends (null: the link has no password). */
export interface LinkUnlocked {
  expires: number | null;
}
