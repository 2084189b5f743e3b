/**
 * Issue 30's new doors, tried as an attacker (docs/security.md "Doors", the Nextcloud clients'
 * part, and "Client login flows"): the numeric file ids (the store's by-file-id lookup,
 * `versions/<n>`, the bridge's own numbers of made-up collections), tree sizes seen through a
 * share or a membership without read, the client's view of `/remote.php/dav/files/<user>/` and
 * `/remote.php/webdav/` (path tricks, MOVE and COPY out of it), legacy OC-Chunked names, the OCS
 * API, and the login flows (the `server` a v1 grant hands the app, the bound per client behind a
 * proxy, races, CORS, what is logged). Real store and bridge over HTTP; refusals change nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId } from '../../src/store-client/index.js';
import { LOGIN_FLOW_LIMITS } from '../../src/bridge/nextcloud/login-flow.js';
import { startBridge } from '../../src/bridge/server.js';
import { SESSION_CONFIRM_MS } from '../../src/bridge/sessions.js';
import { createLogger } from '../../src/common/logger.js';
import { captureLog } from '../helpers/log-capture.js';
import { bridgeRequests, davRequest, multistatusOf, type DavAnswer } from '../helpers/dav-requests.js';
import { groupAdmin } from '../helpers/groups.js';
import { createFolder, uploadFile } from '../helpers/seed.js';
import { basicAuth, bridgeFixture, bridgeStateFor, bridgeStoreFor, TEST_TRANSPORT, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';
import { apiCall, dataOf } from '../helpers/user-api.js';

const OC = 'http://owncloud.org/ns';
const FILEID_PROPFIND = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="${OC}"><d:prop><oc:fileid/></d:prop></d:propfind>`;

describe('issue 30’s doors reach nothing that is not the caller’s', () => {
  let f: BridgeFixture;
  let alice: DavUser;
  let bob: DavUser;
  let mallory: DavUser;
  const { davAs } = bridgeRequests(() => f);
  const files = (u: DavUser): string => `/remote.php/dav/files/${encodeURIComponent(u.email)}`;
  /** node id -> numeric file id, as the store lists it to `as`. */
  const fileIdOf = async (as: DavUser, folder: string, name: string): Promise<number> => {
    const entry = (await f.client.listFolder(as.session, nodeId(folder))).find((e) => e.name === name);
    expect(entry?.fileId, `${name} in ${folder}`).toBeTypeOf('number');
    return entry!.fileId!;
  };
  const byFileId = (as: DavUser, n: string | number) => f.client.http.requestRaw({ method: 'GET', path: `/api/nodes/by-file-id/${n}`, token: as.session.token });
  const names = async (as: DavUser, folder: string): Promise<string[]> => (await f.client.listFolder(as.session, nodeId(folder))).map((e) => e.name).sort();

  /** Tokens and app passwords the login-flow tests saw: none may reach the bridge's log (debug level, access log on). */
  const capture = captureLog('debug');
  const secrets: string[] = [];
  let secretId: number;
  let sharedId: number;
  let teamId: number;

  beforeAll(async () => {
    f = await bridgeFixture({ bridgeLogger: capture.logger });
    [alice, bob, mallory] = await Promise.all([f.newDavUser(), f.newDavUser(), f.newDavUser()]);
    await uploadFile(f.client, alice.session, 'home', 'secret.txt', 'alice only');
    secretId = await fileIdOf(alice, 'home', 'secret.txt');
    const shared = await createFolder(f.client, alice.session, 'home', 'Shared');
    await uploadFile(f.client, alice.session, shared, 'plan.txt', 'for bob');
    sharedId = await fileIdOf(alice, shared, 'plan.txt');
    dataOf(await apiCall(f.client, alice.session, 'POST', `/api/nodes/${shared}/shares`, { type: 'private', recipients: [bob.uuid] }));
    const ga = groupAdmin(f.client, f.admin);
    const team = await ga.group('Vault', { quotaBytes: 1_000_000 });
    await ga.member(team, alice.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    await uploadFile(f.client, alice.session, `home:${team}`, 'team.txt', 'team only');
    teamId = await fileIdOf(alice, `home:${team}`, 'team.txt');
    const trashed = await uploadFile(f.client, alice.session, 'home', 'trashed-secret.txt', 'in the trash');
    await f.client.http.requestRaw({ method: 'DELETE', path: `/api/nodes/${trashed}`, token: alice.session.token });
  });
  afterAll(async () => {
    await f?.close();
  });

  describe('numeric ids', () => {
    it('by-file-id answers another user’s, a group’s and a missing number alike: 404, the same body, in parallel too', async () => {
      const missing = await byFileId(mallory, 9_000_000_000);
      expect(missing.status).toBe(404);
      const tries = await Promise.all([secretId, sharedId, teamId, secretId, teamId].flatMap((n) => [byFileId(mallory, n), byFileId(mallory, n)]));
      for (const answer of tries) expect({ status: answer.status, body: answer.body }).toEqual({ status: missing.status, body: missing.body });
      // Bob reaches the shared file, and only it.
      expect((await byFileId(bob, sharedId)).status).toBe(200);
      expect((await byFileId(bob, secretId)).body).toEqual(missing.body);
    });

    it('by-file-id refuses what is no positive integer with 400', async () => {
      for (const bad of ['abc', '0', '-1', '1e3', '1.5', '99999999999999999999', '%20']) {
        const answer = await byFileId(alice, bad);
        expect(answer.status, bad).toBe(400);
        expect(answer.body).toMatchObject({ status: 'error' });
      }
    });

    it('versions/<n> of another user’s, a group’s, a shared file or a made-up collection’s number is 404 in the caller’s own space', async () => {
      const root = multistatusOf(await davAs(alice, 'PROPFIND', `${files(alice)}/`, { depth: '0', 'content-type': 'application/xml' }, FILEID_PROPFIND));
      const madeUp = root[0]!.props.get(`{${OC}}fileid`)?.text ?? '';
      expect(Number(madeUp)).toBeGreaterThan(2 ** 52);
      const base = `/remote.php/dav/versions/${encodeURIComponent(bob.email)}/versions`;
      for (const n of [secretId, teamId, sharedId, madeUp, '9999999999999999', '00000001']) {
        const answer = await davAs(bob, 'PROPFIND', `${base}/${n}`, { depth: '1' });
        expect(answer.status, String(n)).toBe(404);
      }
      // Nor to the one whose root it numbers.
      expect((await davAs(alice, 'PROPFIND', `/remote.php/dav/versions/${encodeURIComponent(alice.email)}/versions/${madeUp}`, { depth: '1' })).status).toBe(404);
      // Nor another user's versions or trash space, whatever the number.
      expect((await davAs(bob, 'PROPFIND', `/remote.php/dav/versions/${encodeURIComponent(alice.email)}/versions/${secretId}`, { depth: '1' })).status).toBe(404);
      expect((await davAs(bob, 'PROPFIND', `/remote.php/dav/trashbin/${encodeURIComponent(alice.email)}/trash/`, { depth: '1' })).status).toBe(404);
    });
  });

  describe('tree sizes', () => {
    it('a share’s recipient sees the shared folder’s own tree size and ETag, nothing of the owner’s above it', async () => {
      const shared = (await f.client.listFolder(bob.session, nodeId('shared_with_you'))).find((e) => e.name === 'Shared');
      expect(shared?.treeSizeBytes).toBe('for bob'.length);
      const own = (await f.client.listFolder(alice.session, nodeId('home'))).find((e) => e.name === 'Shared');
      expect(own?.treeEtag).toBe(shared?.treeEtag);
      const sizes = multistatusOf(
        await davAs(bob, 'PROPFIND', '/shared_with_you/', { depth: '1', 'content-type': 'application/xml' }, `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="${OC}"><d:prop><oc:size/></d:prop></d:propfind>`),
      ).map((r) => Number(r.props.get(`{${OC}}size`)?.text));
      // Its one entry: the shared file's bytes, not alice's home (secret.txt and all); the derived view sums nothing.
      expect(sizes).toEqual([0, 'for bob'.length]);
    });
  });

  it('a membership without read shows none of the group’s drive, and refuses none of the member’s own tree', async () => {
    const ga = groupAdmin(f.client, f.admin);
    const blind = await ga.group('Blind', { quotaBytes: 1_000_000 });
    await ga.member(blind, alice.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    await ga.member(blind, mallory.uuid, { node_permissions: [] });
    await uploadFile(f.client, alice.session, `home:${blind}`, 'unseen.txt', 'x'.repeat(4321));
    const sizeProp = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="${OC}"><d:prop><oc:size/></d:prop></d:propfind>`;
    for (const path of ['/', '/groups/', `${files(mallory)}/`, `${files(mallory)}/groups/`]) {
      const listed = multistatusOf(await davAs(mallory, 'PROPFIND', path, { depth: '1', 'content-type': 'application/xml' }, sizeProp));
      expect(listed.map((r) => Number(r.props.get(`{${OC}}size`)?.text ?? 0)).every((n) => n < 4321), path).toBe(true);
    }
    const group = multistatusOf(await davAs(mallory, 'PROPFIND', '/groups/Blind/', { depth: '1' }));
    expect(group.map((r) => decodeURIComponent(r.href))).toEqual(['/groups/Blind/']);
  });

  describe('the client’s view', () => {
    const tricks = (u: DavUser): string[] => [
      `${files(u)}/home/../trash/`,
      `${files(u)}/home/%2e%2e/trash/`,
      `${files(u)}/home%2F..%2Ftrash/`,
      `${files(u)}//trash/`,
      `${files(u)}/Trash/`,
      `/REMOTE.PHP/dav/files/${encodeURIComponent(u.email)}/trash/`,
      `/remote.php/dav/FILES/${encodeURIComponent(u.email)}/trash/`,
      `/remote.php/webdav/trash/`,
      `/remote.php/webdav/./trash/`,
      `/remote.php/webdav/versions/`,
      `/remote.php/webdav/shared_with_you/`,
      `${files(u)}/../../trash/`,
    ];

    it('path tricks never list the trash, versions or derived views through the view', async () => {
      for (const path of tricks(alice)) {
        const answer = await davAs(alice, 'PROPFIND', path, { depth: '1' });
        expect(answer.text, path).not.toContain('trashed-secret');
        expect(answer.status, path).not.toBe(500);
      }
    });

    it('another user’s files space is 404, whichever case or encoding names them', async () => {
      for (const name of [alice.email, alice.email.toUpperCase(), encodeURIComponent(alice.email), alice.uuid]) {
        const answer = await davAs(mallory, 'PROPFIND', `/remote.php/dav/files/${name}/home/`, { depth: '1' });
        expect(answer.text, name).not.toContain('secret.txt');
        expect(answer.status, name).toBe(404);
      }
    });

    it('MOVE and COPY from the view into the trash, versions, another user’s space or a share’s copy are refused; the file stays', async () => {
      await uploadFile(f.client, alice.session, 'home', 'keep.txt', 'stay here');
      const destinations = [
        '/trash/keep.txt',
        `${files(alice)}/trash/keep.txt`,
        `${files(alice)}/versions/keep.txt`,
        `${files(bob)}/home/keep.txt`,
        `/remote.php/dav/trashbin/${encodeURIComponent(alice.email)}/trash/keep.txt`,
        `${files(alice)}/home/../trash/keep.txt`,
        '/favorites/keep.txt',
      ];
      for (const method of ['MOVE', 'COPY']) {
        for (const to of destinations) {
          const answer = await davAs(alice, method, `${files(alice)}/home/keep.txt`, { destination: `${f.davUrl}${to}` });
          expect(answer.status, `${method} -> ${to}`).toBeGreaterThanOrEqual(400);
          expect(answer.status, `${method} -> ${to}`).toBeLessThan(500);
        }
      }
      expect(await names(alice, 'home')).toContain('keep.txt');
      expect(await names(alice, 'trash')).toEqual(['trashed-secret.txt']);
      expect(await names(bob, 'home')).not.toContain('keep.txt');
    });
  });

  describe('legacy OC-Chunked names', () => {
    const chunk = (as: DavUser, name: string, body = 'x'): Promise<DavAnswer> =>
      davAs(as, 'PUT', `${files(as)}/home/${name}`, { 'oc-chunked': '1', 'content-length': String(body.length) }, body);

    it('refuses chunk names that would make `.`, `..` or an empty name; nothing stored', async () => {
      const before = await names(alice, 'home');
      const chunkNames = ['..-chunking-41-1-0', '.-chunking-42-1-0', '%2E%2E-chunking-43-1-0', '-chunking-44-1-0', 'x%2F..%2F..%2Ftrash%2Fout.txt-chunking-45-1-0', 'sub%2Fin.txt-chunking-46-1-0'];
      for (const name of chunkNames) {
        const answer = await chunk(alice, name);
        expect(answer.status, name).toBeGreaterThanOrEqual(400);
        expect(answer.status, name).toBeLessThan(500);
      }
      expect(await names(alice, 'home')).toEqual(before);
    });

    it('sends no chunk into another user’s space (404), nothing kept there', async () => {
      const answer = await davAs(alice, 'PUT', `${files(bob)}/home/planted.txt-chunking-47-1-0`, { 'oc-chunked': '1', 'content-length': '1' }, 'x');
      expect(answer.status).toBe(404);
      expect(await names(bob, 'home')).not.toContain('planted.txt');
    });

    it('keeps two users’ transfers with the same transfer id apart', async () => {
      expect((await chunk(alice, 'same.txt-chunking-777-2-0', 'alice-0 ')).status).toBe(201);
      expect((await chunk(bob, 'same.txt-chunking-777-2-0', 'bob-0 ')).status).toBe(201);
      expect((await chunk(bob, 'same.txt-chunking-777-2-1', 'bob-1')).status).toBe(201);
      expect((await chunk(alice, 'same.txt-chunking-777-2-1', 'alice-1')).status).toBe(201);
      expect((await davAs(alice, 'GET', '/home/same.txt')).text).toBe('alice-0 alice-1');
      expect((await davAs(bob, 'GET', '/home/same.txt')).text).toBe('bob-0 bob-1');
    });
  });

  describe('OCS', () => {
    it('has no door to another user: users/<id> is not found, cloud/user answers the caller only; other methods 405', async () => {
      const other = await davAs(mallory, 'GET', `/ocs/v2.php/cloud/users/${encodeURIComponent(alice.email)}?format=json`);
      expect(other.status).toBe(404);
      expect(other.text).not.toContain(alice.email);
      const me = await davAs(mallory, 'GET', `/ocs/v2.php/cloud/user?format=json&userid=${encodeURIComponent(alice.email)}`);
      expect(JSON.parse(me.text).ocs.data.id).toBe(mallory.email);
      for (const method of ['POST', 'PUT', 'DELETE', 'PROPFIND']) expect((await davAs(mallory, method, '/ocs/v2.php/cloud/user')).status, method).toBe(405);
      for (const format of ['jsonx', 'JSON', '', 'xml&format=json', '%00']) {
        expect((await davAs(mallory, 'GET', `/ocs/v1.php/cloud/user?format=${format}`)).status, format).toBe(200);
      }
      expect((await davAs(undefined, 'GET', `/ocs/v1.php/cloud/user/${'a/'.repeat(2000)}`)).status).toBeLessThan(500);
      // Nothing but the capabilities and config without credentials.
      for (const endpoint of ['cloud/user', 'apps/user_status/api/v1/user_status', 'apps/notifications/api/v2/notifications', 'core/navigation/apps']) {
        expect((await davAs(undefined, 'GET', `/ocs/v2.php/${endpoint}?format=json`)).status, endpoint).toBe(401);
      }
    });
  });

  it('stops a revoked app password at OCS too, even at the endpoints answered without the store', async () => {
    const made = dataOf(await apiCall(f.client, mallory.session, 'POST', '/api/user/app_passwords', { name: 'ocs' })) as { uuid: string; password: string };
    const auth = basicAuth(mallory.email, made.password);
    const ask = (endpoint: string) => davRequest(f.davUrl, 'GET', `/ocs/v2.php/${endpoint}?format=json`, { auth });
    const endpoints = ['apps/user_status/api/v1/user_status', 'core/navigation/apps', 'cloud/user'];
    for (const endpoint of endpoints) expect((await ask(endpoint)).status, endpoint).toBe(200);
    expect((await apiCall(f.client, mallory.session, 'DELETE', `/api/user/app_passwords/${made.uuid}`)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, Math.max(SESSION_CONFIRM_MS, f.store.config.bridge.cacheTtlMs) + 100));
    for (const endpoint of endpoints) expect((await ask(endpoint)).status, endpoint).toBe(401);
  });

  describe('login flows', () => {
    it('v1: the nc:// address names the bridge the page reached, not the Host the flow was opened with', async () => {
      const opened = await davRequest(f.davUrl, 'GET', '/index.php/login/flow', { headers: { host: 'evil.example:8443', 'user-agent': 'Nextcloud-android' } });
      expect(opened.status).toBe(302);
      const token = new URL(String(opened.headers.location)).searchParams.get('token') ?? '';
      const made = dataOf(await apiCall(f.client, alice.session, 'POST', '/api/user/app_passwords', { name: 'Nextcloud-android' })) as { password: string };
      secrets.push(token, made.password);
      const granted = await davRequest(f.davUrl, 'POST', '/index.php/login/v2/grant', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token, loginName: alice.email, appPassword: made.password }),
      });
      expect(granted.status, granted.text).toBe(200);
      const redirect = (JSON.parse(granted.text) as { redirect: string }).redirect;
      expect(redirect).not.toContain('evil.example');
      expect(redirect.startsWith(`nc://login/server:${f.davUrl}&`)).toBe(true);
    });

    it('bounds and shows flows per client behind a trusted proxy (its X-Forwarded-For; an IPv6 client by its /64), and believes no one else’s', async () => {
      const config = structuredClone(f.store.config);
      config.store.trustedProxies = ['127.0.0.1'];
      const proxied = await startBridge({
        config,
        logger: createLogger('silent'),
        store: bridgeStoreFor(f.store, TEST_TRANSPORT),
        state: await bridgeStateFor(f.store, TEST_TRANSPORT, { config }),
        port: 0,
        webApp: { port: Number(new URL(f.store.url).port), https: false },
      });
      try {
        const open = (url: string, from?: string) => davRequest(url, 'POST', '/index.php/login/v2', { headers: from ? { 'x-forwarded-for': from } : {} });
        const addressOf = async (url: string, answer: DavAnswer): Promise<string> => {
          expect(answer.status, answer.text).toBe(200);
          const token = new URL((JSON.parse(answer.text) as { login: string }).login).searchParams.get('token') ?? '';
          return (JSON.parse((await davRequest(url, 'GET', `/index.php/login/v2/grant?token=${token}`)).text) as { address: string }).address;
        };
        for (let i = 0; i < LOGIN_FLOW_LIMITS.maxPerAddress; i++) expect((await open(proxied.url, '198.51.100.7, 203.0.113.5')).status).toBe(200);
        expect((await open(proxied.url, '203.0.113.5')).status).toBe(429);
        // Another client behind the same proxy still signs in, and the page names its address.
        expect(await addressOf(proxied.url, await open(proxied.url, '203.0.113.6'))).toBe('203.0.113.6');
        // An IPv6 client counts by its /64: its network's other addresses share its places.
        for (let i = 1; i <= LOGIN_FLOW_LIMITS.maxPerAddress; i++) expect((await open(proxied.url, `2001:db8:0:1::${i.toString(16)}`)).status).toBe(200);
        expect((await open(proxied.url, '2001:db8:0:1:ffff:ffff:ffff:ffff')).status).toBe(429);
        expect(await addressOf(proxied.url, await open(proxied.url, '2001:0db8:0000:0002::1'))).toBe('2001:db8:0:2::/64');
        // A bridge that trusts no proxy counts the peer, whatever it forwards.
        expect(await addressOf(f.davUrl, await open(f.davUrl, '203.0.113.9'))).toBe('127.0.0.1');
      } finally {
        await proxied.close();
      }
    });

    it('grants a flow once and answers its poll once, however many ask at once; bad bodies are 4xx', async () => {
      const opened = JSON.parse((await davRequest(f.davUrl, 'POST', '/index.php/login/v2')).text) as { poll: { token: string }; login: string };
      const token = new URL(opened.login).searchParams.get('token') ?? '';
      const passwords = await Promise.all([alice, mallory].map(async (u) => (dataOf(await apiCall(f.client, u.session, 'POST', '/api/user/app_passwords', { name: 'race' })) as { password: string }).password));
      const grant = (loginName: string, appPassword: string) =>
        davRequest(f.davUrl, 'POST', '/index.php/login/v2/grant', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token, loginName, appPassword }) });
      secrets.push(token, opened.poll.token, ...passwords);
      const grants = await Promise.all([grant(alice.email, passwords[0]!), grant(mallory.email, passwords[1]!), grant(alice.email, passwords[0]!), grant(mallory.email, passwords[1]!)]);
      expect(grants.map((g) => g.status).sort()).toEqual([200, 404, 404, 404]);
      const polls = await Promise.all(Array.from({ length: 8 }, () => davRequest(f.davUrl, 'POST', '/index.php/login/v2/poll', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${opened.poll.token}` })));
      expect(polls.map((p) => p.status).sort()).toEqual([200, 404, 404, 404, 404, 404, 404, 404]);
      // A token in the query (the fields merge it) is no less secret.
      expect((await davRequest(f.davUrl, 'POST', `/index.php/login/v2/poll?token=${opened.poll.token}`)).status).toBe(404);
      const poll = (body: string, type = 'application/json') => davRequest(f.davUrl, 'POST', '/index.php/login/v2/poll', { headers: { 'content-type': type }, body });
      expect((await poll('{"token":')).status).toBe(400);
      expect((await poll('{"token":["a"]}')).status).toBe(400);
      expect((await poll('[]')).status).toBe(400);
      expect((await poll(`token=${'a'.repeat(20_000)}`, 'application/x-www-form-urlencoded')).status).toBe(413);
      expect((await poll(`token=${'a'.repeat(2000)}`, 'application/x-www-form-urlencoded')).status).toBe(400);
    });

    it('lets no other origin read the page’s calls (no CORS grant for it)', async () => {
      const preflight = await davRequest(f.davUrl, 'OPTIONS', '/index.php/login/v2/grant', {
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
      const simple = await davRequest(f.davUrl, 'GET', '/index.php/login/v2/grant?token=x', { headers: { origin: 'https://evil.example' } });
      expect(simple.headers['access-control-allow-origin']).toBeUndefined();
    });
  });

  it('logs no login token, poll token or app password, in the access log or anywhere', async () => {
    await capture.waitFor((line) => line.msg === 'request' && typeof line.url === 'string' && line.url.startsWith('/index.php/login/v2/poll?'));
    expect(secrets.length).toBeGreaterThanOrEqual(6);
    const logged = capture.text();
    for (const secret of secrets) expect(logged).not.toContain(secret);
    expect(logged).toContain('/index.php/login/v2/grant?token=[redacted]');
  });
});
