/**
 * GNOME's gio (GVfs's DAV backend, what GNOME Files and GNOME Online Accounts mount) on the
 * client's view `/remote.php/webdav/` (issue 30, Tests: "gio on /remote.php/webdav/";
 * docs/client-quirks.md §5c). One shell script runs inside `dbus-run-session` (a private session
 * bus on which gvfsd starts on demand; the mount lives only as long as that bus), with a fresh
 * HOME and XDG_RUNTIME_DIR: `gio mount` answering its User/Password prompts on stdin, then list,
 * info, copy up, cat, rename, move, mkdir, remove, and `gio mount -u`. Every gio command has its
 * own `timeout`; the requests go through a recording proxy; the store is read afterwards through
 * its client. Any GVfs daemon still carrying this run's XDG_RUNTIME_DIR afterwards is stopped by PID.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { groupAdmin } from '../helpers/groups.js';
import { entryNamed, uploadFile } from '../helpers/seed.js';
import { requireBinary } from '../helpers/require-binary.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { startDavRecorder, type DavRecorder, type RecordedExchange } from './dav-recorder.js';
import { describeRun, runProgram, type ProgramRun } from './run-program.js';
import { storeEntry, storeList, storeRead } from './store-state.js';

const gio = requireBinary('gio');
const dbusRunSession = requireBinary('dbus-run-session');
const gvfsdDav = requireBinary('gvfsd-dav', { candidates: ['/usr/libexec/gvfsd-dav', '/usr/lib/gvfs/gvfsd-dav'], searchPath: false });
/** Each gio command's own limit inside the script, and the whole script's. */
const STEP_TIMEOUT_S = 30;
const RUN_TIMEOUT_MS = 240_000;
const TEAM = 'Crew';

/**
 * The steps, each announced by a `@@ <name>` line and closed by `@@ rc <status>`. The password
 * reaches gio mount on stdin from the environment, never on a command line.
 */
const SCRIPT = String.raw`
set -u
step() { name=$1; shift; echo "@@ $name"; "$@" 2>&1; echo "@@ rc $?"; }
g() { timeout -k 2 ${STEP_TIMEOUT_S} gio "$@"; }
mount_it() { printf '%s\n%s\n' "$DAV_USER" "$DAV_PASSWORD" | g mount "$ROOT/"; }
cat_back() { g cat "$ROOT/home/hello.bin" > "$LOCAL/back.bin"; }
step mount mount_it
step list-root g list "$ROOT/"
step list-groups g list "$ROOT/groups/"
step list-group g list "$ROOT/groups/$TEAM/"
step info-home g info "$ROOT/home/"
step copy-up g copy "$LOCAL/hello.bin" "$ROOT/home/hello.bin"
step cat cat_back
step mkdir g mkdir "$ROOT/home/gio-dir"
step rename g rename "$ROOT/home/hello.bin" renamed.bin
step move g move "$ROOT/home/renamed.bin" "$ROOT/home/gio-dir/moved.bin"
step copy-group g copy "$LOCAL/second.txt" "$ROOT/groups/$TEAM/home/from-gio.txt"
step copy-second g copy "$LOCAL/second.txt" "$ROOT/home/second.txt"
step remove g remove "$ROOT/home/second.txt"
step remove-seeded g remove "$ROOT/home/seeded.txt"
step mkdir-top g mkdir "$ROOT/loose"
step list-dir g list -l "$ROOT/home/gio-dir/"
step unmount g mount -u "$ROOT/"
`;

interface Step {
  rc: number | undefined;
  output: string;
}

/** The script's output cut into its steps. */
function stepsOf(stdout: string): Map<string, Step> {
  const steps = new Map<string, Step>();
  let current: { name: string; lines: string[] } | undefined;
  for (const line of stdout.split('\n')) {
    const marker = /^@@ (\S+)(?: (\d+))?$/.exec(line);
    if (marker && marker[1] !== 'rc') {
      current = { name: marker[1] as string, lines: [] };
    } else if (marker && current) {
      steps.set(current.name, { rc: Number(marker[2]), output: current.lines.join('\n') });
      current = undefined;
    } else if (current) {
      current.lines.push(line);
    }
  }
  if (current) steps.set(current.name, { rc: undefined, output: current.lines.join('\n') });
  return steps;
}

