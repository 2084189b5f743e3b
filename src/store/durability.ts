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
 */
import { totalChanges, type Db } from './storage/dialects/sqlite-open.js';
import { WalSync } from './storage/dialects/wal-sync.js';

export class Durability {
  private readonly wal: WalSync;

  /**
   * `db` is the SQLite connection, or undefined for a database whose commits are durable by
   * themselves (PostgreSQL: a COMMIT returns once it is flushed), where mark and settle do nothing.
   */
  constructor(
    private readonly db: Db | undefined,
    databaseFile: string,
  ) {
    this.wal = new WalSync(`${databaseFile}-wal`);
  }

  /** The connection's change count (SQLite total_changes()): the mark to settle against. */
  mark(): number {
    if (!this.db?.open) return 0;
    return totalChanges(this.db);
  }

  /** Waits until whatever changed since `mark` is on disk; resolves at once when nothing did. */
  async settle(mark: number): Promise<void> {
    if (this.db?.open && this.mark() !== mark) await this.wal.sync();
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
