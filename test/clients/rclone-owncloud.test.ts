/**
 * rclone 1.60 with the vendor README.md recommends (issue 22, items 2 and 5): the remote is made
 * by README's own `rclone config create` command, run as written (vendor=owncloud), and once more
 * with vendor=nextcloud, which 1.60 supports too. For each: `rclone lsl` shows the local
 * modification times after `rclone copy` of a tree with awkward names, after a server-side
 * `rclone moveto` and after a `touch` + `rclone sync`; a sync with nothing changed uploads nothing.
 * rclone 1.60 sends times as X-OC-Mtime (PUT, MOVE) and cannot set one alone (its SetModTime is
 * "not supported"; PROPPATCH of DAV:lastmodified comes with 1.63, replayed in
 * test/integration/bridge/proppatch.test.ts), so a touched file is uploaded again, once.
 * Everything runs with a temp HOME and config file, never the machine's own rclone setup.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import { bridgeFixture, type BridgeFixture } from '../helpers/start-bridge.js';
import type { TestUser } from '../helpers/store-fixture.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { startDavRecorder, type DavRecorder } from './dav-recorder.js';
import { sha256Tree, writeAwkwardTree } from './local-tree.js';
import { describeRun, runProgram, type ProgramRun } from './run-program.js';
import { storeTreeSha256 } from './store-state.js';

const rclone = requireBinary('rclone');
const bash = requireBinary('bash');

const README = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../README.md');
const RCLONE_TIMEOUT_MS = 120_000;
const ADA = { email: 'ada@example.com', password: 'Analytical-Engine-1', endpoint: 'ada' };

/** README's `rclone config create ...` command with its continuation lines, exactly as written there. */
function readmeRemoteCommand(): string {
  const lines = readFileSync(README, 'utf8').split('\n');
  const start = lines.findIndex((line) => line.startsWith('rclone config create '));
  if (start < 0) throw new Error('README.md has no `rclone config create` line');
  const command = [lines[start] as string];
  for (let i = start; (lines[i] as string).endsWith('\\'); i++) command.push(lines[i + 1] as string);
  return command.join('\n');
}

/** `rclone lsl` lines: path -> "YYYY-MM-DD HH:MM:SS.nnnnnnnnn" (the run has TZ=UTC). */
function lslTimes(run: ProgramRun): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of run.stdout.split('\n')) {
    const match = /^\s*\d+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{9}) (.+)$/.exec(line);
    if (match) out.set((match[2] as string).normalize('NFC'), match[1] as string);
  }
  return out;
}

/** A local file's mtime as rclone lsl shows one kept at rclone's 1 s precision for this vendor. */
function wholeSecondTime(file: string): string {
  const seconds = Math.floor(statSync(file).mtimeMs / 1000);
  return `${new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ')}.000000000`;
}

