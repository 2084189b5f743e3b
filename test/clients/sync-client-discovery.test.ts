/**
 * The sync clients get past discovery (bridge/nextcloud/, issue 30 item 1): nextcloudcmd 3.7 asks
 * `/status.php` (its CheckServerJob) and owncloudcmd 2.11 goes straight to the capabilities; both
 * then read `ocs/v1.php/cloud/capabilities` and `ocs/v1.php/cloud/user` and start syncing with a
 * PROPFIND of the remote folder under `/remote.php/dav/files/<id>/`. Asserted here: those requests
 * and their answers, through a recording proxy, with `--non-interactive -u -p`. Whether the sync
 * then succeeds (file ids, folder ETags, ...) is the client suites' to assert, not this file's.
 * nextcloudcmd refuses a server URL containing `/dav` or `/webdav`: its URL is the bridge's base
 * and the remote folder goes in `--path`; owncloudcmd takes the folder after its first DAV path,
 * `remote.php/webdav/`, and moves to `remote.php/dav/files/<id>/` once the capabilities offer
 * chunking NG (ownCloud's Account::davPath).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { startDavRecorder, type DavRecorder, type RecordedExchange } from './dav-recorder.js';
import { describeRun, runProgram } from './run-program.js';

const CLIENT_TIMEOUT_MS = 90_000;

const clients = [
  { binary: requireBinary('nextcloudcmd'), asksStatus: true, args: (u: DavUser, local: string, url: string, _excludes: string) => ['--non-interactive', '-u', u.email, '-p', u.password, '--path', '/home', local, url] },
  {
    binary: requireBinary('owncloudcmd'),
    asksStatus: false,
    // Debian's owncloud-client-cmd comes without ownCloud's system exclude list, and owncloudcmd
    // refuses to run without one: an (empty) list of our own.
    args: (u: DavUser, local: string, url: string, excludes: string) => ['--non-interactive', '-u', u.email, '-p', u.password, '--exclude', excludes, local, `${url}/remote.php/webdav/home`],
  },
];

for (const client of clients) {
  client.binary.describe(`${client.binary.name}: discovery on the bridge's address`, () => {
    let f: BridgeFixture;
    let recorder: DavRecorder;
    let tmp: ReturnType<typeof makeTmpDir>;
    let user: DavUser;

    beforeAll(async () => {
      f = await bridgeFixture();
      recorder = await startDavRecorder(f.davUrl);
      tmp = makeTmpDir(`driveway-${client.binary.name}-`);
      user = await f.newDavUser();
      const put = await request(`${f.davUrl}/home/from-server.txt`, { method: 'PUT', headers: { authorization: user.auth }, body: 'made on the server\n' });
      await put.body.dump();
      expect(put.statusCode).toBe(201);
    });
    afterAll(async () => {
      await recorder?.close();
      await f?.close();
      tmp?.remove();
    });

    it('reads status, capabilities and user, then syncs the remote folder under the files space of the id it was given', async () => {
      const local = path.join(tmp.dir, 'local');
      mkdirSync(local);
      const home = path.join(tmp.dir, 'home');
      mkdirSync(home);
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), XDG_CACHE_HOME: path.join(home, '.cache'), LANG: 'C.UTF-8', TZ: 'UTC' };
      const excludes = path.join(tmp.dir, 'exclude.lst');
      writeFileSync(excludes, '');
      const run = await runProgram(client.binary.path, client.args(user, local, recorder.url, excludes), { cwd: tmp.dir, env, timeoutMs: CLIENT_TIMEOUT_MS });
      const explain = `${describeRun(run)}\n--- exchanges ---\n${recorder.describe()}`;
      const answered = (method: string, pathname: RegExp): RecordedExchange | undefined =>
        recorder.exchanges.find((e) => e.method === method && pathname.test(e.path.split('?')[0] as string));

      if (client.asksStatus) expect(answered('GET', /^\/status\.php$/)?.status, explain).toBe(200);
      expect(answered('GET', /^\/nextcloud\/status\.php$/), explain).toBeUndefined();
      const capabilities = answered('GET', /^\/ocs\/v1\.php\/cloud\/capabilities$/);
      expect(capabilities?.status, explain).toBe(200);
      expect(capabilities?.path, explain).toContain('format=json');
      const userInfo = answered('GET', /^\/ocs\/v1\.php\/cloud\/user$/);
      expect(userInfo?.status, explain).toBe(200);
      // After them: the sync root, under the files space of the id cloud/user gave (the login
      // name; owncloudcmd moves there from its `remote.php/webdav/` because the capabilities
      // offer chunking NG).
      const filesRoot = `/remote.php/dav/files/${user.email}/home`.toLowerCase();
      const listing = recorder.exchanges.findIndex((e) => e.method === 'PROPFIND' && decodeURIComponent(e.path).replace(/\/$/, '').toLowerCase() === filesRoot);
      expect(listing, explain).toBeGreaterThan(recorder.exchanges.indexOf(userInfo as RecordedExchange));
      expect(recorder.exchanges[listing]?.status, explain).toBe(207);
      // Nothing of discovery refused: whatever fails later (file ids, ...) is not asked here.
      expect(recorder.exchanges.slice(0, listing).filter((e) => (e.status ?? 500) >= 400), explain).toEqual([]);
    }, CLIENT_TIMEOUT_MS + 30_000);
  });
}
