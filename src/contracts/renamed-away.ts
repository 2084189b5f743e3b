/**
 * The memo behind saves by rename-away (docs/bridge-design.md "Saves"): Word over the Windows
 * WebClient saves on some setups by renaming the document away to a backup name (`~WRL0001.tmp`),
 * renaming its temp (`~WRD0003.tmp`) into the freed name and deleting the backup. No request of
 * that dance lands on an existing file, so the bridge remembers the first rename here and, when
 * the second follows soon enough, makes it a new revision of the renamed document instead.
 * The contract and the name rule only; store/storage/renamed-away.ts keeps the rows (the store's
 * database under `npm start`, shared by every instance; the bridge's own file otherwise). No
 * state and no I/O here.
 */

/** How long a rename-away waits for its temp: Word's whole save takes well under a second. */
export const RENAME_AWAY_WINDOW_MS = 60_000;

/**
 * A name an editor gives a document it renames away while saving: `~` first and `.tmp` last, as
 * Word's `~WRL<n>.tmp` (any case). Narrow on purpose: a person's rename to another name never
 * starts this. Excel's and PowerPoint's backups (`<8 hex>.tmp`, `ppt<n>.tmp`) are not matched.
 */
export function isEditorBackupName(name: string): boolean {
  return name.length > 5 && name.startsWith('~') && name.toLowerCase().endsWith('.tmp');
}

/**
 * One remembered step, per user and folder (a folder key: a node UUID, or `home:<user>` for a
 * top-level folder). `away`: file `nodeId` at revision `revision` left `name` for `otherName`.
 * `restored`: file `nodeId` left the backup name `name` and is back at `otherName` with the saved
 * content, so the client's DELETE of `name` is answered as done.
 */
export interface RenameAwayMemo {
  readonly kind: 'away' | 'restored';
  readonly userId: string;
  readonly folder: string;
  readonly name: string;
  readonly nodeId: string;
  readonly otherName: string;
  readonly revision: number | undefined;
  readonly atMs: number;
}

/** Where the memos live; methods throw a storage error only (5xx for the request). */
export interface RenameAwayRepository {
  /** Remembers `memo`, replacing one of the same kind for the same user, folder and name; drops memos older than `staleBeforeMs`. */
  remember(memo: RenameAwayMemo, staleBeforeMs: number): Promise<void>;
  /**
   * Takes (removes and returns) the memo of `kind` for that user, folder and name, when it was
   * made at or after `sinceMs`. Of callers racing for one memo, on any instance, one gets it.
   */
  take(kind: RenameAwayMemo['kind'], userId: string, folder: string, name: string, sinceMs: number): Promise<RenameAwayMemo | undefined>;
}
