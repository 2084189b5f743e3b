/**
 * What the benchmarks share: building driveway, starting and stopping child processes (only
 * ours, by PID), reading a child's memory and I/O counters from /proc, the store's API calls (docs/api.md)
 * a bench needs to seed data (login, users, folders, two-step uploads), random source files,
 * timing, medians and table printing, and the run frame that removes every temp file whatever
 * happens (error, signal, overall deadline).
 *
 * It must not import anything from src/: a bench measures the servers from the outside,
 * through their HTTP interfaces, as any client would.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes, randomFillSync } from 'node:crypto';
import { closeSync, createReadStream, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, realpathSync, rmSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { request, type Dispatcher } from 'undici';

export const MiB = 1024 * 1024;
/** The store's selector for the latest revision in download URLs (docs/api.md). */
export const LATEST_VERSION = '999999999999999';
/** How long a server may take to start; BENCH_STARTUP_TIMEOUT_MS raises it on a machine whose cores are all taken. */
export const STARTUP_TIMEOUT_MS = positiveIntEnv('BENCH_STARTUP_TIMEOUT_MS', 30_000);

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A positive integer from the environment, or the default; anything else stops the bench. */
export function positiveIntEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return value;
}

/** BENCH_FILE_MB: size of the big file in MiB (default 1 GiB), shared by every bench. */
export function fileSizeMiB(): number {
  return positiveIntEnv('BENCH_FILE_MB', 1024);
}

/** The workload sizes both DAV benches read from the environment, with the defaults. */
export interface WorkloadKnobs {
  /** BENCH_FILE_MB: the big file, in MiB. */
  sizeMiB: number;
  sizeBytes: number;
  /** BENCH_ROUNDS: interleaved rounds per workload. */
  rounds: number;
  /** BENCH_LOAD_SECONDS: length of each PROPFIND load run. */
  loadSeconds: number;
  /** BENCH_DIR_ENTRIES: entries of the big folder that PROPFIND lists. */
  dirEntries: number;
  /** BENCH_SMALL_FILES: 4 KiB files uploaded by parallel clients. */
  smallFiles: number;
}

export function workloadKnobs(): WorkloadKnobs {
  const sizeMiB = fileSizeMiB();
  return {
    sizeMiB,
    sizeBytes: sizeMiB * MiB,
    rounds: positiveIntEnv('BENCH_ROUNDS', 3),
    loadSeconds: positiveIntEnv('BENCH_LOAD_SECONDS', 10),
    dirEntries: positiveIntEnv('BENCH_DIR_ENTRIES', 10_000),
    smallFiles: positiveIntEnv('BENCH_SMALL_FILES', 2000),
  };
}

/** `npm run build` in `root` (this checkout by default), so the children run the code as it is there. */
export function buildDriveway(label: string, root = repoRoot): void {
  console.log(`${label}: building driveway in ${root} (npm run build)`);
  const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) throw new Error(`npm run build in ${root} failed (exit ${build.status})`);
}

/** Random content, so no layer can compress or deduplicate it; returns its sha256. */
export function writeRandomFile(file: string, sizeBytes: number): string {
  const hash = createHash('sha256');
  const chunk = Buffer.allocUnsafe(4 * MiB);
  const fd = openSync(file, 'w');
  try {
    for (let written = 0; written < sizeBytes; ) {
      const part = chunk.subarray(0, Math.min(chunk.length, sizeBytes - written));
      randomFillSync(part);
      hash.update(part);
      for (let offset = 0; offset < part.length; ) offset += writeSync(fd, part, offset);
      written += part.length;
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

/** `length` bytes of `file` from `offset`, for checking a range answer. */
export function readSlice(file: string, offset: number, length: number): Buffer {
  const out = Buffer.alloc(length);
  const fd = openSync(file, 'r');
  try {
    for (let done = 0; done < length; ) {
      const n = readSync(fd, out, done, length - done, offset + done);
      if (n === 0) break;
      done += n;
    }
  } finally {
    closeSync(fd);
  }
  return out;
}

export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

export interface Measure {
  label: string;
  bytes: number;
  seconds: number;
}

export async function timed(label: string, bytes: number, work: () => Promise<void>): Promise<Measure> {
  const start = process.hrtime.bigint();
  await work();
  return { label, bytes, seconds: Number(process.hrtime.bigint() - start) / 1e9 };
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Round r runs the systems starting at index r: each leads once every few rounds. */
export function rotate<T>(items: readonly T[], round: number): T[] {
  const k = round % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** A figure with `digits` decimals; a dash when there is none. */
export function fmt(value: number | undefined, digits = 1): string {
  if (value === undefined || Number.isNaN(value)) return '–';
  return value.toFixed(digits);
}

/** "median m (min a, max b, n=k)" of some samples. */
export function spread(values: readonly number[], digits = 1): string {
  if (values.length === 0) return 'no samples';
  return `median ${fmt(median(values), digits)} (min ${fmt(Math.min(...values), digits)}, max ${fmt(Math.max(...values), digits)}, n=${values.length})`;
}

export function catToDevNull(file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const cat = spawn('sh', ['-c', 'cat "$1" > /dev/null', 'sh', file], { stdio: 'inherit' });
    cat.on('error', reject);
    cat.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`cat exited with ${code}`))));
  });
}

