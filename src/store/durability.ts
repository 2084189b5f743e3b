/**
 * "Answered means durable" for every store operation, whatever the transport: a request notes
 * the connection's change count when it starts (`mark`) and, before its answer goes out,
 * `settle` waits for a shared fsync of the WAL when the count moved (storage/dialects/wal-sync.ts). A read-only
 * request that overlapped a write waits too, which costs it a fraction of a millisecond and keeps
 * the rule simple: nothing that observed a change is answered before the change is on disk.
 * HTTP routes get it from app.ts's hooks; the in-process client wraps each call.
 *
 * It stays beside the operations, not in storage/, because it is a rule about requests (when an
 * answer may go out), not data access; it holds no SQL: the change count and the fsync are the
 * SQLite dialect's (dialects/sqlite-open.ts totalChanges, dialects/wal-sync.ts).
 *
 * `durable()` is the same promise for what is not an answer: blob bytes that a commit released go
 * only once that commit is on disk (blobs/blob-backend.ts BlobLedger.durable), or a power cut
 * could leave rows naming a blob that is gone. The fsync it waits for is the one the request's
 * answer would have waited for anyway: what it covered, `settle` does not fsync again.
 *
 * Group commit (`group`): several operations of one request (the parts of a bulk upload:
 * bridge/uploads/bulk.ts) each commit their own transaction, as alone, and the group waits once
 * for one WAL fsync that covers them all, before the request's answer goes out; the operations
 * inside do not wait for theirs. The promise stays the same: a crash at any instant leaves every
 * file at its old or new content (each commit is one SQLite transaction, whole in the WAL or
 * absent from it) and disk_used exact (counted in the same transaction), and nothing is answered
 * as written before it is on disk. While a group is open, a request that read nothing changed
 * since it began still waits for the WAL when commits are not covered yet: it may have seen a
 * group's commit, which is not durable until the group settles.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { totalChanges, type Db } from './storage/dialects/sqlite-open.js';
import { WalSync } from './storage/dialects/wal-sync.js';

export interface DurabilityOptions {
  /**
   * The connection is a second one beside a server's (the admin commands: cli/admin-store.ts):
   * the server's commits are not in this connection's change count and reach the disk only when
   * the server settles them, so `durable()` fsyncs the WAL every time.
   */
  besideServer?: boolean;
}

/** An open group commit: the operations run inside it skip their own settle. */
interface OpenGroup {
  readonly mark: number;
}

export class Durability {
  private readonly wal: WalSync;
  private readonly besideServer: boolean;
  private readonly groups = new AsyncLocalStorage<OpenGroup>();
  /** Groups open now (in any request): while one is, settle checks the WAL even when its own count did not move. */
  private openGroups = 0;

  /**
   * `db` is the SQLite connection, or undefined for a database whose commits are durable by
   * themselves (PostgreSQL: a COMMIT returns once it is flushed), where mark, settle and durable do nothing.
   */
  constructor(
    private readonly db: Db | undefined,
    databaseFile: string,
    options: DurabilityOptions = {},
  ) {
    this.besideServer = options.besideServer ?? false;
    this.wal = new WalSync(`${databaseFile}-wal`);
  }

  /** The connection's change count (SQLite total_changes()): the mark to settle against. */
  mark(): number {
    if (!this.db?.open) return 0;
    return totalChanges(this.db);
  }

  /**
   * `count` (this connection's change count, just read) as a mark of what its commits reach:
   * undefined inside a transaction, whose changes are counted before they commit, and beside a
   * server, whose commits are not counted here at all (then every call fsyncs).
   */
  private committed(db: Db, count: number): number | undefined {
    return this.besideServer || db.inTransaction ? undefined : count;
  }

  /** Waits until whatever changed since `mark` is on disk; resolves at once when nothing did, or when an fsync covered it already. */
  async settle(mark: number): Promise<void> {
    const db = this.db;
    if (!db?.open) return;
    const count = totalChanges(db);
    if (count === mark && this.openGroups === 0) return;
    const committed = this.committed(db, count);
    if (this.wal.covered(committed)) return;
    await this.wal.sync(committed);
  }

  /**
   * Waits until every commit this connection has seen is on disk: its own, and (beside a server)
   * the server's. At once when an fsync since the last change covered them; the first call of a
   * process fsyncs whatever the WAL holds, which may include commits of a killed process that the
   * kernel kept and the disk did not.
   */
  async durable(): Promise<void> {
    const db = this.db;
    if (!db?.open) return;
    const committed = this.committed(db, totalChanges(db));
    if (this.wal.covered(committed)) return;
    await this.wal.sync(committed);
  }

  /** Runs `work` and answers its result only once what it wrote is durable (inside a group: once the group settles). */
  async run<T>(work: () => T | Promise<T>): Promise<T> {
    if (this.groups.getStore()) return work();
    const mark = this.mark();
    try {
      return await work();
    } finally {
      await this.settle(mark);
    }
  }

  /**
   * Runs `work`, whose operations (run() calls, in its async context) commit without waiting for
   * the disk, then waits once until all they wrote is durable: one fsync for many commits. A
   * group inside a group is the outer one's.
   */
  async group<T>(work: () => Promise<T>): Promise<T> {
    if (this.groups.getStore()) return work();
    const open: OpenGroup = { mark: this.mark() };
    this.openGroups += 1;
    try {
      return await this.groups.run(open, work);
    } finally {
      try {
        await this.settle(open.mark);
      } finally {
        this.openGroups -= 1;
      }
    }
  }

  /** fsyncs run so far (tests: several commits share one). */
  get flushes(): number {
    return this.wal.flushes;
  }

  close(): Promise<void> {
    return this.wal.close();
  }
}
