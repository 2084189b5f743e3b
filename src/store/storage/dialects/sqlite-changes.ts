/**
 * The embedded store's folder announcements for the bridge in the same process (bridge-store.ts):
 * which folders' listings changed, as PostgreSQL's triggers announce them across instances
 * (migration 014), so a write through the store's REST API (the web app's) reaches the bridge's
 * listings at once: the folder's own listing and the tree versions above it. TEMP triggers of the
 * connection call a function that collects the parent of every node row inserted, updated or
 * deleted; the collected folders are handed over once the connection is out of its transaction
 * (committed, or rolled back: an announcement too many costs a listing, never a stale answer).
 * The bridge's own writes (its store client runs on bridgeStorage()) are announced apart, as
 * `local`: the bridge patched its listings for them already, and re-listing a folder after each
 * upload into it would make a folder filling with files quadratic (metadata-cache.ts upsert).
 * Only folders, and the users whose notifications changed (a row added or removed: migration 031;
 * the push door's `notify_notification`): no sessions, locks or properties (those caches are the
 * process's own here).
 */
import type Database from 'better-sqlite3';
import type { ChangeFeed, StoreChange, StoreChangeListener } from '../../../common/change-feed.js';
import type { Sql, Storage } from '../sql.js';
import { sqliteConnectionOf } from './sqlite.js';

/** The folders strictly above the folders of a JSON array. */
const ABOVE = `WITH RECURSIVE up(uuid) AS (
    SELECT n.parent_uuid FROM nodes n WHERE n.uuid IN (SELECT value FROM json_each(?)) AND n.parent_uuid IS NOT NULL
    UNION
    SELECT n.parent_uuid FROM nodes n JOIN up ON n.uuid = up.uuid WHERE n.parent_uuid IS NOT NULL
  ) SELECT uuid FROM up`;

const feeds = new WeakMap<Database.Database, SqliteFolderFeed>();

class SqliteFolderFeed implements ChangeFeed {
  private readonly listeners = new Set<StoreChangeListener>();
  /** Folders changed by anyone but the bridge (the REST API, background work)... */
  private readonly pending = new Set<string>();
  /** ...and by the bridge's transactions (bridgeStorage). */
  private readonly pendingOwn = new Set<string>();
  private readonly notified = new Set<string>();
  /** Above 0 while a transaction of the bridge's runs: the connection runs one transaction at a time, and a root-handle query waits for it. */
  private bridgeDepth = 0;
  private scheduled = false;
  readonly listening = true;

  constructor(private readonly db: Database.Database) {
    db.function('driveway_folder_changed', { deterministic: false, varargs: true }, (...parents: unknown[]) => {
      const into = this.bridgeDepth > 0 ? this.pendingOwn : this.pending;
      for (const parent of parents) if (typeof parent === 'string') into.add(parent);
      this.schedule();
      return null;
    });
    for (const [event, parents] of [
      ['INSERT', 'NEW.parent_uuid'],
      ['UPDATE', 'NEW.parent_uuid, OLD.parent_uuid'],
      ['DELETE', 'OLD.parent_uuid'],
    ] as const) {
      db.exec(`CREATE TEMP TRIGGER IF NOT EXISTS driveway_folder_feed_${event.toLowerCase()} AFTER ${event} ON main.nodes
               BEGIN SELECT driveway_folder_changed(${parents}); END`);
    }
    db.function('driveway_user_notified', { deterministic: false }, (user: unknown) => {
      if (typeof user === 'string') this.notified.add(user);
      this.schedule();
      return null;
    });
    for (const [event, row] of [
      ['INSERT', 'NEW'],
      ['DELETE', 'OLD'],
    ] as const) {
      db.exec(`CREATE TEMP TRIGGER IF NOT EXISTS driveway_notified_feed_${event.toLowerCase()} AFTER ${event} ON main.notifications
               BEGIN SELECT driveway_user_notified(${row}.user_uuid); END`);
    }
  }