// ---------------------------------------------------------------- /proc readings

/** A `kB` field of /proc/<pid>/status (VmHWM, VmRSS) in KiB, or undefined when unreadable. */
export function procStatusKiB(pid: number, field: string): number | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match ? Number(match[1]) : undefined;
}

/**
 * Resets the process's peak RSS (VmHWM) to its current RSS (`5` into clear_refs, Linux >= 4.0),
 * so a later VmHWM is the peak of what came after. False when the kernel refused.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Kernel clock ticks per second (USER_HZ): 100 on every Linux architecture node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

/** CPU time (user + system) a process has used so far, in ms (10 ms resolution), or undefined when gone. */
export function procCpuMs(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return ((utime + stime) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** Highest VmHWM/VmRSS seen for a process, read from /proc every few milliseconds. */
export class RssWatcher {
  peakKiB = 0;
  currentKiB = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly pid: number) {
    this.sample();
    this.timer = setInterval(() => this.sample(), 20);
  }

  sample(): void {
    const rss = procStatusKiB(this.pid, 'VmRSS');
    const hwm = procStatusKiB(this.pid, 'VmHWM');
    // The process is gone when both are missing; the peak so far stands.
    if (rss !== undefined) this.currentKiB = rss;
    this.peakKiB = Math.max(this.peakKiB, rss ?? 0, hwm ?? 0);
  }

  /** Forgets the peak so far (and the kernel's, when allowed): what follows is measured alone. */
  restart(): boolean {
    const reset = resetPeakRss(this.pid);
    this.peakKiB = 0;
    this.sample();
    return reset;
  }

  /** Peak in MiB so far; keeps watching. */
  peakMiB(): number {
    this.sample();
    return this.peakKiB / 1024;
  }

  stop(): number {
    this.sample();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    return this.peakKiB / 1024;
  }
}

// ---------------------------------------------------------------- child processes

export interface RunningChild {
  child: ChildProcess;
  pid: number;
  /** Where the child's stdout and stderr go. */
  logFile: string;
  /** The readiness match (e.g. the URL line the child printed). */
  match: RegExpExecArray | undefined;
}

export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** stdout and stderr are written here: a chatty child never blocks on a pipe we read late. */
  logFile: string;
  /** Ready once this matches the log... */
  readyLine?: RegExp;
  /** ...or once this resolves true (polled). */
  readyProbe?: () => Promise<boolean>;
  timeoutMs?: number;
}

export function tailOf(file: string, bytes = 4000): string {
  try {
    const text = readFileSync(file, 'utf8');
    return text.slice(-bytes);
  } catch {
    return '';
  }
}

