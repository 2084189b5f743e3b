/**
 * Issue 14 ("Done when"): each of the eight findings tried with real clients, curl against the
 * store's REST API and the bridge, rclone through the bridge. Setup (users, groups, files) goes
 * through the store's API; every request that tries a finding is sent by curl or rclone, nothing
 * of the test's own HTTP stack in between. test/security/ holds the finer-grained tests of each.
 *
 * What real clients showed (kept as tests below, see docs/bridge-design.md "A refusal changes
 * nothing"): rclone 1.60 sends `Overwrite: F` on its server-side COPY and MOVE, deletes an
 * existing destination itself before a `moveto`, and deletes the destination after any refused
 * PUT ("remove failed upload"). The bridge's refusal keeps the old file; rclone's own DELETE then
 * moves it to the trash (whole) unless the caller may not delete there.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId } from '../../src/store-client/index.js';
import { insertShare } from '../../src/store/storage/shares.js';
import { call, dataOf, groupAdmin, readMembershipRow, type GroupAdmin } from '../helpers/groups.js';
import { requireBinary } from '../helpers/require-binary.js';
import { createFolder, uploadFile } from '../helpers/seed.js';
import { LATEST, multipartFile, readText } from '../helpers/sharing.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { rcloneRemote, type RcloneRemote } from './rclone-remote.js';
import { describeRun, runProgram, type ProgramRun } from './run-program.js';

const curl = requireBinary('curl');
const rclone = requireBinary('rclone');

const ALL = ['read', 'write', 'delete', 'download'];
const ALL_SHARE = ['public_create', 'public_delete', 'private_create', 'private_delete', 'upload_link_create', 'upload_link_delete'];
const LOCKINFO =
  '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
const CURL_TIMEOUT_MS = 30_000;

interface CurlAnswer {
  status: number;
  /** Headers of the last response, lower-case names, values joined with ", ". */
  headers: Record<string, string>;
  body: string;
  run: ProgramRun;
}

let tmp: ReturnType<typeof makeTmpDir>;
beforeAll(() => {
  tmp = makeTmpDir('driveway-hardening-');
});
afterAll(() => {
  tmp?.remove();
});

/** curl with these arguments; the last response's status, headers (curl's %{header_json}) and body. */
async function curlDo(args: readonly string[], input?: string): Promise<CurlAnswer> {
  const bodyFile = path.join(tmp.dir, `body-${randomUUID()}`);
  const run = await runProgram(curl.path, ['-sS', '-o', bodyFile, '-w', '%{http_code}\n%{header_json}', ...args], {
    timeoutMs: CURL_TIMEOUT_MS,
    ...(input === undefined ? {} : { input }),
  });
  const newline = run.stdout.indexOf('\n');
  const status = Number(run.stdout.slice(0, newline));
  const headers: Record<string, string> = {};
  try {
    for (const [name, values] of Object.entries(JSON.parse(run.stdout.slice(newline + 1)) as Record<string, string[]>)) headers[name.toLowerCase()] = values.join(', ');
  } catch {
    // No response at all (the run says why).
  }
  let body = '';
  try {
    body = readFileSync(bodyFile, 'utf8');
  } catch {
    // No body written.
  }
  return { status, headers, body, run };
}

/** Why a curl answer is not what a test expected. */
const shown = (a: CurlAnswer): string => `${describeRun(a.run)}\n--- body ---\n${a.body.slice(0, 2000)}`;

const bearer = (token: string) => ['-H', `Authorization: Bearer ${token}`];
const json = (value: unknown) => ['-H', 'Content-Type: application/json', '--data-binary', JSON.stringify(value)];
const basicUser = (u: { email: string; password: string }) => ['-u', `${u.email}:${u.password}`];

