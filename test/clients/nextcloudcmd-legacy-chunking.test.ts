/**
 * nextcloudcmd uploads a file by ownCloud's legacy `OC-Chunked: 1` chunking (issue 30, item 6):
 * what the desktop client does when the capabilities announce no `dav.chunking`. The bridge's
 * own discovery answers (status.php, the OCS capabilities) announce chunking NG once they exist,
 * so a stand-in on loopback answers those two and `cloud/user` here, without `dav.chunking`, and
 * passes every other request to the bridge untouched. The file must arrive whole under its own
 * name, with no file named after a chunk and no upload left behind.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import { bridgeFixture, type BridgeFixture } from '../helpers/start-bridge.js';
import type { TestUser } from '../helpers/store-fixture.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { partSessions } from '../helpers/upload-parts.js';
import { describeRun, runProgram } from './run-program.js';
import { storeEntry, storeList, storeRead } from './store-state.js';

const nextcloudcmd = requireBinary('nextcloudcmd');
const SYNC_TIMEOUT_MS = 120_000;

/** The stand-in's answers: a server new enough for the client, capabilities without `dav.chunking`. */
function discovery(user: TestUser): Map<string, unknown> {
  const ocs = (data: unknown) => ({ ocs: { meta: { status: 'ok', statuscode: 100, message: 'OK' }, data } });
  const capabilities = ocs({
    version: { major: 28, minor: 0, micro: 0, string: '28.0.0', edition: '' },
    capabilities: { core: { pollinterval: 60, 'webdav-root': 'remote.php/webdav' }, files: { bigfilechunking: true }, checksums: { supportedTypes: ['SHA1'], preferredUploadType: 'SHA1' } },
  });
  return new Map<string, unknown>([
    ['/status.php', { installed: true, maintenance: false, needsDbUpgrade: false, version: '28.0.0.0', versionstring: '28.0.0', edition: '', productname: 'driveway', extendedSupport: false }],
    ['/ocs/v1.php/cloud/capabilities', capabilities],
    ['/ocs/v2.php/cloud/capabilities', capabilities],
    ['/ocs/v1.php/cloud/user', ocs({ id: user.email, 'display-name': user.email, email: user.email })],
    ['/ocs/v2.php/cloud/user', ocs({ id: user.email, 'display-name': user.email, email: user.email })],
  ]);
}

nextcloudcmd.describe('nextcloudcmd 3.7 without chunking NG: the legacy OC-Chunked upload', () => {
  let f: BridgeFixture;
  let user: TestUser & { auth: string };
  let tmp: ReturnType<typeof makeTmpDir>;
  let standIn: http.Server;
  let standInUrl: string;
  const requests: Array<{ method: string; url: string; chunked: boolean }> = [];

  beforeAll(async () => {
    f = await bridgeFixture({ bridgeFlags: { uploadExpirySec: 3600 } });
    user = await f.newDavUser();
    tmp = makeTmpDir('driveway-nextcloudcmd-v1-');
    const bridge = new URL(f.davUrl);
    const answers = discovery(user);
    standIn = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      requests.push({ method: req.method ?? '', url: url.pathname, chunked: req.headers['oc-chunked'] !== undefined });
      const answer = answers.get(url.pathname);
      if (answer !== undefined) {
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
        return;
      }
      const upstream = http.request({ host: bridge.hostname, port: bridge.port, method: req.method, path: req.url, headers: req.headers }, (answerFromBridge) => {
        res.writeHead(answerFromBridge.statusCode ?? 502, answerFromBridge.headers);
        answerFromBridge.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => standIn.listen(0, '127.0.0.1', resolve));
    standInUrl = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => standIn.close(() => resolve()));
    await f.close();
    tmp.remove();
  });

  it('uploads a 25 MB file in chunks that the bridge assembles under the file’s own name', async () => {
    const local = path.join(tmp.dir, 'sync');
    mkdirSync(local);
    const content = randomBytes(25 * 1000 * 1000 + 4321);
    writeFileSync(path.join(local, 'big30.bin'), content);
    writeFileSync(path.join(local, 'small.txt'), 'one PUT');
    const home = path.join(tmp.dir, 'home');
    mkdirSync(home);
    const run = await runProgram(nextcloudcmd.path, ['--non-interactive', '-u', user.email, '-p', user.password, '--path', '/home', local, standInUrl], {
      env: { ...process.env, HOME: home, OWNCLOUD_CHUNKING_NG: '0', QT_QPA_PLATFORM: 'offscreen' },
      timeoutMs: SYNC_TIMEOUT_MS,
    });
    expect(run.timedOut, describeRun(run)).toBe(false);
    const chunkPuts = requests.filter((r) => r.method === 'PUT' && r.chunked);
    expect(chunkPuts.length, describeRun(run)).toBeGreaterThanOrEqual(3);
    expect(chunkPuts.every((r) => /big30\.bin-chunking-\d+-\d+-\d+$/.test(r.url))).toBe(true);
    const entry = await storeEntry(f, user, ['big30.bin']);
    expect(entry, describeRun(run)).toBeDefined();
    expect(createHash('sha1').update(await storeRead(f, user, entry!)).digest('hex')).toBe(createHash('sha1').update(content).digest('hex'));
    const names = (await storeList(f, user, [])).map((e) => e.name).sort();
    expect(names).toEqual(['big30.bin', 'small.txt']);
    expect(await partSessions(f)).toEqual([]);
    expect(run.code, describeRun(run)).toBe(0);
  });
});
