/**
 * The bridge's numeric file ids (docs/extensions.md "Numeric file ids"): what the Nextcloud
 * clients keep as a node's identity (oc:fileid, a 64-bit integer; oc:id, the number zero-padded
 * to 8 digits and the instance id) when the store gives none: the collections the bridge makes
 * up, and every node of a store without `file_id`. The contract and the number rules only;
 * store/storage/dav-file-ids.ts keeps the rows (the store's database under `npm start`, shared
 * by every instance; the bridge's own file otherwise). No state and no I/O here.
 */

/**
 * Where the bridge's numbers start: far above any number a store gives (a store counts its nodes
 * from 1), so the two never meet, and below 2^53, so JavaScript clients read them exactly.
 */
export const BRIDGE_FILE_ID_BASE = 2 ** 52;

export interface FileIdRepository {
  /** The numbers of `keys` (a node's UUID, a made-up collection's key), each given on first sight and never to another key. */
  numbersOf(keys: readonly string[]): Promise<Map<string, number>>;
  /** The key number `fileId` was given to; undefined when none. */
  keyOf(fileId: number): Promise<string | undefined>;
  /** Nextcloud's instance id (`oc` and 10 of [a-z0-9]) and oc:data-fingerprint: made once, then the same for every instance. */
  instance(): Promise<{ instanceId: string; dataFingerprint: string }>;
}

/** Nextcloud's oc:id: the number zero-padded to 8 digits, then the instance id (its FileInfo::getId and OC_Util::getInstanceId). */
export function ocIdOf(fileId: number, instanceId: string): string {
  return `${String(fileId).padStart(8, '0')}${instanceId}`;
}

/** The number in a path segment or an oc:id (`42`, `00000042ocabcdefghij`); undefined for anything else (a UUID). */
export function parseFileId(value: string): number | undefined {
  const match = /^(\d{1,16})(?:oc[a-z0-9]{10})?$/.exec(value);
  if (!match) return undefined;
  const n = Number(match[1]);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}