curl.describe('issue 14 with real clients (curl, rclone)', () => {
  let f: BridgeFixture;
  let ga: GroupAdmin;

  const rcloneAs = (name: string, user: DavUser, url: string): Promise<RcloneRemote> =>
    rcloneRemote({ rclonePath: rclone.path, name, url, username: user.email, password: user.password, tmpDir: tmp.dir, timeoutMs: 60_000 });
  const localFile = (name: string, content: string | Buffer): string => {
    const file = path.join(tmp.dir, name);
    writeFileSync(file, content);
    return file;
  };

  beforeAll(async () => {
    // cacheTtlMs 0: rclone sees at once what the setup did through the store's API.
    f = await bridgeFixture({ bridgeFlags: { cacheTtlMs: 0, deadPropsMaxBytesPerOwner: 4096 } });
    ga = groupAdmin(f.client, f.admin);
  });
  afterAll(async () => {
    await f?.close();
  });

  describe('finding 1: a share gives at most what its creator holds', () => {
    let vault = '';
    let side = '';
    let owner: DavUser;
    let mallory: DavUser;
    let accomplice: DavUser;
    let secrets = '';
    let plan = '';
    const sharesOn = (node: string): number => (f.store.ctx.db!.prepare('SELECT COUNT(*) AS n FROM shares WHERE node_uuid = ?').get(node) as { n: number }).n;
    const vaultNames = async (): Promise<string[]> => (await f.client.listFolder(owner.session, nodeId(secrets))).map((e) => e.name).sort();

    beforeAll(async () => {
      vault = await ga.group('Vault');
      side = await ga.group('Side Room');
      [owner, mallory, accomplice] = await Promise.all([f.newDavUser(), f.newDavUser(), f.newDavUser()]);
      await ga.member(vault, owner.uuid, { node_permissions: ALL, share_permissions: ALL_SHARE });
      // Read-only in the vault, yet allowed to make every kind of share; a member of G2 too.
      await ga.member(vault, mallory.uuid, { node_permissions: ['read', 'download'], share_permissions: ALL_SHARE });
      await ga.member(side, mallory.uuid, { node_permissions: ['read'] });
      await ga.member(side, accomplice.uuid, { node_permissions: ['read'] });
      secrets = await createFolder(f.client, owner.session, `home:${vault}`, 'Secrets');
      plan = await uploadFile(f.client, owner.session, secrets, 'plan.txt', 'the vault plan');
    });

    it('curl: a read-only member’s writable private share of a G1 folder to G2 is refused (403), and none is made', async () => {
      const res = await curlDo([...bearer(mallory.session.token), ...json({ type: 'private', recipients: [side], writable: true }), `${f.store.url}/api/nodes/${secrets}/shares`]);
      expect(res.status, shown(res)).toBe(403);
      expect(JSON.parse(res.body)).toMatchObject({ status: 'error', code: 'forbidden', msg: expect.stringMatching(/write permission required/) });
      expect(sharesOn(secrets)).toBe(0);
    });

    rclone.describe('rclone as a G2 member', () => {
      let acc: RcloneRemote;
      const upload = (): string => localFile('overwrite.txt', 'overwritten by rclone');

      beforeAll(async () => {
        acc = await rcloneAs('ACC', accomplice, `${f.davUrl}/groups/Side%20Room/shared_with_you/`);
      });

      async function expectRefusedAndIntact(): Promise<void> {
        const read = await acc.run(['cat', `${acc.prefix}Secrets/plan.txt`]);
        expect(read.stdout, describeRun(read)).toBe('the vault plan');
        for (const args of [
          ['copyto', upload(), `${acc.prefix}Secrets/plan.txt`],
          ['copyto', upload(), `${acc.prefix}Secrets/planted.txt`],
          ['deletefile', `${acc.prefix}Secrets/plan.txt`],
        ]) {
          const run = await acc.run(args);
          expect(run.code, describeRun(run)).not.toBe(0);
          expect(run.stderr, describeRun(run)).toMatch(/403 Forbidden/);
        }
        expect(await readText(f.store, owner.session, plan)).toBe('the vault plan');
        expect(await vaultNames()).toEqual(['plan.txt']);
      }

      it('through a read-only share (made with curl): copyto and deletefile onto the G1 file are refused, and it stays whole', async () => {
        const made = await curlDo([...bearer(mallory.session.token), ...json({ type: 'private', recipients: [side] }), `${f.store.url}/api/nodes/${secrets}/shares`]);
        expect(made.status, shown(made)).toBe(200);
        await expectRefusedAndIntact();
        const shareUuid = (JSON.parse(made.body) as { data: { share_uuid: string } }).data.share_uuid;
        expect((await curlDo(['-X', 'DELETE', ...bearer(mallory.session.token), `${f.store.url}/api/shares/${shareUuid}`])).status).toBe(200);
      }, 120_000);

      it('through a writable share a database of the old code still holds: the same refusals', async () => {
        // As the code before the fix stored the share it let a read-only member make.
        await insertShare(
          f.store.ctx.storage.sql,
          { uuid: randomUUID(), type: 'private', node_uuid: secrets, creator_uuid: mallory.uuid, token_hash: null, password_hash: null, expires: null, writable: 1, created: Date.now() },
          [{ type: 'Group', uuid: side }],
        );
        await expectRefusedAndIntact();
      }, 120_000);
    });

    it('curl: a member without download cannot make a public link (403), and an old link whose creator lost download answers 404', async () => {
      const peeker = await f.newDavUser();
      await ga.member(vault, peeker.uuid, { node_permissions: ['read'], share_permissions: ALL_SHARE });
      const refused = await curlDo([...bearer(peeker.session.token), ...json({ type: 'public' }), `${f.store.url}/api/nodes/${plan}/shares`]);
      expect(refused.status, shown(refused)).toBe(403);
      expect(refused.body).toMatch(/download permission required/);
      expect(sharesOn(plan)).toBe(0);

      const sharer = await f.newDavUser();
      await ga.member(vault, sharer.uuid, { node_permissions: ALL, share_permissions: ALL_SHARE });
      const made = await curlDo([...bearer(sharer.session.token), ...json({ type: 'public' }), `${f.store.url}/api/nodes/${plan}/shares`]);
      expect(made.status, shown(made)).toBe(200);
      const link = new URL((JSON.parse(made.body) as { data: { url: string } }).data.url, f.store.url).href;
      const before = await curlDo([link]);
      expect({ status: before.status, body: before.body }).toEqual({ status: 200, body: 'the vault plan' });
      await dataOf(call(f.client, f.admin, 'PUT', `/api/admin/groups/${vault}/users/${sharer.uuid}`, { node_permissions: ['read', 'write', 'delete'] }));
      const after = await curlDo([link]);
      expect(after.status, shown(after)).toBe(404);
      expect(after.body).not.toContain('the vault plan');
    });
  });

  describe('finding 2: nothing we serve runs as us', () => {
    let user: DavUser;
    const files: Record<string, string> = {};
    const links: Record<string, string> = {};
    const CONTENT: Record<string, string> = {
      'page.html': '<html><body><script>document.title = "ran"</script></body></html>',
      'drawing.svg': '<svg xmlns="http://www.w3.org/2000/svg"><script>document.title = "ran"</script></svg>',
    };

    beforeAll(async () => {
      user = await f.newDavUser();
      for (const [name, content] of Object.entries(CONTENT)) {
        files[name] = await uploadFile(f.client, user.session, 'home', name, content);
        links[name] = (await dataOf<{ url: string }>(call(f.client, user.session, 'POST', `/api/nodes/${files[name]}/shares`, { type: 'public' }))).url;
      }
    });

    function expectNotRunnable(res: CurlAnswer, where: string): void {
      expect(res.status, shown(res)).toBe(200);
      expect({
        where,
        nosniff: res.headers['x-content-type-options'],
        sandbox: /(^|;\s*)sandbox(;|$)/.test(res.headers['content-security-policy'] ?? ''),
        allows: /allow-/.test(res.headers['content-security-policy'] ?? ''),
        disposition: res.headers['content-disposition'],
      }).toEqual({ where, nosniff: 'nosniff', sandbox: true, allows: false, disposition: expect.stringMatching(/^attachment;/) });
    }

    for (const name of Object.keys(CONTENT)) {
      it(`${name}: the view URL, its public link and the bridge’s GET send nosniff, a sandbox and an attachment`, async () => {
        const view = `${f.store.url}/resources/auth/view/${user.session.fileAccessKey}/${files[name]}/${LATEST}/${name}`;
        expectNotRunnable(await curlDo([view]), 'view');
        expectNotRunnable(await curlDo([new URL(links[name] as string, f.store.url).href]), 'public link');
        const dav = await curlDo([...basicUser(user), `${f.davUrl}/home/${name}`]);
        expectNotRunnable(dav, 'bridge GET');
        expect(dav.body).toBe(CONTENT[name]);
      });
    }
  });

  describe('finding 4: locks need the right to write, and are capped', () => {
    let writer: DavUser;
    let reader: DavUser;
    const lock = (as: DavUser, url: string, depth: string) =>
      curlDo(['-X', 'LOCK', ...basicUser(as), '-H', `Depth: ${depth}`, '-H', 'Timeout: Infinite', '-H', 'Content-Type: application/xml', '--data-binary', LOCKINFO, url]);

    beforeAll(async () => {
      const ops = await ga.group('Ops');
      [writer, reader] = await Promise.all([f.newDavUser(), f.newDavUser()]);
      await ga.member(ops, writer.uuid, { node_permissions: ALL });
      await ga.member(ops, reader.uuid, { node_permissions: ['read', 'download'] });
      await uploadFile(f.client, writer.session, `home:${ops}`, 'rota.txt', 'rota v1');
    });

    it('curl: a read-only member’s Depth infinity, Timeout Infinite LOCK of /groups/Ops/ is refused (403), and the writer still writes', async () => {
      for (const url of [`${f.davUrl}/groups/Ops/`, `${f.davUrl}/groups/Ops/home/`]) {
        const res = await lock(reader, url, 'infinity');
        expect(res.status, shown(res)).toBe(403);
      }
      expect(await f.bridge.services.locks.count()).toBe(0);
      const put = await curlDo([...basicUser(writer), '-T', '-', `${f.davUrl}/groups/Ops/home/rota.txt`], 'rota v2');
      expect(put.status, shown(put)).toBe(204);
    });

    it('curl: a writer’s Timeout Infinite LOCK of a file is granted for Second-3600', async () => {
      const res = await lock(writer, `${f.davUrl}/groups/Ops/home/rota.txt`, '0');
      expect(res.status, shown(res)).toBe(200);
      expect(res.body).toContain('<D:timeout>Second-3600</D:timeout>');
      const unlock = await curlDo(['-X', 'UNLOCK', ...basicUser(writer), '-H', `Lock-Token: ${res.headers['lock-token']}`, `${f.davUrl}/groups/Ops/home/rota.txt`]);
      expect(unlock.status, shown(unlock)).toBe(204);
    });
  });

  rclone.describe('finding 5: a refusal changes nothing', () => {
    let team = '';
    let writer: DavUser;

    beforeAll(async () => {
      team = await ga.group('Refusals', { quotaBytes: 1000 });
      writer = await f.newDavUser();
      await ga.member(team, writer.uuid, { node_permissions: ALL });
      await uploadFile(f.client, writer.session, `home:${team}`, 'secret.txt', 'group secret');
    });

    async function member(permissions: string[], quotaBytes?: number): Promise<{ user: DavUser; remote: RcloneRemote }> {
      const user = await f.newDavUser(quotaBytes === undefined ? {} : { quotaBytes });
      await ga.member(team, user.uuid, { node_permissions: permissions });
      const name = `M${randomBytes(4).toString('hex').replace(/\d/g, (d) => 'ABCDEFGHIJ'[Number(d)] as string).toUpperCase()}`;
      return { user, remote: await rcloneAs(name, user, `${f.davUrl}/`) };
    }

    async function cat(remote: RcloneRemote, target: string): Promise<string> {
      const run = await remote.run(['cat', `${remote.prefix}${target}`]);
      expect(run.code, describeRun(run)).toBe(0);
      return run.stdout;
    }

    it('rclone copyto (PUT) over a group file, refused by the group’s quota (507): the file keeps its content', async () => {
      // Without delete, so rclone's own DELETE after the refused PUT is refused too.
      const { remote } = await member(['read', 'write', 'download']);
      await uploadFile(f.client, writer.session, `home:${team}`, 'budget.txt', 'budget v1');
      const run = await remote.run(['copyto', localFile('big.bin', Buffer.alloc(2000, 7)), `${remote.prefix}groups/Refusals/home/budget.txt`]);
      expect(run.code, describeRun(run)).not.toBe(0);
      expect(run.stderr).toMatch(/507 Insufficient Storage/);
      expect(await cat(remote, 'groups/Refusals/home/budget.txt')).toBe('budget v1');
    }, 60_000);

    it('rclone copyto (PUT) over an own file, refused by quota (507): the bridge writes nothing; rclone then deletes it itself, and the trash holds the old bytes', async () => {
      const { user, remote } = await member(['read'], 1000);
      await uploadFile(f.client, user.session, 'home', 'dest.txt', 'old own bytes');
      const run = await remote.run(['copyto', localFile('big2.bin', Buffer.alloc(2000, 8)), `${remote.prefix}home/dest.txt`]);
      expect(run.code, describeRun(run)).not.toBe(0);
      expect(run.stderr).toMatch(/507 Insufficient Storage/);
      // rclone's "remove failed upload": a DELETE right after the refused PUT.
      expect(await cat(remote, 'trash/dest.txt')).toBe('old own bytes');
      expect((await f.client.currentUser(user.session)).diskUsedBytes).toBe('old own bytes'.length);
    }, 60_000);

    it('rclone copyto (server-side COPY) of a file it may not download: refused, onto an existing file (412, rclone says Overwrite: F) or a new name (403)', async () => {
      const { user, remote } = await member(['read', 'write', 'delete']);
      await uploadFile(f.client, user.session, 'home', 'dest.txt', 'my old bytes, not the size of the secret');
      const onto = await remote.run(['copyto', `${remote.prefix}groups/Refusals/home/secret.txt`, `${remote.prefix}home/dest.txt`]);
      expect(onto.code, describeRun(onto)).not.toBe(0);
      expect(onto.stderr).toMatch(/412 Precondition Failed/);
      const fresh = await remote.run(['copyto', `${remote.prefix}groups/Refusals/home/secret.txt`, `${remote.prefix}home/fresh.txt`]);
      expect(fresh.code, describeRun(fresh)).not.toBe(0);
      expect(fresh.stderr).toMatch(/403 Forbidden/);
      expect(await cat(remote, 'home/dest.txt')).toBe('my old bytes, not the size of the secret');
      expect((await f.client.listFolder(user.session, nodeId('home'))).map((e) => e.name)).toEqual(['dest.txt']);
    }, 60_000);

    it('curl COPY and MOVE with Overwrite: T onto an existing file, refused (403 no download, 507 quota, 403 no delete): rclone cat shows it unchanged', async () => {
      const noDownload = await member(['read', 'write', 'delete']);
      await uploadFile(f.client, noDownload.user.session, 'home', 'dest.txt', 'kept 1');
      const copy = await curlDo(['-X', 'COPY', ...basicUser(noDownload.user), '-H', `Destination: ${f.davUrl}/home/dest.txt`, '-H', 'Overwrite: T', `${f.davUrl}/groups/Refusals/home/secret.txt`]);
      expect(copy.status, shown(copy)).toBe(403);
      expect(await cat(noDownload.remote, 'home/dest.txt')).toBe('kept 1');

      const tight = await member(['read'], 1000);
      await uploadFile(f.client, tight.user.session, 'home', 'big.bin', 'b'.repeat(600));
      await uploadFile(f.client, tight.user.session, 'home', 'dest.txt', 'kept 2');
      const full = await curlDo(['-X', 'COPY', ...basicUser(tight.user), '-H', `Destination: ${f.davUrl}/home/dest.txt`, '-H', 'Overwrite: T', `${f.davUrl}/home/big.bin`]);
      expect(full.status, shown(full)).toBe(507);
      expect(await cat(tight.remote, 'home/dest.txt')).toBe('kept 2');

      const noDelete = await member(['read', 'write', 'download']);
      await uploadFile(f.client, noDelete.user.session, 'home', 'dest.txt', 'kept 3');
      const move = await curlDo(['-X', 'MOVE', ...basicUser(noDelete.user), '-H', `Destination: ${f.davUrl}/home/dest.txt`, '-H', 'Overwrite: T', `${f.davUrl}/groups/Refusals/home/secret.txt`]);
      expect(move.status, shown(move)).toBe(403);
      expect(await cat(noDelete.remote, 'home/dest.txt')).toBe('kept 3');
      expect(await cat(noDelete.remote, 'groups/Refusals/home/secret.txt')).toBe('group secret');
      for (const who of [noDownload, tight, noDelete]) expect((await f.client.listFolder(who.user.session, nodeId('trash'))).map((e) => e.name)).toEqual([]);
    }, 60_000);
  });

  describe('finding 7: dead properties inside a budget', () => {
    it('curl PROPPATCH past the per-owner budget (4 KiB here) answers 207 with 507 and stores nothing', async () => {
      const user = await f.newDavUser({ quotaBytes: 1000 });
      const proppatch = (name: string, bytes: number) =>
        curlDo([
          '-X',
          'PROPPATCH',
          ...basicUser(user),
          '-H',
          'Content-Type: application/xml',
          '--data-binary',
          `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:blob>${'x'.repeat(bytes)}</Z:blob></D:prop></D:set></D:propertyupdate>`,
          `${f.davUrl}/home/${name}`,
        ]);
      for (const name of ['a.txt', 'b.txt']) expect((await curlDo([...basicUser(user), '-T', '-', `${f.davUrl}/home/${name}`], '')).status).toBe(201);
      const first = await proppatch('a.txt', 3000);
      expect(first.status, shown(first)).toBe(207);
      expect(first.body).toMatch(/HTTP\/1\.1 200/);
      const second = await proppatch('b.txt', 3000);
      expect(second.status, shown(second)).toBe(207);
      expect(second.body).toMatch(/HTTP\/1\.1 507/);
      expect(await f.bridge.services.props.ownerBytes(user.uuid)).toBeLessThanOrEqual(4096);
      expect(await f.bridge.services.props.ownerBytes(user.uuid)).toBeGreaterThan(3000);
    });
  });

  describe('finding 8: an app-password session and group administration', () => {
    it('curl with an app-password session cannot add a member, nor make one an administrator (403)', async () => {
      const team = await ga.group('Admins');
      const [lead, member, outsider] = await Promise.all([f.newDavUser(), f.newDavUser(), f.newDavUser()]);
      await ga.member(team, lead.uuid, { is_admin: true, node_permissions: ALL });
      await ga.member(team, member.uuid, { node_permissions: ['read'] });
      const app = await dataOf<{ password: string }>(call(f.client, lead.session, 'POST', '/api/user/app_passwords', { name: 'phone' }));
      const login = await curlDo([...json({ username: lead.email, password: app.password }), `${f.store.url}/auth`]);
      expect(login.status, shown(login)).toBe(200);
      const appToken = (JSON.parse(login.body) as { token: string }).token;
      const before = await readMembershipRow(f.store, team, member.uuid);
      const add = await curlDo([...bearer(appToken), ...json({ user: outsider.uuid, permissions: { is_admin: true } }), `${f.store.url}/api/groups/${team}/users`]);
      const promote = await curlDo(['-X', 'PUT', ...bearer(appToken), ...json({ is_admin: true }), `${f.store.url}/api/groups/${team}/users/${member.uuid}`]);
      for (const res of [add, promote]) {
        expect(res.status, shown(res)).toBe(403);
        expect(JSON.parse(res.body)).toMatchObject({ status: 'error', code: 'forbidden', msg: expect.stringMatching(/app password/) });
      }
      expect(await readMembershipRow(f.store, team, outsider.uuid)).toBeUndefined();
      expect(await readMembershipRow(f.store, team, member.uuid)).toEqual(before);
      // The account password's session still may.
      const allowed = await curlDo([...bearer(lead.session.token), ...json({ user: outsider.uuid, permissions: { node_permissions: ['read'] } }), `${f.store.url}/api/groups/${team}/users`]);
      expect(allowed.status, shown(allowed)).toBe(200);
    });
  });
});