/** Spawns a child whose output goes to a file, and waits until it is ready (bounded). */
export async function startChild(spec: ChildSpec): Promise<RunningChild> {
  const fd = openSync(spec.logFile, 'w');
  let child: ChildProcess;
  try {
    child = spawn(spec.command, spec.args, { cwd: repoRoot, env: spec.env, stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(`${spec.name} exited early (${code ?? signal})`));
    child.once('error', (err) => resolve(`${spec.name} could not start: ${err.message}`));
  });
  let isExited = false;
  let exitReason = '';
  void exited.then((reason) => {
    isExited = true;
    exitReason = reason;
  });
  const deadline = Date.now() + (spec.timeoutMs ?? STARTUP_TIMEOUT_MS);
  while (Date.now() < deadline) {
    if (isExited) throw new Error(`${exitReason}:\n${tailOf(spec.logFile)}`);
    if (spec.readyLine) {
      const match = spec.readyLine.exec(tailOf(spec.logFile, 64 * 1024));
      if (match) return { child, pid: child.pid as number, logFile: spec.logFile, match };
    } else if (spec.readyProbe && (await spec.readyProbe().catch(() => false))) {
      return { child, pid: child.pid as number, logFile: spec.logFile, match: undefined };
    }
    await sleep(50);
  }
  await stopChild(child);
  throw new Error(`${spec.name} was not ready within ${spec.timeoutMs ?? STARTUP_TIMEOUT_MS} ms:\n${tailOf(spec.logFile)}`);
}

export interface DrivewaySpec {
  /** `all` is what `npm start` runs: store and bridge in one process, no --only flag. */
  part: 'all' | 'store' | 'bridge';
  /** The checkout whose dist/main.js runs (this one by default; another for a baseline build). */
  root?: string;
  dataDir: string;
  logFile: string;
  env?: Record<string, string>;
  /** Extra node flags before the script, e.g. --cpu-prof. */
  nodeArgs?: string[];
}

/**
 * `node <product flags> dist/main.js [--only <part>]` on loopback, as `npm start` runs it (any
 * free port unless spec.env names ports); resolves with its base URL (no trailing slash): the
 * store's for `store`, the WebDAV one for `bridge` and `all`.
 */
export async function startDriveway(spec: DrivewaySpec): Promise<RunningChild & { baseUrl: string }> {
  // The bridge alone opens its state file in the data dir without creating the folder.
  mkdirSync(spec.dataDir, { recursive: true, mode: 0o700 });
  const running = await startChild({
    name: spec.part === 'all' ? 'driveway' : `driveway ${spec.part}`,
    command: process.execPath,
    args: [
      ...(spec.nodeArgs ?? []),
      path.join(spec.root ?? repoRoot, 'dist/main.js'),
      ...(spec.part === 'all' ? [] : ['--only', spec.part]),
    ],
    env: {
      PATH: process.env.PATH,
      DRIVEWAY_HOST: '127.0.0.1',
      DRIVEWAY_STORE_PORT: '0',
      DRIVEWAY_DAV_PORT: '0',
      DRIVEWAY_DATA_DIR: spec.dataDir,
      DRIVEWAY_LOG_LEVEL: 'warn',
      ...spec.env,
    },
    logFile: spec.logFile,
    readyLine: spec.part === 'store' ? /driveway store:\s+(http:\/\/\S+)/ : /driveway WebDAV:\s+(http:\/\/\S+?)\/?\s/,
  });
  return { ...running, baseUrl: (running.match?.[1] as string).replace(/\/$/, '') };
}

/** SIGTERM to our child by PID; SIGKILL after 10 s. */
export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return Promise.resolve();
  const pid = child.pid;
  return new Promise((resolve) => {
    const force = setTimeout(() => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }, 10_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      clearTimeout(force);
      resolve();
    }
  });
}

/** A loopback port nobody listens on right now. */
export interface ClientResult {
  code: number | null;
  stdout: string;
  stderr: string;
  wallMs: number;
}

const liveClients = new Set<ChildProcess>();

/** Runs a client program (curl, wrk, rclone) to its end, SIGKILLed after `timeoutMs`; its output is kept in memory (small). */
export function runClient(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<ClientResult> {
  return new Promise((resolve, reject) => {
    const start = nowMs();
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    liveClients.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      liveClients.delete(child);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      liveClients.delete(child);
      resolve({ code, stdout, stderr, wallMs: nowMs() - start });
    });
  });
}

