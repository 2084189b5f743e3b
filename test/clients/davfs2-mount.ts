/**
 * A davfs2 mount for a client suite: the gate (root, a usable /dev/fuse, mount.davfs), a
 * davfs2.conf with the suite's options (`use_locks 1`, `buf_size 64` which davfs2 1.6 needs on
 * Linux >= 6.16), a 0600 secrets file and a cache dir the daemon (which drops to the davfs2 user)
 * can write, all in the suite's temp dir; mount, unmount, and a forced cleanup that stops only the
 * daemon this mount started, by the PID it recorded.
 *
 * The bridge runs in the test's own process, so a suite must never touch the mount itself (a
 * blocking file call would stall the event loop the bridge answers on, and the FUSE request
 * behind it would never be served): every file operation on the mount is a spawned program
 * (`sh`, `sha256Tree`).
 */
import { chmodSync, closeSync, constants, mkdirSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import { describeRun, runProgram, type ProgramRun } from './run-program.js';

/** Where mount.davfs keeps the daemon's PID: /var/run/mount.davfs/<mount point, '/' -> '-'>.pid. */
const PID_DIR = '/var/run/mount.davfs';
export const STEP_TIMEOUT_MS = 120_000;

export interface DavfsGate {
  mountPath: string;
  rsyncPath: string;
  /** vitest's describe when everything is there; otherwise a loudly skipped one (a failure with CI=true). */
  describe: (title: string, body: () => void) => void;
}

/** Root and a usable /dev/fuse, or a loud skip (a failure with CI=true). */
function fuseProblem(): string {
  if (process.getuid?.() !== 0) return `mounting davfs2 needs root (the test runs as uid ${String(process.getuid?.())})`;
  try {
    if (!statSync('/dev/fuse').isCharacterDevice()) return '/dev/fuse is not a character device';
    closeSync(openSync('/dev/fuse', constants.O_RDWR));
  } catch (err) {
    return `/dev/fuse cannot be opened: ${(err as Error).message}`;
  }
  return '';
}

export function requireDavfs(suiteName: string): DavfsGate {
  const mountDavfs = requireBinary('mount.davfs');
  const rsync = requireBinary('rsync');
  const why = fuseProblem();
  if (why) {
    if (process.env.CI === 'true') throw new Error(`${suiteName}: ${why}; CI=true, so this test file fails instead of skipping.`);
    console.warn(`[${suiteName}] SKIPPING the davfs2 mount tests: ${why}. With CI=true they would fail.`);
  }
  const canRun = mountDavfs.isAvailable && rsync.isAvailable && !why;
  return {
    mountPath: mountDavfs.path,
    rsyncPath: rsync.path,
    describe: canRun ? describe : (title, body) => describe.skip(`${title} [skipped: ${why || 'mount.davfs or rsync missing'}]`, body),
  };
}

export function mountedAt(mountPoint: string): boolean {
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .some((line) => line.split(' ')[1] === mountPoint);
}

export { sha256Tree } from './local-tree.js';

export interface DavfsMountOptions {
  mountPath: string;
  /** The collection to mount (with a trailing slash). */
  url: string;
  username: string;
  password: string;
  /** The suite's temp dir; the mount point, cache and config go below it under `name`. */
  tmpDir: string;
  name: string;
  /** Extra davfs2.conf lines. */
  conf?: string[];
}

export class DavfsMount {
  readonly mnt: string;
  private readonly conf: string;
  /** Set when the kernel refused the FUSE mount itself (not the bridge's doing). */
  fuseRefused = '';

  constructor(private readonly options: DavfsMountOptions) {
    const base = path.join(options.tmpDir, options.name);
    // The daemon drops root for the davfs2 user: it must reach the cache dir through the temp dir.
    chmodSync(options.tmpDir, 0o755);
    mkdirSync(base, { recursive: true });
    chmodSync(base, 0o755);
    this.mnt = path.join(base, 'mnt');
    const cache = path.join(base, 'cache');
    mkdirSync(this.mnt, { recursive: true });
    mkdirSync(cache, { recursive: true });
    chmodSync(cache, 0o777);
    const secrets = path.join(base, 'secrets');
    writeFileSync(secrets, `${this.mnt} ${options.username} ${options.password}\n`, { mode: 0o600 });
    this.conf = path.join(base, 'davfs2.conf');
    writeFileSync(
      this.conf,
      ['use_locks 1', 'buf_size 64', `cache_dir ${cache}`, `secrets ${secrets}`, 'ask_auth 0', ...(options.conf ?? []), ''].join('\n'),
    );
  }

  /** mount.davfs; a kernel that refuses FUSE sets `fuseRefused` (a failure with CI=true). */
  async mount(): Promise<ProgramRun> {
    const run = await runProgram(this.options.mountPath, ['-o', `conf=${this.conf}`, this.options.url, this.mnt], { timeoutMs: 60_000 });
    if (run.code !== 0 && /fuse device|fuse kernel file system|coda/i.test(run.stderr)) {
      const dmesg = await runProgram('dmesg', [], { timeoutMs: 10_000 });
      const why = `mount.davfs could not mount through FUSE here\n${describeRun(run)}\n--- dmesg (tail) ---\n${dmesg.stdout.split('\n').slice(-20).join('\n')}`;
      if (process.env.CI === 'true') throw new Error(`${why}\nCI=true, so this fails instead of skipping.`);
      console.warn(`[davfs2] SKIPPING the davfs2 mount tests: ${why}\nWith CI=true they would fail.`);
      this.fuseRefused = run.stderr.trim().split('\n')[0] ?? 'FUSE mount refused';
    }
    return run;
  }

  unmount(): Promise<ProgramRun> {
    return runProgram('umount', [this.mnt], { timeoutMs: STEP_TIMEOUT_MS });
  }

  get isMounted(): boolean {
    return mountedAt(this.mnt);
  }

  /**
   * Unmounts whatever state the suite left; when that fails, stops the daemon this mount started
   * (by its PID file) and detaches lazily. Returns whether the mount point is free (only then
   * may the temp dir be removed: removing it through a live mount would send every delete to
   * the bridge of this very process from a blocking call).
   */
  async cleanup(): Promise<boolean> {
    if (!mountedAt(this.mnt)) return true;
    const run = await this.unmount();
    if (run.code !== 0 || mountedAt(this.mnt)) {
      const pidFile = path.join(PID_DIR, `${this.mnt.replace(/^\/+/, '').replace(/\//g, '-')}.pid`);
      try {
        const pid = Number(readFileSync(pidFile, 'utf8').trim());
        if (Number.isInteger(pid) && pid > 0) process.kill(pid, 'SIGTERM');
      } catch {
        // No PID file: nothing of ours is left running.
      }
      await runProgram('umount', ['-l', this.mnt], { timeoutMs: 30_000 });
    }
    if (mountedAt(this.mnt)) console.warn(`[davfs2] ${this.mnt} is still mounted; leaving its temp dir in place`);
    return !mountedAt(this.mnt);
  }
}