/**
 * Findings 6 and 3 on a fixture of their own: short connection limits, and rate-limit counters
 * (per client address, all of them 127.0.0.1 here) that must not lock out the suites above.
 */
curl.describe('issue 14 with curl: slow clients and parallel guessing', () => {
  const IDLE_MS = 1_000;
  const REQUEST_MS = 4_000;
  const LIMIT = 10;
  const PARALLEL = 50;
  let f: BridgeFixture;
  let user: DavUser;
  let guessed: DavUser;
  let guessedAtBridge: DavUser;

  beforeAll(async () => {
    f = await bridgeFixture({ flags: { 'http.idleTimeoutMs': IDLE_MS, 'http.headersTimeoutMs': 2_000, 'http.requestTimeoutMs': REQUEST_MS } });
    [user, guessed, guessedAtBridge] = await Promise.all([f.newDavUser(), f.newDavUser(), f.newDavUser()]);
  });
  afterAll(async () => {
    await f?.close();
  });

  /**
   * curl uploading its stdin with a declared length: `first` at once; from `resumeAfterMs` on,
   * `chunk` every `everyMs`; the pipe held open. Answers when curl ends (the server answered or
   * cut it) or after `giveUpMs` (curl is then stopped by its PID and `ended` is false). A curl
   * waiting on its stdin is blocked in a read and notices a cut connection only at its next
   * write: a stall test resumes feeding after the idle limit, so a cut shows as a send failure
   * at once, while a connection still open would take the bytes and last until `giveUpMs`.
   */
  function fedCurl(
    args: readonly string[],
    feed: { length: number; first: Buffer; chunk: Buffer; everyMs: number; resumeAfterMs: number; giveUpMs: number },
  ): Promise<{ ended: boolean; code: number | null; ms: number; status: string; run: string }> {
    return new Promise((resolve) => {
      const started = performance.now();
      const child = spawn(curl.path, ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-H', `Content-Length: ${feed.length}`, '-H', 'Transfer-Encoding:', '-T', '-', ...args], {
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.stdin.on('error', () => undefined);
      child.stdin.write(feed.first);
      let sent = feed.first.length;
      let feeder: NodeJS.Timeout | undefined;
      const resume = setTimeout(() => {
        feeder = setInterval(() => {
          if (sent + feed.chunk.length >= feed.length || child.stdin.destroyed) return;
          child.stdin.write(feed.chunk);
          sent += feed.chunk.length;
        }, feed.everyMs);
      }, feed.resumeAfterMs);
      let ended = true;
      const giveUp = setTimeout(() => {
        ended = false;
        if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
      }, feed.giveUpMs);
      child.on('close', (code) => {
        clearTimeout(resume);
        clearInterval(feeder);
        clearTimeout(giveUp);
        child.stdin.destroy();
        resolve({ ended, code, ms: performance.now() - started, status: stdout, run: `curl exit ${code}, status ${stdout}, ${sent} bytes fed, stderr ${stderr.trim()}` });
      });
    });
  }

  describe('finding 6: bounded clients', () => {
    let inboxLink = '';
    let inbox = '';
    const inboxNames = async () => (await f.client.listFolder(user.session, nodeId(inbox))).map((e) => e.name).sort();
    const oldBytes = async () => (await curlDo([...basicUser(user), `${f.davUrl}/home/stalled.bin`])).body;

    beforeAll(async () => {
      await uploadFile(f.client, user.session, 'home', 'stalled.bin', 'old bytes');
      inbox = await createFolder(f.client, user.session, 'home', 'inbox');
      inboxLink = (await dataOf<{ url: string }>(call(f.client, user.session, 'POST', `/api/nodes/${inbox}/shares`, { type: 'upload' }))).url;
    });

    it('curl --limit-rate 200K: a slow but steady PUT through the bridge and an upload through a link pass, though each takes longer than the idle limit', async () => {
      // curl 7.88 rate-limits in 64 KiB bursts: at 200 KB/s the gaps (~0.33 s) stay under the idle limit.
      const body = randomBytes(400_000);
      const file = path.join(tmp.dir, 'steady.bin');
      writeFileSync(file, body);
      const put = await curlDo(['--limit-rate', '200K', ...basicUser(user), '-T', file, `${f.davUrl}/home/steady.bin`]);
      expect(put.status, shown(put)).toBe(201);
      expect(put.run.ms).toBeGreaterThan(IDLE_MS * 1.5);
      const upload = await curlDo(['--limit-rate', '200K', '-F', `file=@${file}`, `${new URL(inboxLink, f.store.url).href}/upload`]);
      expect(upload.status, shown(upload)).toBe(200);
      expect(upload.run.ms).toBeGreaterThan(IDLE_MS * 1.5);
      const got = await runProgram(curl.path, ['-sS', '-o', path.join(tmp.dir, 'steady.got'), ...basicUser(user), `${f.davUrl}/home/steady.bin`], { timeoutMs: CURL_TIMEOUT_MS });
      expect(got.code, describeRun(got)).toBe(0);
      expect(readFileSync(path.join(tmp.dir, 'steady.got')).equals(body)).toBe(true);
      expect(await inboxNames()).toEqual(['steady.bin']);
    });

    it('a curl whose body stalls is cut by the idle limit, at the bridge and at the store, and nothing is written', async () => {
      // Stalled past the idle limit, then fed again: a connection the server cut fails curl's next write.
      const stall = { first: Buffer.alloc(1000, 1), chunk: Buffer.alloc(1, 1), everyMs: 100, resumeAfterMs: IDLE_MS + 500, giveUpMs: REQUEST_MS - 500 };
      const atBridge = await fedCurl([...basicUser(user), `${f.davUrl}/home/stalled.bin`], { ...stall, length: 100_000 });
      // No answer (at most the 100 Continue) and curl's next write finds the socket closed (55, or 52/56 when it reads first).
      expect({ ended: atBridge.ended, status: atBridge.status, code: atBridge.code }, atBridge.run).toEqual({ ended: true, status: expect.stringMatching(/^(000|100)$/), code: expect.toBeOneOf([52, 55, 56]) });
      expect(atBridge.ms, atBridge.run).toBeGreaterThanOrEqual(IDLE_MS + 500);
      expect(await oldBytes()).toBe('old bytes');

      const form = multipartFile('stalled-upload.bin', Buffer.alloc(100_000, 2));
      const uploadArgs = ['-X', 'POST', '-H', `Content-Type: ${form.headers['content-type']}`, `${new URL(inboxLink, f.store.url).href}/upload`];
      const atStore = await fedCurl(uploadArgs, { ...stall, length: form.body.length, first: form.body.subarray(0, 1000) });
      expect({ ended: atStore.ended, status: atStore.status, code: atStore.code }, atStore.run).toEqual({ ended: true, status: expect.stringMatching(/^(000|100)$/), code: expect.toBeOneOf([52, 55, 56]) });
      expect(await inboxNames()).toEqual(['steady.bin']);
    });

    it('a curl fed a trickle just fast enough to dodge the idle limit is cut by the whole-request limit (408), and nothing is written', async () => {
      const trickle = Buffer.alloc(500, 3);
      const atBridge = await fedCurl([...basicUser(user), `${f.davUrl}/home/stalled.bin`], {
        length: 100_000,
        first: trickle,
        chunk: trickle,
        everyMs: IDLE_MS / 4,
        resumeAfterMs: 0,
        giveUpMs: REQUEST_MS + 8_000,
      });
      expect({ ended: atBridge.ended, status: atBridge.status }, atBridge.run).toEqual({ ended: true, status: '408' });
      expect(atBridge.ms, atBridge.run).toBeGreaterThanOrEqual(REQUEST_MS - 100);
      expect(atBridge.ms, atBridge.run).toBeLessThan(REQUEST_MS + 3_000);
      expect(await oldBytes()).toBe('old bytes');
    }, 30_000);
  });

  describe('finding 3: limits that hold under parallel requests', () => {
    /** One config file of PARALLEL requests for `curl --parallel`, each writing its status on a line. */
    function parallelConfig(name: string, requests: string[][]): string {
      const file = path.join(tmp.dir, `${name}.curlrc`);
      writeFileSync(file, requests.map((lines) => [...lines, 'output = "/dev/null"', 'write-out = "%{http_code}\\n"'].join('\n')).join('\nnext\n'));
      return file;
    }

    async function curlParallel(config: string): Promise<Record<string, number>> {
      const run = await runProgram(curl.path, ['-sS', '--parallel', '--parallel-immediate', '--parallel-max', String(PARALLEL), '-K', config], { timeoutMs: 60_000 });
      const statuses = run.stdout.split('\n').filter(Boolean);
      expect(statuses, describeRun(run)).toHaveLength(PARALLEL);
      const counts: Record<string, number> = {};
      for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
      return counts;
    }

    it(`curl --parallel: of ${PARALLEL} wrong passwords at POST /auth at once, ${LIMIT} are checked (401), the rest 429`, async () => {
      const config = parallelConfig(
        'auth',
        Array.from({ length: PARALLEL }, (_, i) => [
          `url = "${f.store.url}/auth"`,
          'header = "Content-Type: application/json"',
          `data = "${JSON.stringify({ username: guessed.email, password: `Wrong-Passw0rd-${i}` }).replace(/"/g, '\\"')}"`,
        ]),
      );
      expect(await curlParallel(config)).toEqual({ 401: LIMIT, 429: PARALLEL - LIMIT });
      const right = await curlDo([...json({ username: guessed.email, password: guessed.password }), `${f.store.url}/auth`]);
      expect(right.status, shown(right)).toBe(429);
      expect(Number(right.headers['retry-after'])).toBeGreaterThan(0);
      // Past the store's window, so its per-address counter does not weigh on the bridge's test.
      f.store.clock.advance(16 * 60 * 1000);
    });

    it(`curl --parallel: of ${PARALLEL} wrong Basic passwords at the bridge at once, ${LIMIT} are checked (401), the rest 503`, async () => {
      const config = parallelConfig(
        'basic',
        Array.from({ length: PARALLEL }, (_, i) => [`url = "${f.davUrl}/"`, 'request = "PROPFIND"', 'header = "Depth: 0"', `user = "${guessedAtBridge.email}:Wrong-Passw0rd-${i}"`]),
      );
      expect(await curlParallel(config)).toEqual({ 401: LIMIT, 503: PARALLEL - LIMIT });
      const right = await curlDo(['-X', 'PROPFIND', '-H', 'Depth: 0', ...basicUser(guessedAtBridge), `${f.davUrl}/`]);
      expect(right.status, shown(right)).toBe(503);
      expect(Number(right.headers['retry-after'])).toBeGreaterThan(0);
    });
  });
});
