/**
 * cadaver 0.24 scripted session against bridge + store (issue 3, "Done when"): mkcol, put, get,
 * move, copy, lock, discover, put under the lock, unlock, propset, propget, delete, rmcol.
 * cadaver reads its commands from stdin and its credentials from ~/.netrc in a temp HOME; its
 * exit status is 0 whatever happens, so the test reads what it printed for each command and
 * then checks the store through the store client and the bridge through plain requests.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import { bridgeFixture, type BridgeFixture } from '../helpers/start-bridge.js';
import type { TestUser } from '../helpers/store-fixture.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { describeRun, runProgram, type ProgramRun } from './run-program.js';
import { storeEntry, storeList, storeRead } from './store-state.js';

const cadaver = requireBinary('cadaver');
const CADAVER_TIMEOUT_MS = 60_000;

cadaver.describe('cadaver 0.24 scripted session against bridge + store', () => {
  let f: BridgeFixture;
  let user: TestUser & { auth: string };
  let tmp: ReturnType<typeof makeTmpDir>;
  let run: ProgramRun;
  const first = randomBytes(100_000);
  const second = Buffer.concat([randomBytes(50_000), Buffer.from('second revision\n')]);

  /** What cadaver printed for one command: from its prompt line to the next prompt. */
  function outputOf(command: string): string {
    const marker = `> ${command}\n`;
    const start = run.stdout.indexOf(marker);
    if (start < 0) throw new Error(`cadaver never ran \`${command}\`\n${describeRun(run)}`);
    const next = run.stdout.indexOf('dav:', start + marker.length);
    return run.stdout.slice(start + marker.length, next < 0 ? undefined : next);
  }

  beforeAll(async () => {
    f = await bridgeFixture();
    user = await f.newDavUser();
    tmp = makeTmpDir('driveway-cadaver-');
    const home = path.join(tmp.dir, 'home');
    mkdirSync(home);
    writeFileSync(path.join(home, '.netrc'), `machine 127.0.0.1\nlogin ${user.email}\npassword ${user.password}\n`, { mode: 0o600 });
    writeFileSync(path.join(tmp.dir, 'first.bin'), first);
    writeFileSync(path.join(tmp.dir, 'second.bin'), second);
    const script = [
      'mkcol cad',
      'cd cad',
      'put first.bin a.bin',
      'get a.bin back.bin',
      'move a.bin b.bin',
      'copy b.bin c.bin',
      'lock b.bin',
      'discover b.bin',
      'put second.bin b.bin',
      'unlock b.bin',
      'propset b.bin color red',
      'propget b.bin color',
      'delete c.bin',
      'mkcol empty',
      'rmcol empty',
      'ls',
      'quit',
    ];
    run = await runProgram(cadaver.path, [`${f.davUrl}/home/`], {
      cwd: tmp.dir,
      env: { ...process.env, HOME: home, LANG: 'C', LC_ALL: 'C' },
      input: `${script.join('\n')}\n`,
      timeoutMs: CADAVER_TIMEOUT_MS,
    });
  }, CADAVER_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await f?.close();
    tmp?.remove();
  });

  it('runs the whole script in time and reports no failure', () => {
    expect(run.timedOut, describeRun(run)).toBe(false);
    expect(run.stdout, describeRun(run)).toContain('> quit');
    expect(run.stdout, describeRun(run)).not.toMatch(/failed|Could not|error/i);
  });

  it('creates the collection with mkcol', async () => {
    expect(outputOf('mkcol cad'), describeRun(run)).toContain("Creating `cad': succeeded.");
    const home = await storeList(f, user, []);
    expect(home.find((e) => e.name === 'cad')?.kind).toBe('folder');
  });

  it('puts a file and gets the same bytes back', () => {
    expect(outputOf('put first.bin a.bin'), describeRun(run)).toContain('succeeded.');
    expect(outputOf('get a.bin back.bin'), describeRun(run)).toContain('succeeded.');
    expect(readFileSync(path.join(tmp.dir, 'back.bin')).equals(first)).toBe(true);
  });

  it('moves and copies, and delete removes the copy', async () => {
    expect(outputOf('move a.bin b.bin'), describeRun(run)).toContain('succeeded.');
    expect(outputOf('copy b.bin c.bin'), describeRun(run)).toContain('succeeded.');
    expect(outputOf('delete c.bin'), describeRun(run)).toContain("Deleting `c.bin': succeeded.");
    const names = (await storeList(f, user, ['cad'])).map((e) => e.name).sort();
    expect(names).toEqual(['b.bin']);
  });

  it('locks, discovers its own exclusive write lock, writes under it and unlocks', async () => {
    expect(outputOf('lock b.bin'), describeRun(run)).toContain("Locking `b.bin': succeeded.");
    const discover = outputOf('discover b.bin');
    expect(discover, describeRun(run)).toMatch(/Lock token <opaquelocktoken:[0-9a-f-]{36}>/);
    expect(discover).toMatch(/Depth 0 on `[^']*\/home\/cad\/b\.bin'/);
    expect(discover).toMatch(/Scope: exclusive\s+Type: write\s+Timeout: \d+ seconds/);
    expect(outputOf('put second.bin b.bin'), describeRun(run)).toContain('succeeded.');
    expect(outputOf('unlock b.bin'), describeRun(run)).toContain("Unlocking `b.bin': succeeded.");

    const stored = await storeEntry(f, user, ['cad', 'b.bin']);
    expect(stored?.sizeBytes).toBe(second.length);
    expect((await storeRead(f, user, stored!)).equals(second)).toBe(true);

    // Unlocked for good: a plain request without any token may write again.
    const put = await request(`${f.davUrl}/home/cad/b.bin`, { method: 'PUT', headers: { authorization: user.auth }, body: 'after unlock' });
    await put.body.dump();
    expect(put.statusCode).toBe(204);
  });

  it('sets a dead property that propget and a PROPFIND both return', async () => {
    expect(outputOf('propset b.bin color red'), describeRun(run)).toContain('succeeded.');
    expect(outputOf('propget b.bin color'), describeRun(run)).toContain('Value of color is: red');
    const res = await request(`${f.davUrl}/home/cad/b.bin`, {
      method: 'PROPFIND',
      headers: { authorization: user.auth, depth: '0', 'content-type': 'application/xml' },
      body: '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><C:color xmlns:C="http://webdav.org/cadaver/custom-properties/"/></D:prop></D:propfind>',
    });
    const xml = await res.body.text();
    expect(res.statusCode).toBe(207);
    expect(xml).toMatch(/<([A-Za-z0-9]+:)?color\b[^>]*>red<\/([A-Za-z0-9]+:)?color>/);
    expect(xml).toContain('http://webdav.org/cadaver/custom-properties/');
  });

  it('creates and removes an empty collection with mkcol and rmcol', async () => {
    expect(outputOf('mkcol empty'), describeRun(run)).toContain('succeeded.');
    expect(outputOf('rmcol empty'), describeRun(run)).toContain('succeeded.');
    expect((await storeList(f, user, ['cad'])).map((e) => e.name)).not.toContain('empty');
  });

  it('lists the collection with ls', () => {
    const ls = outputOf('ls');
    expect(ls, describeRun(run)).toContain("Listing collection `/home/cad/': succeeded.");
    expect(ls).toMatch(new RegExp(`b\\.bin\\s+${second.length}\\s`));
  });
});
