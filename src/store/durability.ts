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
 */
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

export class Durability {
  private readonly wal: WalSync;
  private readonly besideServer: boolean;

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
    if (count === mark) return;
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

  /** Runs `work` and answers its result only once what it wrote is durable. */
  async run<T>(work: () => T | Promise<T>): Promise<T> {
    const mark = this.mark();
    try {
      return await work();
    } finally {
      await this.settle(mark);
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
