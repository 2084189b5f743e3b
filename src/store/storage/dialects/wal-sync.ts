/**
 * Group commit for the store's SQLite database. The connection runs in WAL mode with
 * `synchronous = NORMAL`: a commit appends its frames to the `-wal` file without an fsync on the
 * event loop (with FULL, better-sqlite3 fsyncs inside every commit, blocking every other request
 * for the length of a disk flush). Durability is restored before anything is answered: a request
 * whose work changed the database waits for `sync()`, an fsync of the WAL file run on libuv's
 * thread pool; concurrent writers share one fsync. Every commit made before an fsync starts is on
 * disk when it completes, which is what FULL guarantees per commit, once per batch instead.
 *
 * Checkpoints keep their own durability under NORMAL (SQLite fsyncs the WAL before and the
 * database after each one). fsync flushes a file, not a descriptor: our descriptor on the `-wal`
 * file covers frames SQLite wrote through its own. The file keeps its inode while the connection
 * is open (SQLite resets it in place); a different inode is reopened, a missing file means nothing
 * is waiting in a WAL.
 *
 * A caller may say how far its commits go, as a mark that grows with every commit (durability.ts:
 * the connection's change count, known only between transactions). Then an fsync knows what it
 * covers: a caller whose mark is no higher than the one the running fsync started with shares it
 * rather than queueing the next one, and `covered(mark)` says that a completed fsync has made
 * everything up to the mark durable already.
 */
import { promises as fs, statSync } from 'node:fs';

export class WalSync {
  private handle: fs.FileHandle | undefined;
  private inode: number | undefined;
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private closed = false;
  /** The mark the running fsync is known to cover (its callers' highest); undefined when none said. */
  private runningFrom: number | undefined;
  /** The same for the queued one. */
  private queuedFrom: number | undefined;
  /** The highest mark a completed fsync covered: -1 before the first. */
  private coveredThrough = -1;
  /** fsyncs run so far (tests and diagnostics: how many commits shared one). */
  flushes = 0;

  constructor(private readonly walPath: string) {}

  /** Whether the commits up to `mark` are on disk already (false for an unknown mark). */
  covered(mark: number | undefined): boolean {
    return mark !== undefined && mark <= this.coveredThrough;
  }

  /** Resolves once every transaction committed before this call (up to `mark`, if given) is on disk. */
  sync(mark?: number): Promise<void> {
    if (!this.running) return this.start(mark);
    // The fsync under way was started for commits at least this far: it covers the caller's.
    if (mark !== undefined && this.runningFrom !== undefined && mark <= this.runningFrom) return this.running;
    // It may have started before the caller's commit: wait for the next one, which every caller
    // arriving meanwhile shares (and which covers at least the highest of their marks).
    if (mark !== undefined && (this.queuedFrom === undefined || mark > this.queuedFrom)) this.queuedFrom = mark;
    this.queued ??= this.running.then(
      () => this.next(),
      () => this.next(),
    );
    return this.queued;
  }

  private next(): Promise<void> {
    this.queued = undefined;
    const from = this.queuedFrom;
    this.queuedFrom = undefined;
    return this.start(from);
  }

  private start(from: number | undefined): Promise<void> {
    const run = this.flush()
      .then(() => {
        if (from !== undefined && from > this.coveredThrough) this.coveredThrough = from;
      })
      .finally(() => {
        if (this.running === run) {
          this.running = undefined;
          this.runningFrom = undefined;
        }
      });
    this.running = run;
    this.runningFrom = from;
    return run;
  }

  private async flush(): Promise<void> {
    if (this.closed) return;
    // A stat on the event loop: the WAL is open, its inode cached, so it takes microseconds,
    // where the thread pool's round trip cost more CPU than it and held the fsync back by one hop.
    const stat = statSync(this.walPath, { throwIfNoEntry: false });
    if (!stat) return;
    if (!this.handle || this.inode !== stat.ino) {
      await this.handle?.close().catch(() => undefined);
      this.handle = await fs.open(this.walPath, 'r');
      this.inode = (await this.handle.stat()).ino;
    }
    await this.handle.sync();
    this.flushes += 1;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.running?.catch(() => undefined);
    await this.handle?.close().catch(() => undefined);
    this.handle = undefined;
  }
}
