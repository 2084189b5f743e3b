/**
 * rclone 1.60 (webdav backend, vendor other) against bridge + store (issue 3, "Done when"):
 * copy a tree of 200 files with awkward names plus a 100 MiB random file, `check --download`
 * (0 differences, bytes compared), `lsjson` names and sizes, `sync` after edits twice (the
 * second transfers nothing), `about` (the user's quota), a multi-thread ranged download
 * (4 streams) with the same sha256, `purge`. rclone is configured only through
 * RCLONE_CONFIG_<NAME>_* variables with a config file that does not exist and a temp HOME, so
 * the machine's own rclone setup is never read. A recording proxy in front of the bridge keeps
 * every exchange, so a red run names the request the bridge refused.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import { bridgeFixture, type BridgeFixture } from '../helpers/start-bridge.js';
import type { TestUser } from '../helpers/store-fixture.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { startDavRecorder, type DavRecorder, type RecordedExchange } from './dav-recorder.js';
import { sha256Tree, writeAwkwardTree } from './local-tree.js';
import { rcloneRemote, type RcloneRemote } from './rclone-remote.js';
import { describeRun, type ProgramRun } from './run-program.js';
import { storeList, storeTreeSha256 } from './store-state.js';

const rclone = requireBinary('rclone');

const MiB = 1024 * 1024;
const BIG_BYTES = 100 * MiB;
const QUOTA_BYTES = 2 * 1024 * MiB;
const RCLONE_TIMEOUT_MS = 180_000;

const FOLDERS = 10;
const FILES_PER_FOLDER = 20;

function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

async function writeRandomFile(file: string, bytes: number): Promise<string> {
  const hash = createHash('sha256');
  const out = createWriteStream(file);
  for (let written = 0; written < bytes; written += MiB) {
    const chunk = randomBytes(Math.min(MiB, bytes - written));
    hash.update(chunk);
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return hash.digest('hex');
}

/** Lines rclone logs at -v for each file it uploaded or deleted. */
function transfers(run: ProgramRun): { copied: string[]; deleted: string[] } {
  const lines = run.stderr.split('\n');
  return {
    copied: lines.filter((line) => /INFO\s+: .*: Copied \(/.test(line)),
    deleted: lines.filter((line) => /INFO\s+: .*: Deleted$/.test(line)),
  };
}

rclone.describe('rclone 1.60 (webdav, vendor other) against bridge + store', () => {
  let f: BridgeFixture;
  let recorder: DavRecorder;
  let user: TestUser & { auth: string };
  let tmp: ReturnType<typeof makeTmpDir>;
  let src: string;
  let bigSha256 = '';
  const fileNames: string[] = [];

  let remote: RcloneRemote;
  const rc = (args: readonly string[]): Promise<ProgramRun> => remote.run(args);

  /** The run, plus what the bridge refused during it. */
  function explain(run: ProgramRun, since: number): string {
    const refused = recorder.failures((e: RecordedExchange) => e.method === 'PROPFIND' && e.status === 404).filter((e) => recorder.exchanges.indexOf(e) >= since);
    return `${describeRun(run)}\n--- bridge answers >= 400 during the run (PROPFIND 404 left out) ---\n${recorder.describe(refused) || '  none'}`;
  }

  beforeAll(async () => {
    f = await bridgeFixture();
    recorder = await startDavRecorder(f.davUrl);
    user = await f.newDavUser({ quotaBytes: QUOTA_BYTES });
    tmp = makeTmpDir('driveway-rclone-');
    src = path.join(tmp.dir, 'src');
    mkdirSync(src);
    fileNames.push(...writeAwkwardTree(src, FOLDERS, FILES_PER_FOLDER));
    bigSha256 = await writeRandomFile(path.join(src, 'big.bin'), BIG_BYTES);

    remote = await rcloneRemote({
      rclonePath: rclone.path,
      name: 'BR',
      url: `${recorder.url}/home/`,
      username: user.email,
      password: user.password,
      tmpDir: tmp.dir,
      timeoutMs: RCLONE_TIMEOUT_MS,
    });
  }, 120_000);

  afterAll(async () => {
    await recorder?.close();
    await f?.close();
    tmp?.remove();
  });

  it('copies the tree of 200 awkward names and the 100 MiB file, and the store holds the same bytes', async () => {
    expect(fileNames).toHaveLength(200);
    const since = recorder.exchanges.length;
    const run = await rc(['copy', src, 'br:t1', '-v', '--stats', '0']);
    expect(run.code, explain(run, since)).toBe(0);
    expect(transfers(run).copied, explain(run, since)).toHaveLength(201);

    const stored = await storeTreeSha256(f, user, ['t1']);
    const local = await sha256Tree(src);
    expect(local.get('big.bin')).toBe(bigSha256);
    expect([...stored.keys()].sort()).toEqual([...local.keys()].sort());
    expect(Object.fromEntries(stored)).toEqual(Object.fromEntries(local));
  }, 300_000);

  it('check --download finds 0 differences', async () => {
    const since = recorder.exchanges.length;
    const run = await rc(['check', src, 'br:t1', '--download']);
    expect(run.code, explain(run, since)).toBe(0);
    expect(run.stderr, explain(run, since)).toMatch(/: 0 differences found/);
    expect(run.stderr).toMatch(/: 201 matching files/);
  }, 300_000);

  it('lsjson shows every name and size as stored', async () => {
    const since = recorder.exchanges.length;
    const run = await rc(['lsjson', '-R', 'br:t1']);
    expect(run.code, explain(run, since)).toBe(0);
    const listed = JSON.parse(run.stdout) as Array<{ Path: string; Name: string; Size: number; IsDir: boolean }>;
    const files = new Map(listed.filter((e) => !e.IsDir).map((e) => [e.Path.normalize('NFC'), e.Size]));
    const expected = new Map<string, number>([['big.bin', BIG_BYTES]]);
    for (const name of fileNames) expected.set(name.normalize('NFC'), statSync(path.join(src, name)).size);
    expect(Object.fromEntries(files)).toEqual(Object.fromEntries(expected));
    expect(listed.filter((e) => e.IsDir).map((e) => e.Name.normalize('NFC')).sort()).toEqual(
      readdirSync(src, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name.normalize('NFC'))
        .sort(),
    );
    expect(files.get(fileNames[0]!.normalize('NFC'))).toBe(0);
  });

  it('sync after edits transfers the changes, and a second sync transfers nothing', async () => {
    // rclone sees no modification times with vendor other, so edits change sizes.
    const edited = [fileNames[1]!, fileNames[42]!, fileNames[77]!, fileNames[150]!, fileNames[199]!];
    for (const [i, name] of edited.entries()) writeFileSync(path.join(src, name), randomBytes(30_000 + i * 1_111));
    rmSync(path.join(src, fileNames[5]!));
    writeFileSync(path.join(src, fileNames[5]!.replace(/\.txt$/, ' (new).txt')), randomBytes(4_321));

    let since = recorder.exchanges.length;
    const firstSync = await rc(['sync', src, 'br:t1', '-v', '--stats', '0']);
    expect(firstSync.code, explain(firstSync, since)).toBe(0);
    expect(transfers(firstSync).copied, explain(firstSync, since)).toHaveLength(edited.length + 1);
    expect(transfers(firstSync).deleted, explain(firstSync, since)).toHaveLength(1);

    since = recorder.exchanges.length;
    const secondSync = await rc(['sync', src, 'br:t1', '-v', '--stats', '0']);
    expect(secondSync.code, explain(secondSync, since)).toBe(0);
    expect(transfers(secondSync), explain(secondSync, since)).toEqual({ copied: [], deleted: [] });
    expect(recorder.exchanges.slice(since).filter((e) => e.method === 'PUT' || e.method === 'DELETE'), explain(secondSync, since)).toEqual([]);

    const stored = await storeTreeSha256(f, user, ['t1']);
    expect(Object.fromEntries(stored)).toEqual(Object.fromEntries(await sha256Tree(src)));
  }, 300_000);

  it('about shows the user quota', async () => {
    const since = recorder.exchanges.length;
    const run = await rc(['about', 'br:', '--json']);
    expect(run.code, explain(run, since)).toBe(0);
    const about = JSON.parse(run.stdout) as { total?: number; used?: number; free?: number };
    const profile = await f.client.currentUser(user.session);
    expect(about.total).toBe(QUOTA_BYTES);
    expect(about.used).toBeGreaterThanOrEqual(BIG_BYTES);
    expect(about.used).toBe(profile.diskUsedBytes);
    expect(about.free).toBe(QUOTA_BYTES - (about.used ?? 0));
  });

  it('a multi-thread ranged download (4 streams) gives the same sha256', async () => {
    const since = recorder.exchanges.length;
    const dl = path.join(tmp.dir, 'dl');
    const run = await rc(['copy', 'br:t1/big.bin', dl, '--multi-thread-streams', '4', '--multi-thread-cutoff', '1M', '-vv', '--stats', '0']);
    expect(run.code, explain(run, since)).toBe(0);
    expect(await sha256File(path.join(dl, 'big.bin'))).toBe(bigSha256);
    const ranged = recorder.exchanges.slice(since).filter((e) => e.method === 'GET' && e.headers.range !== undefined);
    expect(ranged.length, explain(run, since)).toBeGreaterThanOrEqual(4);
    expect(ranged.map((e) => e.status)).toEqual(ranged.map(() => 206));
  }, 300_000);

  it('purge removes the whole tree', async () => {
    const since = recorder.exchanges.length;
    const run = await rc(['purge', 'br:t1']);
    expect(run.code, explain(run, since)).toBe(0);
    expect((await storeList(f, user, [])).map((e) => e.name)).not.toContain('t1');
    const after = await rc(['lsjson', 'br:t1']);
    expect(after.code).not.toBe(0);
    expect(after.stderr).toMatch(/directory not found/i);
  });
});