/** Stops every client program still running (a bench's cleanup step). */
export function killClients(): void {
  for (const child of liveClients) if (child.pid !== undefined) child.kill('SIGKILL');
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------- the store's API calls (docs/api.md)

export async function json(
  dispatcher: Dispatcher,
  url: string,
  options: { method?: 'GET' | 'POST' | 'PUT'; token?: string; body?: unknown } = {},
): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await request(url, {
    dispatcher,
    method: options.method ?? 'GET',
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.body.text();
  if (response.statusCode < 200 || response.statusCode > 299) {
    throw new Error(`${options.method ?? 'GET'} ${new URL(url).pathname.replace(/\/upload\/.*/, '/upload/<token>')} answered ${response.statusCode}: ${text}`);
  }
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

export function stringField(body: Record<string, unknown>, key: string): string {
  const value = body[key];
  if (typeof value !== 'string' || value === '') throw new Error(`response has no ${key}: ${JSON.stringify(body).slice(0, 500)}`);
  return value;
}

export interface StoreSession {
  token: string;
  fileAccessKey: string;
}

export async function storeLogin(dispatcher: Dispatcher, base: string, username: string, password: string): Promise<StoreSession> {
  const session = await json(dispatcher, `${base}/auth`, { method: 'POST', body: { username, password } });
  return { token: stringField(session, 'token'), fileAccessKey: stringField(session, 'fileaccesskey') };
}

/** The unprivileged user the benches log in as, on the store and on the bridge. */
export const BENCH_USER = { email: 'bench@example.test', password: 'Bench-Passw0rd1' } as const;

/** Creates BENCH_USER through the admin API (the admin's password is the one the store started with) and logs in as it. */
export async function createBenchUser(dispatcher: Dispatcher, base: string, adminPassword: string): Promise<StoreSession> {
  const admin = await storeLogin(dispatcher, base, 'admin', adminPassword);
  await json(dispatcher, `${base}/api/admin/users`, {
    method: 'POST',
    token: admin.token,
    body: { fullname: 'Bench User', email: BENCH_USER.email, password: BENCH_USER.password, disk_quota: 0, is_active: true, is_admin: false },
  });
  return storeLogin(dispatcher, base, BENCH_USER.email, BENCH_USER.password);
}

export interface DirEntry {
  uuid: string;
  name: string;
  type: string;
  size: number;
}

export async function storeDirlist(dispatcher: Dispatcher, base: string, token: string, folder: string): Promise<DirEntry[]> {
  const listing = await json(dispatcher, `${base}/api/nodes/${encodeURIComponent(folder)}/dirlist`, { token });
  if (!Array.isArray(listing.data)) throw new Error(`dirlist of ${folder} has no data array`);
  return listing.data as DirEntry[];
}

/** Creates `name` inside `parent` and returns its uuid (new_dir answers 204 without one). */
export async function storeMkdir(dispatcher: Dispatcher, base: string, token: string, parent: string, name: string): Promise<string> {
  await json(dispatcher, `${base}/api/nodes/${encodeURIComponent(parent)}`, { method: 'POST', token, body: { new_dir: name } });
  const found = (await storeDirlist(dispatcher, base, token, parent)).find((e) => e.name === name);
  if (!found) throw new Error(`folder ${name} not listed after new_dir`);
  return found.uuid;
}

/** multipart/form-data with one `file` part; the bytes come from `source` as they are sent. */
export function multipartOf(name: string, source: Buffer | { file: string; sizeBytes: number }): { body: Readable | Buffer; contentType: string; length: number } {
  const boundary = `----driveway-bench-${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const contentType = `multipart/form-data; boundary=${boundary}`;
  if (Buffer.isBuffer(source)) return { body: Buffer.concat([head, source, tail]), contentType, length: head.length + source.length + tail.length };
  const { file, sizeBytes } = source;
  async function* parts(): AsyncGenerator<Buffer> {
    yield head;
    for await (const chunk of createReadStream(file, { highWaterMark: MiB })) yield chunk as Buffer;
    yield tail;
  }
  return { body: Readable.from(parts()), contentType, length: head.length + sizeBytes + tail.length };
}

/** The two-step upload of docs/api.md "Upload": a token for `folder` (or the file, for a new revision), then the multipart POST. */
export async function storeUpload(
  dispatcher: Dispatcher,
  base: string,
  token: string,
  folder: string,
  name: string,
  source: Buffer | { file: string; sizeBytes: number },
): Promise<void> {
  const uploadToken = stringField(await json(dispatcher, `${base}/api/nodes/${encodeURIComponent(folder)}/upload`, { token }), 'token');
  const form = multipartOf(name, source);
  const response = await request(`${base}/upload/${encodeURIComponent(uploadToken)}`, {
    dispatcher,
    method: 'POST',
    headers: { 'content-type': form.contentType, 'content-length': String(form.length) },
    body: form.body,
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`POST /upload/<token> of ${name} answered ${response.statusCode}: ${text}`);
}

export function storeDownloadUrl(base: string, session: StoreSession, uuid: string, name: string): string {
  return `${base}/resources/auth/download/${encodeURIComponent(session.fileAccessKey)}/${encodeURIComponent(uuid)}/${LATEST_VERSION}/${encodeURIComponent(name)}`;
}

/** Runs `work(i)` for i in [0, count) with at most `parallel` at once; the first failure stops the rest. */
export async function runBounded(count: number, parallel: number, work: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: unknown;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < count) {
      const index = next++;
      try {
        await work(index);
      } catch (err) {
        failure ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
  if (failure !== undefined) throw failure;
}

// ---------------------------------------------------------------- WebDAV answers

/** A PROPFIND body asking for every property, as Finder and davfs2 do. */
export const PROPFIND_ALLPROP = '<?xml version="1.0" encoding="utf-8"?>\n<D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>';

/** The <response> elements of a multistatus answer, whatever prefix the server gives DAV:. */
export function countResponses(xml: string): number {
  return (xml.match(/<([A-Za-z][\w.-]*:)?response[\s>]/g) ?? []).length;
}

// ---------------------------------------------------------------- output

export function row(cells: string[], widths: number[]): string {
  return cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join('  ');
}

/** Prints rows as a table whose columns fit their widest cell; the first column is left-aligned. */
export function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  console.log(row(header, widths));
  console.log(row(widths.map((w) => '-'.repeat(w)), widths));
  for (const r of rows) console.log(row(r, widths));
}

// ---------------------------------------------------------------- the run frame

let interruptedBy: NodeJS.Signals | undefined;

/** True once SIGINT/SIGTERM arrived: requests in flight then fail because the children stop, not as a finding. */
export function isInterrupted(): boolean {
  return interruptedBy !== undefined;
}

export interface BenchRun {
  /** A fresh temp folder, removed at the end. */
  tmp: string;
  /** Registers a cleanup step; steps run in reverse order, once, whatever happens. */
  onCleanup(step: () => Promise<void> | void): void;
}

/**
 * Runs a bench inside a temp folder with a deadline; on error, SIGINT/SIGTERM or the deadline
 * it runs the cleanup steps (stopping our children) and removes the folder.
 */
export async function withBenchRun(label: string, timeoutMs: number, body: (run: BenchRun) => Promise<void>): Promise<void> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'driveway-bench-'));
  const steps: Array<() => Promise<void> | void> = [];
  let isCleanedUp = false;
  const cleanup = async (): Promise<void> => {
    if (isCleanedUp) return;
    isCleanedUp = true;
    for (const step of steps.reverse()) {
      try {
        await step();
      } catch (err) {
        console.error(`${label}: cleanup step failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    rmSync(tmp, { recursive: true, force: true });
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    interruptedBy = signal;
    console.error(`${label}: ${signal}, stopping the children and removing ${tmp}`);
    void cleanup().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const deadline = setTimeout(() => {
    console.error(`${label}: gave up after ${Math.round(timeoutMs / 60_000)} minutes`);
    void cleanup().finally(() => process.exit(1));
  }, timeoutMs);
  deadline.unref();
  try {
    await body({ tmp, onCleanup: (step) => steps.push(step) });
  } finally {
    clearTimeout(deadline);
    await cleanup();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
}

// ---------------------------------------------------------------- CPU profiles

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Where a frame's code lives: our file under dist/, a package, node itself, or V8's pseudo-frames. */
function areaOf(url: string, functionName: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : `(${functionName || 'native'})`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  if (url.startsWith('node:')) return url;
  const ours = /\/dist\/(.+)$/.exec(url);
  if (ours) return ours[1] as string;
  return url;
}

/**
 * A text summary of a .cpuprofile (node --cpu-prof): wall time sampled, self time by area
 * (file, package, node module, GC/idle) and the functions with the most self and inclusive time,
 * also among driveway's own functions alone.
 */
export function summarizeCpuProfile(file: string, top = 15): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const keyOf = (node: ProfileNode): string => {
    const { functionName, url, lineNumber } = node.callFrame;
    return `${functionName || '(anonymous)'} ${areaOf(url, functionName)}:${lineNumber + 1}`;
  };
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const areas = new Map<string, number>();
  let totalUs = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const node = byId.get(id);
    if (!node) return;
    totalUs += delta;
    self.set(keyOf(node), (self.get(keyOf(node)) ?? 0) + delta);
    const area = areaOf(node.callFrame.url, node.callFrame.functionName);
    areas.set(area, (areas.get(area) ?? 0) + delta);
    const seen = new Set<string>();
    for (let cursor: number | undefined = id; cursor !== undefined; cursor = parent.get(cursor)) {
      const frame = byId.get(cursor);
      if (!frame) break;
      const key = keyOf(frame);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + delta);
    }
  });
  const busyUs = totalUs - (areas.get('(idle)') ?? 0);
  const pct = (us: number): string => `${((100 * us) / Math.max(1, totalUs)).toFixed(1).padStart(5)}%`;
  const ms = (us: number): string => `${(us / 1000).toFixed(0).padStart(7)} ms`;
  const list = (map: Map<string, number>, skipPseudo: boolean): string[] =>
    [...map]
      .filter(([key]) => !(skipPseudo && /^\((root|program|idle|garbage collector)\)/.test(key)))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, us]) => `  ${ms(us)} ${pct(us)}  ${key}`);
  return [
    `${path.basename(file)}: ${(totalUs / 1e6).toFixed(2)} s sampled, ${(busyUs / 1e6).toFixed(2)} s not idle`,
    'self time by area:',
    ...list(areas, false),
    'self time by function:',
    ...list(self, true),
    'inclusive time by function:',
    ...list(inclusive, true),
    "inclusive time by function, driveway's own code (dist/):",
    ...list(new Map([...inclusive].filter(([key]) => /^\S+ (store|bridge|common|store-client)\//.test(key))), true),
  ].join('\n');
}

// ---------------------------------------------------------------- builds

/** Exports `ref` into <tmp>/baseline, links this checkout's node_modules and builds it (BENCH_BASELINE_REF). */
export function prepareBaseline(run: BenchRun, ref: string, label: string): { root: string; commit: string } {
  const resolved = spawnSync('git', ['-C', repoRoot, 'rev-parse', '--short', '--verify', `${ref}^{commit}`], { encoding: 'utf8' });
  if (resolved.status !== 0) throw new Error(`BENCH_BASELINE_REF ${ref} is not a commit: ${resolved.stderr.trim()}`);
  const commit = resolved.stdout.trim();
  const root = path.join(run.tmp, 'baseline');
  mkdirSync(root);
  const exported = spawnSync('sh', ['-c', 'git -C "$1" archive --format=tar "$2" | tar -x -C "$3"', 'sh', repoRoot, commit, root], { stdio: 'inherit' });
  if (exported.status !== 0) throw new Error(`git archive ${commit} failed`);
  symlinkSync(realpathSync(path.join(repoRoot, 'node_modules')), path.join(root, 'node_modules'));
  buildDriveway(`${label} baseline ${commit}`, root);
  return { root, commit };
}

/** Writes bench/raw-node.ts as plain JavaScript, so the floor runs in node with no loader. */
export function transpileFloor(tmp: string): string {
  const out = path.join(tmp, 'raw-node.mjs');
  const source = readFileSync(path.join(repoRoot, 'bench/raw-node.ts'), 'utf8');
  const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 } });
  writeFileSync(out, outputText);
  return out;
}
