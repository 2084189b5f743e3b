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
 */
import { promises as fs, type Stats } from 'node:fs';

export class WalSync {
  private handle: fs.FileHandle | undefined;
  private inode: number | undefined;
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private closed = false;
  /** fsyncs run so far (tests and diagnostics: how many commits shared one). */
  flushes = 0;

  constructor(private readonly walPath: string) {}

  /** Resolves once every transaction committed before this call is on disk. */
  sync(): Promise<void> {
    if (!this.running) return this.start();
    // An fsync under way may have started before the caller's commit: wait for the next one,
    // which every caller arriving meanwhile shares.
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
    const run = this.flush().finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
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