  /** Top-level folders among `uuids` as the bridge keys them too: `<kind>:<owner>`. */
  private topKeys(uuids: readonly string[]): string[] {
    if (uuids.length === 0) return [];
    const tops = this.db.prepare('SELECT top_kind, owner_uuid FROM nodes WHERE uuid IN (SELECT value FROM json_each(?)) AND top_kind IS NOT NULL').all(JSON.stringify(uuids)) as Array<{ top_kind: string; owner_uuid: string }>;
    return tops.map((t) => `${t.top_kind}:${t.owner_uuid}`);
  }

  /** `sql` whose transactions are the bridge's: the folders they change are announced as `local`. */
  bridgeSql(sql: Sql): Sql {
    const transaction: Sql['transaction'] = (work, options) =>
      sql.transaction(async (tx) => {
        this.bridgeDepth += 1;
        try {
          return await work(tx);
        } finally {
          this.bridgeDepth -= 1;
        }
      }, options);
    return Object.create(sql, { transaction: { value: transaction } }) as Sql;
  }

  subscribe(listener: StoreChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Hands over what committed so far (a request after a REST write sees it without waiting for the next turn). */
  settled(): Promise<void> {
    this.flush();
    return Promise.resolve();
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.pending.size === 0 && this.pendingOwn.size === 0 && this.notified.size === 0) return;
    if (this.db.inTransaction) {
      this.schedule();
      return;
    }
    const others = [...this.pending];
    this.pending.clear();
    const own = [...this.pendingOwn];
    this.pendingOwn.clear();
    const notified = [...this.notified];
    this.notified.clear();
    const changes: StoreChange[] = [];
    if (others.length > 0 || notified.length > 0) changes.push({ ...this.changeOf(others, false), ...(notified.length > 0 ? { notified } : {}) });
    if (own.length > 0) changes.push(this.changeOf(own, true));
    for (const change of changes) for (const listener of this.listeners) listener(change);
  }

  /** The announcement of `uuids`: the folders, and those above them (their listings hold an entry whose tree version moved). */
  private changeOf(uuids: readonly string[], local: boolean): StoreChange {
    const above = uuids.length === 0 ? [] : (this.db.prepare(ABOVE).all(JSON.stringify(uuids)) as Array<{ uuid: string }>).map((row) => row.uuid);
    return {
      folders: [...uuids, ...this.topKeys(uuids)],
      trees: [...above, ...this.topKeys(above)],
      everything: false,
      properties: false,
      locks: false,
      sessions: false,
      local,
    };
  }
}

/** The folder feed of a SQLite storage's connection (one per connection); undefined for another dialect. */
export function sqliteFolderFeed(sql: Sql): ChangeFeed | undefined {
  const db = sqliteConnectionOf(sql);
  if (!db) return undefined;
  let feed = feeds.get(db);
  if (!feed) {
    feed = new SqliteFolderFeed(db);
    feeds.set(db, feed);
  }
  return feed;
}

/**
 * `storage` as the in-process bridge's store client uses it (bridge-store.ts): the folders its
 * transactions change are announced as the bridge's own (`local`), every other writer's as not.
 * Over SQLite this feed marks them; any other dialect is told by TransactionOptions.local
 * (PostgreSQL: migration 038).
 */
export function bridgeStorage(storage: Storage): Storage {
  const feed = storage.changes ? undefined : sqliteFolderFeed(storage.sql);
  const sql = storage.sql;
  const marked: Sql =
    feed instanceof SqliteFolderFeed
      ? feed.bridgeSql(sql)
      : (Object.create(sql, { transaction: { value: ((work, options) => sql.transaction(work, { ...options, local: true })) satisfies Sql['transaction'] } }) as Sql);
  // `changes` read here, once: a storage's lazy getter run on the derived object would set its own feed.
  return Object.create(storage, { sql: { value: marked }, changes: { value: storage.changes } }) as Storage;
}
