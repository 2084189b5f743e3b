/**
 * Real clients on a WebDrive URL, `/webdrive/<endpoint>/` (issue 6, "Done when"): litmus's
 * basic suite passes there, rclone copies a tree of awkward names and `check --download` finds 0
 * differences, and a davfs2 mount of the URL takes a tree with cp -r and gives every byte back;
 * the store holds the same bytes in the owner's home. The endpoint is set through the store's API
 * as a user would. Another user's view of the same URL (404) is in the integration suite.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { DavfsMount, requireDavfs, STEP_TIMEOUT_MS } from './davfs2-mount.js';
import { parseLitmusOutput } from './litmus-output.js';
import { sha256Tree, writeAwkwardTree } from './local-tree.js';
import { rcloneRemote, type RcloneRemote } from './rclone-remote.js';
import { describeRun, runProgram } from './run-program.js';
import { storeTreeSha256 } from './store-state.js';

const litmus = requireBinary('litmus');
const rclone = requireBinary('rclone');
const davfs = requireDavfs('webdrive.test');

const ENDPOINT = 'mydrive';

describe('real clients on /webdrive/<endpoint>/', () => {
  let f: BridgeFixture;
  let user: DavUser;
  let tmp: ReturnType<typeof makeTmpDir>;
  let mountUrl = '';

  beforeAll(async () => {
    f = await bridgeFixture();
    user = await f.newDavUser();
    tmp = makeTmpDir('driveway-webdrive-');
    const res = await f.client.http.requestRaw({ method: 'POST', path: '/api/user/webdrive', token: user.session.token, json: { endpoint: ENDPOINT } });
    expect(res.status).toBe(200);
    mountUrl = `${f.davUrl}/webdrive/${ENDPOINT}/`;
  });
  afterAll(async () => {
    await f?.close();
    tmp?.remove();
  });

  litmus.describe('litmus basic', () => {
    it('passes every test of the basic suite below the WebDrive URL', async () => {
      const mkcol = await fetch(`${mountUrl}litmus/`, { method: 'MKCOL', headers: { authorization: user.auth } });
      expect(mkcol.status).toBe(201);
      const run = await runProgram(litmus.path, ['-k', `${mountUrl}litmus/`, user.email, user.password], {
        cwd: tmp.dir,
        env: { ...process.env, TESTS: 'basic' },
        timeoutMs: 120_000,
      });
      const report = parseLitmusOutput(run.stdout);
      const notPassed = report.tests.filter((t) => t.result !== 'pass').map((t) => `${t.number}. ${t.name}: ${t.result} ${t.reason ?? ''}`);
      expect(notPassed, describeRun(run)).toEqual([]);
      expect(report.summaries, describeRun(run)).toEqual([{ suite: 'basic', run: 16, passed: 16, failed: 0 }]);
    }, 150_000);
  });

  rclone.describe('rclone', () => {
    let remote: RcloneRemote;
    let src: string;
    beforeAll(async () => {
      src = path.join(tmp.dir, 'rclone-src');
      writeAwkwardTree(src, 8, 6);
      remote = await rcloneRemote({ rclonePath: rclone.path, name: 'WD', url: mountUrl, username: user.email, password: user.password, tmpDir: tmp.dir });
    });

    it('copies a tree of awkward names, check --download finds 0 differences, the store holds the same bytes', async () => {
      const copy = await remote.run(['copy', src, `${remote.prefix}rc`]);
      expect(copy.code, describeRun(copy)).toBe(0);
      const check = await remote.run(['check', src, `${remote.prefix}rc`, '--download']);
      expect(check.code, describeRun(check)).toBe(0);
      expect(check.stderr).toMatch(/: 0 differences found/);
      expect(check.stderr).toMatch(/: 48 matching files/);
      expect(Object.fromEntries(await storeTreeSha256(f, user, ['rc']))).toEqual(Object.fromEntries(await sha256Tree(src)));
    }, 240_000);

    it('mounts a two-factor account with an app password, and not with the account password', async () => {
      const guarded = await f.newDavUser();
      const call = (method: 'POST', path: string, json: unknown) => f.client.http.requestRaw({ method, path, token: guarded.session.token, json });
      expect((await call('POST', '/api/user/webdrive', { endpoint: 'guarded' })).status).toBe(200);
      expect((await call('POST', '/api/user/2fa', { twofa: true })).status).toBe(200);
      const created = await call('POST', '/api/user/app_passwords', { name: 'rclone on the laptop' });
      const appPassword = (created.body as { data: { password: string } }).data.password;
      const url = `${f.davUrl}/webdrive/guarded/`;
      const withPassword = await rcloneRemote({ rclonePath: rclone.path, name: 'PW', url, username: guarded.email, password: guarded.password, tmpDir: tmp.dir });
      const refused = await withPassword.run(['lsjson', withPassword.prefix]);
      expect(refused.code, describeRun(refused)).not.toBe(0);
      expect(refused.stderr).toMatch(/401|Unauthorized/i);
      const withApp = await rcloneRemote({ rclonePath: rclone.path, name: 'AP', url, username: guarded.email, password: appPassword, tmpDir: tmp.dir });
      const copy = await withApp.run(['copy', src, `${withApp.prefix}fromapp`]);
      expect(copy.code, describeRun(copy)).toBe(0);
      const check = await withApp.run(['check', src, `${withApp.prefix}fromapp`, '--download']);
      expect(check.stderr, describeRun(check)).toMatch(/: 0 differences found/);
    }, 240_000);
  });

  davfs.describe('davfs2', () => {
    let mount: DavfsMount;
    let src: string;
    beforeAll(() => {
      src = path.join(tmp.dir, 'davfs-src');
      mkdirSync(path.join(src, 'nested dir'), { recursive: true });
      writeFileSync(path.join(src, 'plain.txt'), randomBytes(1_000));
      writeFileSync(path.join(src, 'hash#tag ?.bin'), randomBytes(70_000));
      writeFileSync(path.join(src, 'nested dir', 'café.txt'.normalize('NFC')), randomBytes(5_000));
      mount = new DavfsMount({ mountPath: davfs.mountPath, url: mountUrl, username: user.email, password: user.password, tmpDir: tmp.dir, name: 'wd' });
    });
    afterAll(async () => {
      await mount?.cleanup();
    }, STEP_TIMEOUT_MS);

    it('mounts the WebDrive URL, takes a tree with cp -r, and gives every byte back after a remount', async (ctx) => {
      const mounted = await mount.mount();
      if (mount.fuseRefused) ctx.skip(`FUSE unusable here: ${mount.fuseRefused}`);
      expect(mounted.code, describeRun(mounted)).toBe(0);
      const copy = await runProgram('cp', ['-r', src, path.join(mount.mnt, 'dv')], { timeoutMs: STEP_TIMEOUT_MS });
      expect(copy.code, describeRun(copy)).toBe(0);
      const expected = Object.fromEntries(await sha256Tree(src));
      expect(Object.fromEntries(await sha256Tree(path.join(mount.mnt, 'dv')))).toEqual(expected);
      const off = await mount.unmount();
      expect(off.code, describeRun(off)).toBe(0);
      expect(Object.fromEntries(await storeTreeSha256(f, user, ['dv']))).toEqual(expected);
      const again = await mount.mount();
      expect(again.code, describeRun(again)).toBe(0);
      expect(Object.fromEntries(await sha256Tree(path.join(mount.mnt, 'dv')))).toEqual(expected);
      expect((await mount.unmount()).code).toBe(0);
    }, 4 * STEP_TIMEOUT_MS);
  });
});
