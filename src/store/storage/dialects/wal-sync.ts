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
 * With a `progress` mark (durability.ts: the connection's change count, known only between
 * transactions) an fsync knows what it covers: a caller whose commits were all counted when the
 * running fsync started shares it rather than queueing the next one, and `covered()` says that a
 * completed one has made everything counted so far durable, so no new fsync is needed.
 */
import { promises as fs, type Stats } from 'node:fs';

export class WalSync {
  private handle: fs.FileHandle | undefined;
  private inode: number | undefined;
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private closed = false;
  /** The progress mark when the running fsync started; undefined when unknown. */
  private runningFrom: number | undefined;
  /** The highest progress mark a completed fsync started at: -1 before the first. */
  private coveredThrough = -1;
  /** fsyncs run so far (tests and diagnostics: how many commits shared one). */
  flushes = 0;

  /**
   * `progress` answers a mark that grows with every commit, or undefined when it cannot tell
   * (then every sync() is a new fsync, or joins the next one).
   */
  constructor(
    private readonly walPath: string,
    private readonly progress: () => number | undefined = () => undefined,
  ) {}

  /** Whether every commit counted by the progress mark now is on disk already. */
  covered(): boolean {
    const now = this.progress();
    return now !== undefined && now <= this.coveredThrough;
  }

  /** Resolves once every transaction committed before this call is on disk. */
  sync(): Promise<void> {
    if (!this.running) return this.start();
    // The fsync under way started after the caller's commits: it covers them.
    const now = this.progress();
    if (now !== undefined && this.runningFrom !== undefined && now <= this.runningFrom) return this.running;
    // It may have started before the caller's commit: wait for the next one, which every caller
    // arriving meanwhile shares.
    this.queued ??= this.running.then(
      () => this.next(),
      () => this.next(),
    );
    return this.queued;
  }

  private next(): Promise<void> {
    this.queued = undefined;
    return this.start();
  }

  private start(): Promise<void> {
    const from = this.progress();
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
    let stat: Stats;
    try {
      stat = await fs.stat(this.walPath);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
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