/** Files rclone logs at -v as uploaded. */
function copied(run: ProgramRun): string[] {
  return run.stderr.split('\n').filter((line) => /INFO\s+: .*: Copied \(/.test(line));
}

const readmeCommand = readmeRemoteCommand();

it('README.md recommends vendor=owncloud in its rclone command', () => {
  expect(readmeCommand).toMatch(/^rclone config create dw webdav .*vendor=owncloud /);
});

for (const vendor of ['owncloud', 'nextcloud'] as const) {
  rclone.describe(`rclone 1.60, README's remote with vendor=${vendor}: modification times`, () => {
    let f: BridgeFixture;
    let recorder: DavRecorder;
    let tmp: ReturnType<typeof makeTmpDir>;
    let src: string;
    let names: string[] = [];
    let env: NodeJS.ProcessEnv;
    let ada: TestUser;

    const rc = (args: readonly string[], input?: string): Promise<ProgramRun> =>
      runProgram(rclone.path, [...args, '--retries', '1', '--low-level-retries', '1'], { cwd: tmp.dir, env, timeoutMs: RCLONE_TIMEOUT_MS, ...(input === undefined ? {} : { input }) });

    /** What failed, with the bridge's answers since `since`. */
    const explain = (run: ProgramRun, since: number): string => `${describeRun(run)}\n--- exchanges ---\n${recorder.describe(recorder.exchanges.slice(since))}`;

    async function lsl(remotePath: string): Promise<Map<string, string>> {
      const run = await rc(['lsl', remotePath]);
      expect(run.code, describeRun(run)).toBe(0);
      return lslTimes(run);
    }

    function localTimes(): Map<string, string> {
      return new Map(names.map((name) => [name.normalize('NFC'), wholeSecondTime(path.join(src, name))]));
    }

    beforeAll(async () => {
      f = await bridgeFixture();
      recorder = await startDavRecorder(f.davUrl);
      const uuid = await f.client.createUser(f.admin, { fullname: 'Ada', email: ADA.email, password: ADA.password, diskQuotaBytes: 0 });
      const session = await f.client.login(ADA.email, ADA.password);
      ada = { uuid: uuid ?? '', email: ADA.email, password: ADA.password, session };
      const made = await f.client.http.requestRaw({ method: 'POST', path: '/api/user/webdrive', token: session.token, json: { endpoint: ADA.endpoint } });
      expect(made.status).toBe(200);

      tmp = makeTmpDir('driveway-rclone-owncloud-');
      src = path.join(tmp.dir, 'src');
      mkdirSync(src);
      names = writeAwkwardTree(src, 3, 5);
      // Distinct times in the past, with a fraction rclone drops (its precision here is 1 s).
      names.forEach((name, i) => {
        const seconds = Date.UTC(2001, 1, 3, 4, 5, 6) / 1000 + i * 86_400 + 0.75;
        utimesSync(path.join(src, name), seconds, seconds);
      });

      const home = path.join(tmp.dir, 'home');
      mkdirSync(home);
      env = {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        XDG_CONFIG_HOME: path.join(home, '.config'),
        XDG_CACHE_HOME: path.join(home, '.cache'),
        RCLONE_CONFIG: path.join(tmp.dir, 'rclone.conf'),
        TZ: 'UTC',
        LANG: 'C.UTF-8',
        // What README's command reads: the bridge (through the recorder) and Ada's password.
        DAV: recorder.url,
        APP_PASSWORD: ADA.password,
      };
      const command = readmeCommand.replace('vendor=owncloud', `vendor=${vendor}`);
      const created = await runProgram(bash.path, ['-euo', 'pipefail', '-c', command], { cwd: tmp.dir, env, timeoutMs: 30_000 });
      expect(created.code, describeRun(created)).toBe(0);
      expect(readFileSync(path.join(tmp.dir, 'rclone.conf'), 'utf8')).toContain(`vendor = ${vendor}`);
    }, 60_000);

    afterAll(async () => {
      await recorder?.close();
      await f?.close();
      tmp?.remove();
    });

    it('copy uploads the tree with X-OC-Mtime, and lsl shows every local time', async () => {
      const since = recorder.exchanges.length;
      const run = await rc(['copy', src, 'dw:t', '-v', '--stats', '0']);
      expect(run.code, explain(run, since)).toBe(0);
      expect(copied(run), explain(run, since)).toHaveLength(names.length);
      const puts = recorder.exchanges.slice(since).filter((e) => e.method === 'PUT');
      expect(puts.every((e) => e.headers['x-oc-mtime'] !== undefined), explain(run, since)).toBe(true);
      expect(Object.fromEntries(await lsl('dw:t'))).toEqual(Object.fromEntries(localTimes()));
      expect(Object.fromEntries(await storeTreeSha256(f, ada, ['t']))).toEqual(Object.fromEntries(await sha256Tree(src)));
    });

    it('a sync with nothing changed uploads nothing', async () => {
      const since = recorder.exchanges.length;
      const run = await rc(['sync', src, 'dw:t', '-v', '--stats', '0']);
      expect(run.code, explain(run, since)).toBe(0);
      expect(copied(run), explain(run, since)).toEqual([]);
      expect(recorder.exchanges.slice(since).filter((e) => e.method === 'PUT' || e.method === 'DELETE'), explain(run, since)).toEqual([]);
    });

    it('a server-side moveto keeps the time, there and back', async () => {
      const name = names[4] as string;
      const expected = wholeSecondTime(path.join(src, name));
      const base = path.basename(name);
      let since = recorder.exchanges.length;
      let run = await rc(['moveto', `dw:t/${name}`, `dw:moved/renamed ${base}`, '-v']);
      expect(run.code, explain(run, since)).toBe(0);
      const methods = recorder.exchanges.slice(since).map((e) => e.method);
      expect(methods, explain(run, since)).toContain('MOVE');
      expect(methods.filter((m) => m === 'PUT' || m === 'GET'), explain(run, since)).toEqual([]);
      expect(Object.fromEntries(await lsl('dw:moved'))).toEqual({ [`renamed ${base}`.normalize('NFC')]: expected });

      since = recorder.exchanges.length;
      run = await rc(['moveto', `dw:moved/renamed ${base}`, `dw:t/${name}`, '-v']);
      expect(run.code, explain(run, since)).toBe(0);
      expect((await lsl('dw:t')).get(name.normalize('NFC'))).toBe(expected);
    });

    it('after touch, sync uploads exactly the touched file, lsl shows its new time, and the next sync uploads nothing', async () => {
      const touched = names[7] as string;
      const seconds = Date.UTC(2023, 6, 8, 9, 10, 11) / 1000;
      utimesSync(path.join(src, touched), seconds, seconds);

      let since = recorder.exchanges.length;
      let run = await rc(['sync', src, 'dw:t', '-v', '--stats', '0']);
      expect(run.code, explain(run, since)).toBe(0);
      // rclone 1.60 cannot set a time alone: it uploads the file again, with X-OC-Mtime.
      expect(copied(run), explain(run, since)).toHaveLength(1);
      expect(copied(run)[0]?.normalize('NFC')).toContain(touched.normalize('NFC'));
      const times = await lsl('dw:t');
      expect(times.get(touched.normalize('NFC'))).toBe('2023-07-08 09:10:11.000000000');
      expect(Object.fromEntries(times)).toEqual(Object.fromEntries(localTimes()));

      since = recorder.exchanges.length;
      run = await rc(['sync', src, 'dw:t', '-v', '--stats', '0']);
      expect(run.code, explain(run, since)).toBe(0);
      expect(copied(run), explain(run, since)).toEqual([]);
      expect(recorder.exchanges.slice(since).filter((e) => e.method === 'PUT'), explain(run, since)).toEqual([]);
    });

    if (vendor === 'owncloud') {
      it('streams an upload of unknown size (rcat), and the store holds those bytes', async () => {
        const body = 'streamed line\n'.repeat(20_000);
        const since = recorder.exchanges.length;
        const run = await rc(['rcat', 'dw:streamed/rcat.txt', '--streaming-upload-cutoff', '0'], body);
        expect(run.code, explain(run, since)).toBe(0);
        const puts = recorder.exchanges.slice(since).filter((e) => e.method === 'PUT');
        expect(puts.map((e) => e.headers['content-length']), explain(run, since)).toEqual([undefined]);
        const stored = await storeTreeSha256(f, ada, ['streamed']);
        expect(stored.get('rcat.txt')).toBe(createHash('sha256').update(body).digest('hex'));
      });
    }
  });
}
