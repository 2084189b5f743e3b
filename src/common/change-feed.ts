/**
 * What a store announces after its transactions commit, for the caches that sit in front of it
 * (the bridge's listings, PROPFIND answers and privileges): several instances over one database
 * each keep their own caches, and learn of the others' writes through this feed
 * (docs/scale-out.md "Caches across instances"). The embedded SQLite store's feed serves only
 * the bridge in its own process (storage/dialects/sqlite-changes.ts): the folders any writer
 * changed, the bridge's own marked `local`.
 */
export interface StoreChange {
  /**
   * Folders whose listing changed (a child added, removed, renamed, rewritten), named as the
   * bridge's metadata cache names them: a node uuid, or `<top kind>:<owner uuid>` for a
   * top-level folder (`home:…`, `trash:…`, `favorites:…`).
   */
  readonly folders: readonly string[];
  /**
   * Folders whose listing holds an entry whose tree version moved (a change further below;
   * docs/extensions.md "Tree versions and sizes"), named as `folders` are: their children did
   * not change. Absent from a store without tree versions.
   */
  readonly trees?: readonly string[];
  /** Anything may have changed (notifications were missed, or too many folders to name): drop every cache. */
  readonly everything: boolean;
  /** Dead properties or client mtimes changed. */
  readonly properties: boolean;
  /** WebDAV locks changed (taken, refreshed, released, swept). */
  readonly locks: boolean;
  /** A session ended (logout, revocation, expiry swept) or what it carries of its user changed (deactivated, role, organization, password). */
  readonly sessions: boolean;
  /**
   * Users whose notifications changed (one added or removed: the store's notifications,
   * docs/api.md "Notifications"), by uuid: the push door tells their sockets `notify_notification`.
   */
  readonly notified?: readonly string[];
  /**
   * Made through this process's own bridge, which has already updated its caches for it (a
   * listener may skip the folders' own listings). Folders: only the bridge's own transactions'
   * (SQLite: sqlite-changes.ts; PostgreSQL: BRIDGE_WRITE, migration 038), never the REST API's;
   * properties, locks and sessions over PostgreSQL: any write of this process's connections.
   */
  readonly local: boolean;
}

export type StoreChangeListener = (change: StoreChange) => void;

export interface ChangeFeed {
  /** Calls `listener` for every change from now on; the returned function stops that. */
  subscribe(listener: StoreChangeListener): () => void;
  /**
   * Resolves once every change committed before the call has been handed to the subscribers
   * (read-your-writes across instances: a client that wrote through one instance and reads
   * through another). Resolves at once while the feed is not connected, and after a bounded
   * wait at worst: a request is never held up for long by the feed.
   */
  settled(): Promise<void>;
  /**
   * True while changes are being received. A cache that only the feed keeps true (nothing else
   * expires it soon enough) must be bypassed otherwise: notifications sent meanwhile are lost.
   */
  readonly listening: boolean;
}

/** The channel, and the words of its payload (the PostgreSQL triggers of migrations 014, 017, 018 and 038 write them). */
export const CHANGE_CHANNEL = 'driveway_changes';
export const EVERYTHING = '*';
export const PROPERTIES = '!props';
export const LOCKS = '!locks';
export const SESSIONS = '!sessions';
/** The prefix of a folder whose listing's tree versions moved (migration 026). */
export const TREE = '^';

/** The prefix of a user whose notifications changed (StoreChange.notified). */
export const NOTIFIED = '@';
/** First word of a folder announcement made inside a transaction of the in-process bridge (migration 038). */
export const BRIDGE_WRITE = '~';

/**
 * A payload as the triggers write it: words separated by spaces. `fromThisInstance`: sent by a
 * connection of this process. A message naming folders is `local` only when the bridge's own
 * transaction sent it (BRIDGE_WRITE): this process's REST API writes must reach its bridge's
 * listings. One naming none (properties, locks, sessions) is `local` when this process sent it.
 */
export function parseChange(payload: string, fromThisInstance: boolean): StoreChange {
  const folders: string[] = [];
  const trees: string[] = [];
  const notified: string[] = [];
  let everything = false;
  let properties = false;
  let locks = false;
  let sessions = false;
  let bridgeWrite = false;
  for (const word of payload.split(' ')) {
    if (word === '') continue;
    if (word === BRIDGE_WRITE) bridgeWrite = true;
    else if (word === EVERYTHING) everything = true;
    else if (word === PROPERTIES) properties = true;
    else if (word === LOCKS) locks = true;
    else if (word === SESSIONS) sessions = true;
    else if (word.startsWith(TREE)) trees.push(word.slice(TREE.length));
    else if (word.startsWith(NOTIFIED)) notified.push(word.slice(NOTIFIED.length));
    else folders.push(word);
  }
  const local = fromThisInstance && (bridgeWrite || (folders.length === 0 && trees.length === 0));
  return { folders, ...(trees.length > 0 ? { trees } : {}), ...(notified.length > 0 ? { notified } : {}), everything, properties, locks, sessions, local };
}
