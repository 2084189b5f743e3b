/**
 * nextcloudcmd (Debian's 3.7) uploads small files by bulk upload when the capabilities say
 * `dav.bulkupload` (bridge/uploads/bulk.ts; docs/client-quirks.md "Bulk upload"): a first sync of
 * 2,000 small files in a few folders goes up in `POST /remote.php/dav/bulk` requests (seen in the
 * bridge's access log, at most 100 files each as the client batches them), no file by its own
 * PUT, and every byte arrives right; a second sync finds nothing to do.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { captureLog, type LogCapture } from '../helpers/log-capture.js';
import { requireBinary } from '../helpers/require-binary.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { describeRun, runProgram } from './run-program.js';
import { storeTreeSha256 } from './store-state.js';

const nextcloudcmd = requireBinary('nextcloudcmd');
const FILES = 2000;
const FOLDERS = 4;
const SYNC_TIMEOUT_MS = 120_000;

nextcloudcmd.describe('nextcloudcmd 3.7 with dav.bulkupload: small files by bulk upload', () => {
  let f: BridgeFixture;
  let user: DavUser;
  let tmp: ReturnType<typeof makeTmpDir>;
  let capture: LogCapture;

  beforeAll(async () => {
    capture = captureLog('info');
    // Debian's 3.7 is one of the clients `fixed` leaves out (an empty file fails its bulk request): this tree holds none.
    f = await bridgeFixture({ bridgeLogger: capture.logger, bridgeFlags: { bulkUploadClients: 'all' } });
    user = await f.newDavUser();
    tmp = makeTmpDir('driveway-nextcloudcmd-bulk-');
  });
  afterAll(async () => {
    await f?.close();
    tmp?.remove();
  });

  const sync = (local: string, home: string) =>
    runProgram(nextcloudcmd.path, ['--non-interactive', '-u', user.email, '-p', user.password, '--path', '/home', local, f.davUrl], {
      env: { ...process.env, HOME: home, QT_QPA_PLATFORM: 'offscreen' },
      timeoutMs: SYNC_TIMEOUT_MS,
    });

  it(`uploads ${FILES} small files in bulk requests, every byte right`, async () => {
    const local = path.join(tmp.dir, 'sync');
    const home = path.join(tmp.dir, 'home');
    mkdirSync(home);
    const expected = new Map<string, string>();
    for (let i = 0; i < FILES; i++) {
      const folder = `d${i % FOLDERS}`;
      mkdirSync(path.join(local, folder), { recursive: true });
      // 1 byte to 8 KiB: mostly a few KiB, some empty-ish, all different.
      const content = randomBytes(1 + ((i * 97) % 8192));
      const relative = `${folder}/f${i}.bin`;
      writeFileSync(path.join(local, relative), content);
      expected.set(relative, createHash('sha256').update(content).digest('hex'));
    }
    const run = await sync(local, home);
    expect(run.timedOut, describeRun(run)).toBe(false);
    expect(run.code, describeRun(run)).toBe(0);

    const lines = capture.lines().filter((l) => l.msg === 'request');
    const bulk = lines.filter((l) => l.method === 'POST' && l.url === '/remote.php/dav/bulk');
    const puts = lines.filter((l) => l.method === 'PUT');
    expect(bulk.every((l) => l.status === 200)).toBe(true);
    // The client sends at most 100 files per request.
    expect(bulk.length, describeRun(run)).toBeGreaterThanOrEqual(FILES / 100);
    expect(puts, describeRun(run)).toEqual([]);
    console.log(`nextcloudcmd: ${bulk.length} bulk requests, ${puts.length} PUTs, sync ${run.ms ?? '?'} ms`);

    expect(await storeTreeSha256(f, user, [])).toEqual(expected);

    // Nothing left to do: the second sync uploads nothing.
    const before = capture.lines().length;
    const again = await sync(local, home);
    expect(again.code, describeRun(again)).toBe(0);
    expect(capture.lines().slice(before).filter((l) => l.msg === 'request' && (l.method === 'POST' || l.method === 'PUT'))).toEqual([]);
  });
});
