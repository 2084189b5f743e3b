/**
 * A group drive with real clients (issue 7, "Done when"): two writers and a read-only member of
 * one group. Writer 1 copies a tree of awkward names with rclone, writer 2 copies one through a
 * davfs2 mount; the read-only member sees both with rclone and through its own davfs2 mount,
 * byte for byte, and gets 403 when rclone tries to write. A file writer 2 holds open on its
 * davfs2 mount is locked (use_locks 1), and writer 1's PUT of it answers 423. The group's
 * WebDrive URL serves the group's home to a member and 404 to an outsider.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId } from '../../src/store-client/index.js';
import { call, dataOf, groupAdmin } from '../helpers/groups.js';
import { requireBinary } from '../helpers/require-binary.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { DavfsMount, requireDavfs, STEP_TIMEOUT_MS } from './davfs2-mount.js';
import { sha256Tree, writeAwkwardTree } from './local-tree.js';
import { rcloneRemote, type RcloneRemote } from './rclone-remote.js';
import { describeRun, runProgram } from './run-program.js';

const rclone = requireBinary('rclone');
const curl = requireBinary('curl');
const davfs = requireDavfs('groups.test');
const ALL = ['read', 'write', 'delete', 'download'];

describe('a group drive with rclone and davfs2', () => {
  let f: BridgeFixture;
  let tmp: ReturnType<typeof makeTmpDir>;
  let groupUuid = '';
  let writer1: DavUser;
  let writer2: DavUser;
  let reader: DavUser;
  let outsider: DavUser;
  let homeUrl = '';
  let src1 = '';
  let src2 = '';
  const mounts: DavfsMount[] = [];

  function remote(name: string, user: DavUser, url = homeUrl): Promise<RcloneRemote> {
    return rcloneRemote({ rclonePath: rclone.path, name, url, username: user.email, password: user.password, tmpDir: tmp.dir });
  }

  function mount(name: string, user: DavUser): DavfsMount {
    const m = new DavfsMount({ mountPath: davfs.mountPath, url: homeUrl, username: user.email, password: user.password, tmpDir: tmp.dir, name });
    mounts.push(m);
    return m;
  }

  /** Every file of the group's home below `folder`, by relative path, as the store holds it. */
  async function storeFiles(folder: string): Promise<string[]> {
    const out: string[] = [];
    const walk = async (id: string, prefix: string): Promise<void> => {
      for (const entry of await f.client.listFolder(writer1.session, nodeId(id))) {
        const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
        if (entry.kind === 'folder') await walk(entry.id, rel);
        else out.push(rel);
      }
    };
    const top = (await f.client.listFolder(writer1.session, nodeId(`home:${groupUuid}`))).find((e) => e.name === folder);
    if (top) await walk(top.id, '');
    return out.sort();
  }

  beforeAll(async () => {
    f = await bridgeFixture();
    tmp = makeTmpDir('driveway-groups-');
    const ga = groupAdmin(f.client, f.admin);
    groupUuid = await ga.group('Studio');
    [writer1, writer2, reader, outsider] = await Promise.all([f.newDavUser(), f.newDavUser(), f.newDavUser(), f.newDavUser()]);
    await ga.member(groupUuid, writer1.uuid, { is_admin: true, node_permissions: ALL });
    await ga.member(groupUuid, writer2.uuid, { node_permissions: ALL });
    await ga.member(groupUuid, reader.uuid, { node_permissions: ['read', 'download'] });
    homeUrl = `${f.davUrl}/groups/Studio/home/`;
    src1 = path.join(tmp.dir, 'src1');
    writeAwkwardTree(src1, 4, 5);
    src2 = path.join(tmp.dir, 'src2');
    mkdirSync(path.join(src2, 'sub dir'), { recursive: true });
    writeFileSync(path.join(src2, 'from davfs.bin'), randomBytes(50_000));
    writeFileSync(path.join(src2, 'sub dir', 'x#y.txt'), randomBytes(3_000));
  }, 60_000);

  afterAll(async () => {
    let free = true;
    for (const m of mounts) free = (await m.cleanup()) && free;
    await f?.close();
    if (free) tmp?.remove();
  }, STEP_TIMEOUT_MS);

  rclone.describe('rclone', () => {
    it('writer 1 copies a tree of awkward names into the group, and check --download finds 0 differences', async () => {
      const w1 = await remote('WONE', writer1);
      const copy = await w1.run(['copy', src1, `${w1.prefix}w1`]);
      expect(copy.code, describeRun(copy)).toBe(0);
      const check = await w1.run(['check', src1, `${w1.prefix}w1`, '--download']);
      expect(check.stderr, describeRun(check)).toMatch(/: 0 differences found/);
      expect((await storeFiles('w1')).length).toBe(20);
    }, 240_000);

    it('the read-only member gets 403 when rclone writes, and the group is unchanged', async () => {
      const ro = await remote('RONLY', reader);
      const copy = await ro.run(['copy', src2, `${ro.prefix}ro`]);
      expect(copy.code, describeRun(copy)).not.toBe(0);
      expect(copy.stderr).toMatch(/403|Forbidden/);
      expect(await storeFiles('ro')).toEqual([]);
    }, 240_000);

    it('the group WebDrive URL serves the group’s home to a member and 404 to an outsider', async () => {
      await dataOf(call(f.client, writer1.session, 'POST', `/api/groups/${groupUuid}/webdrive`, { endpoint: 'studio', show_url_to_group_members: true }));
      const member = await remote('WDMEMBER', reader, `${f.davUrl}/webdrive/studio/`);
      const listed = await member.run(['lsjson', '-R', `${member.prefix}w1`]);
      expect(listed.code, describeRun(listed)).toBe(0);
      expect((JSON.parse(listed.stdout) as Array<{ IsDir: boolean }>).filter((e) => !e.IsDir)).toHaveLength(20);
      const stranger = await remote('WDOUT', outsider, `${f.davUrl}/webdrive/studio/`);
      const refused = await stranger.run(['lsjson', stranger.prefix]);
      expect(refused.code, describeRun(refused)).not.toBe(0);
      expect(refused.stderr).toMatch(/404|not found/i);
    }, 240_000);
  });

  davfs.describe('davfs2', () => {
    it('writer 2 copies a tree through its mount; the read-only member sees both writers’ files byte for byte on its own', async (ctx) => {
      const w2 = mount('w2', writer2);
      const up = await w2.mount();
      if (w2.fuseRefused) ctx.skip(`FUSE unusable here: ${w2.fuseRefused}`);
      expect(up.code, describeRun(up)).toBe(0);
      const cp = await runProgram('cp', ['-r', src2, path.join(w2.mnt, 'w2')], { timeoutMs: STEP_TIMEOUT_MS });
      expect(cp.code, describeRun(cp)).toBe(0);
      expect((await w2.unmount()).code).toBe(0);
      expect(await storeFiles('w2')).toEqual(['from davfs.bin', 'sub dir/x#y.txt']);

      const ro = mount('ro', reader);
      expect((await ro.mount()).code).toBe(0);
      expect(Object.fromEntries(await sha256Tree(path.join(ro.mnt, 'w2')))).toEqual(Object.fromEntries(await sha256Tree(src2)));
      expect(Object.fromEntries(await sha256Tree(path.join(ro.mnt, 'w1')))).toEqual(Object.fromEntries(await sha256Tree(src1)));
      expect((await ro.unmount()).code).toBe(0);
    }, 4 * STEP_TIMEOUT_MS);

    curl.describe('locks', () => {
      it('a file writer 2 holds open on davfs2 is locked: writer 1’s PUT answers 423, and succeeds once it is closed', async (ctx) => {
        const w2 = mount('lock', writer2);
        const up = await w2.mount();
        if (w2.fuseRefused) ctx.skip(`FUSE unusable here: ${w2.fuseRefused}`);
        expect(up.code, describeRun(up)).toBe(0);
        const file = path.join(w2.mnt, 'held.txt');
        // davfs2 locks a file it opens for writing (use_locks 1) and unlocks it after the upload.
        const holder = runProgram('sh', ['-c', `exec 3>"${file}"; echo held >&3; sleep 6; exec 3>&-`], { timeoutMs: 60_000 });
        const deadline = Date.now() + 20_000;
        while ((await f.bridge.services.locks.count()) === 0 && Date.now() < deadline) await sleep(100);
        expect(await f.bridge.services.locks.count()).toBeGreaterThan(0);
        const put = (body: string) =>
          runProgram(curl.path, ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-u', `${writer1.email}:${writer1.password}`, '-T', '-', `${homeUrl}held.txt`], { input: body, timeoutMs: 30_000 });
        expect((await put('writer 1')).stdout).toBe('423');
        expect((await holder).code).toBe(0);
        expect((await w2.unmount()).code).toBe(0);
        expect((await put('writer 1 after')).stdout).toMatch(/^20[14]$/);
      }, 4 * STEP_TIMEOUT_MS);
    });
  });
});