/** PIDs of processes whose environment holds `marker` (this run's own XDG_RUNTIME_DIR). */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`).includes(marker)) found.push(Number(name));
    } catch {
      // Gone already, or another user's: not ours.
    }
  }
  return found;
}

/** The first of the programs this file needs that is missing (its skip or CI failure says which), else gio. */
const gate = [gio, dbusRunSession, gvfsdDav].find((program) => !program.isAvailable) ?? gio;

gate.describe('gio (GVfs dav backend) on /remote.php/webdav/', () => {
  let f: BridgeFixture;
  let recorder: DavRecorder;
  let tmp: ReturnType<typeof makeTmpDir>;
  let user: DavUser;
  let runtimeDir: string;
  let local: string;
  let groupId: string;
  let run: ProgramRun;
  let steps: Map<string, Step>;
  const hello = randomBytes(70_000);
  const explain = () => `${describeRun(run)}\n--- exchanges ---\n${recorder.describe()}`;
  /** A step's output after checking it ran and exited with `rc`. */
  const stepOutput = (name: string, rc = 0): string => {
    const found = steps.get(name);
    expect(found, `the script never ran step ${name}\n${explain()}`).toBeDefined();
    expect(found?.rc, `step ${name}\n${explain()}`).toBe(rc);
    return found?.output ?? '';
  };
  const sent = (method: string, pathPattern: RegExp) => recorder.exchanges.filter((e) => e.method === method && pathPattern.test(e.path));

  beforeAll(async () => {
    f = await bridgeFixture();
    recorder = await startDavRecorder(f.davUrl);
    user = await f.newDavUser();
    await uploadFile(f.client, user.session, 'home', 'seeded.txt', 'put there through the store\n');
    const ga = groupAdmin(f.client, f.admin);
    groupId = await ga.group(TEAM, { quotaBytes: 1_000_000 });
    await ga.member(groupId, user.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    tmp = makeTmpDir('driveway-gio-');
    const home = path.join(tmp.dir, 'home');
    runtimeDir = path.join(tmp.dir, 'runtime');
    local = path.join(tmp.dir, 'local');
    mkdirSync(home);
    mkdirSync(runtimeDir, { mode: 0o700 });
    mkdirSync(local);
    writeFileSync(path.join(local, 'hello.bin'), hello);
    writeFileSync(path.join(local, 'second.txt'), 'short-lived\n');
    const port = new URL(recorder.url).port;
    run = await runProgram(dbusRunSession.path, ['--', 'sh', '-c', SCRIPT], {
      cwd: tmp.dir,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        XDG_RUNTIME_DIR: runtimeDir,
        XDG_CONFIG_HOME: path.join(home, '.config'),
        XDG_CACHE_HOME: path.join(home, '.cache'),
        XDG_DATA_HOME: path.join(home, '.local', 'share'),
        LANG: 'C.UTF-8',
        TZ: 'UTC',
        // No FUSE view of the mount under XDG_RUNTIME_DIR/gvfs, and none of the volume monitors
        // (udisks2, MTP, GOA...) the session bus would otherwise start for every gio command.
        GVFS_DISABLE_FUSE: '1',
        GVFS_REMOTE_VOLUME_MONITOR_IGNORE: '1',
        ROOT: `dav://127.0.0.1:${port}/remote.php/webdav`,
        LOCAL: local,
        TEAM,
        DAV_USER: user.email,
        DAV_PASSWORD: user.password,
      },
      timeoutMs: RUN_TIMEOUT_MS,
    });
    steps = stepsOf(run.stdout);
  }, RUN_TIMEOUT_MS + 60_000);

  afterAll(async () => {
    // gvfsd and its backends end with their bus; any left (after a timeout) are this run's by their environment.
    const leftovers = runtimeDir ? processesWith(runtimeDir) : [];
    if (leftovers.length > 0) console.warn(`gio test: stopping processes left from its session bus: ${leftovers.join(' ')}`);
    for (const pid of leftovers) process.kill(pid, 'SIGTERM');
    await recorder?.close();
    await f?.close();
    tmp?.remove();
  });

  it('runs the whole script in time and unmounts at the end', () => {
    expect(run.timedOut, explain()).toBe(false);
    expect(run.code, explain()).toBe(0);
    stepOutput('unmount');
  });

  it('mounts after asking only User and Password on stdin, the realm named driveway', () => {
    const output = stepOutput('mount');
    expect(output, explain()).toContain('Enter password for “driveway”');
    expect(output, explain()).toContain('User: Password:');
    expect(output, explain()).not.toMatch(/Domain/i);
    // The first PROPFIND is refused for want of credentials, the retry with them succeeds.
    expect(recorder.exchanges.slice(0, 3).map((e) => `${e.method} ${e.status}`), explain()).toEqual(['OPTIONS 200', 'PROPFIND 401', 'PROPFIND 207']);
  });

  it('lists home, incoming and groups at the root, never the trash, and each group’s two drives', () => {
    expect(stepOutput('list-root').split('\n').filter(Boolean).sort(), explain()).toEqual(['groups', 'home', 'incoming']);
    expect(stepOutput('list-groups').split('\n').filter(Boolean), explain()).toEqual([TEAM]);
    expect(stepOutput('list-group').split('\n').filter(Boolean).sort(), explain()).toEqual(['home', 'incoming']);
  });

  it('shows home as a directory with gio info', () => {
    const info = stepOutput('info-home');
    expect(info, explain()).toMatch(/^type: directory$/m);
    expect(info, explain()).toMatch(/^ {2}standard::content-type: inode\/directory$/m);
    expect(info, explain()).toMatch(/^ {2}etag::value: "\S+"$/m);
  });

  it('copies a file up with one PUT and cats the same bytes back', async () => {
    stepOutput('copy-up');
    stepOutput('cat');
    expect(readFileSync(path.join(local, 'back.bin')).equals(hello), explain()).toBe(true);
    expect(sent('PUT', /\/home\/hello\.bin$/).map((e) => e.headers['content-length']), explain()).toEqual([String(hello.length)]);
  });

  it('renames and moves with MOVE, and the store holds the bytes in the folder gio made', async () => {
    stepOutput('mkdir');
    expect(stepOutput('rename'), explain()).toContain('Rename successful');
    stepOutput('move');
    expect(sent('MOVE', /\/home\/(hello|renamed)\.bin$/).map((e) => `${e.path} ${e.status}`), explain()).toEqual([
      '/remote.php/webdav/home/hello.bin 201',
      '/remote.php/webdav/home/renamed.bin 201',
    ]);
    expect([...sent('COPY', /./), ...sent('DELETE', /\.bin$/)], explain()).toEqual([]);
    const moved = await storeEntry(f, user, ['gio-dir', 'moved.bin']);
    expect(moved?.sizeBytes, explain()).toBe(hello.length);
    expect((await storeRead(f, user, moved!)).equals(hello)).toBe(true);
    expect(stepOutput('list-dir'), explain()).toBe(`moved.bin\t${hello.length}\t(regular)`);
  });

  it('writes into a group’s drive', async () => {
    stepOutput('copy-group');
    const stored = await entryNamed(f.client, user.session, `home:${groupId}`, 'from-gio.txt');
    expect((await storeRead(f, user, stored)).toString('utf8'), explain()).toBe('short-lived\n');
  });

  it('removes a file it copied up and one the store put there: home holds only the folder gio made', async () => {
    stepOutput('copy-second');
    stepOutput('remove');
    stepOutput('remove-seeded');
    expect((await storeList(f, user, [])).map((e) => `${e.kind} ${e.name}`), explain()).toEqual(['folder gio-dir']);
  });

  it('is refused a folder at the top of the view, and gio says Forbidden', async () => {
    expect(stepOutput('mkdir-top', 1), explain()).toContain('HTTP Client Error: Forbidden');
    expect(sent('MKCOL', /\/loose\/?$/).map((e) => e.status), explain()).toEqual([403]);
  });

  it('meets no other refusal than the first 401, the probe above the mount, lookups of names not yet made and the top-level folder', () => {
    const notYetMade = /\/(home\/hello\.bin|home\/gio-dir\/moved\.bin|home\/second\.txt|groups\/[^/]+\/home\/from-gio\.txt)$/;
    const expected = (e: RecordedExchange) =>
      (e.method === 'PROPFIND' && e.status === 401 && e.path === '/remote.php/webdav') ||
      (e.method === 'PROPFIND' && e.status === 404 && (e.path === '/remote.php/' || notYetMade.test(e.path))) ||
      (e.method === 'MKCOL' && e.status === 403 && e.path === '/remote.php/webdav/loose/');
    expect(recorder.describe(recorder.failures(expected)), explain()).toBe('');
  });
});
