/**
 * Push on the bridge (bridge/nextcloud/push.ts), with a client speaking notify_push's protocol as
 * the Nextcloud desktop does (test/helpers/push-client.ts, from its pushnotifications.cpp): the
 * capability names the websocket and the pre-auth endpoint; a socket authenticates with a user and
 * an app password, or an empty user and a pre-auth token (once, bound to its user); after
 * `listen notify_file_id` a PUT reaches it as `notify_file_id [<the folder's oc:fileid>]`; another
 * user's change does not; a group drive's member hears of the drive; a wrong app password is
 * refused and counted by the bridge's login limiter (the one DAV requests share); sockets are
 * bounded per user; a revoked app password closes the socket.
 * Push needs the store's change feed: over HTTP to a store (no feed) it is not advertised.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangeFeed, StoreChange, StoreChangeListener } from '../../../src/common/change-feed.js';
import { createLogger } from '../../../src/common/logger.js';
import { startBridge } from '../../../src/bridge/server.js';
import { inProcessStore } from '../../../src/store/bridge-store.js';
import { storeFixture } from '../../helpers/store-fixture.js';
import { bridgeRequests } from '../../helpers/dav-requests.js';
import { groupAdmin } from '../../helpers/groups.js';
import { WebSocket } from 'ws';
import { connectPush, pushUrl, type PushClient } from '../../helpers/push-client.js';
import { basicAuth, bridgeFixture, bridgeStateFor, TEST_TRANSPORT, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { apiCall, dataOf } from '../../helpers/user-api.js';

const LOGIN_MAX_FAILURES = 4;
const FILEID_BODY = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:fileid/></d:prop></d:propfind>';

describe.skipIf(TEST_TRANSPORT === 'http')('push (notify_push protocol) on the bridge', () => {
  let f: BridgeFixture;
  let ada: DavUser;
  let bob: DavUser;
  let adaApp: { uuid: string; password: string };
  const { davAs } = bridgeRequests(() => f);
  const sockets: PushClient[] = [];
  const open = async (username: string, password: string): Promise<PushClient> => {
    const socket = await connectPush(pushUrl(f.davUrl), username, password);
    sockets.push(socket);
    return socket;
  };
  const appPassword = async (user: DavUser, name: string) => dataOf<{ uuid: string; password: string }>(await apiCall(f.client, user.session, 'POST', '/api/user/app_passwords', { name }));
  const fileIdOf = async (user: DavUser, path: string): Promise<number> => {
    const answer = await davAs(user, 'PROPFIND', path, { depth: '0' }, FILEID_BODY);
    return Number(/<oc:fileid>(\d+)<\/oc:fileid>/.exec(answer.text)?.[1]);
  };

  beforeAll(async () => {
    f = await bridgeFixture({ transport: 'local', bridgeFlags: { loginMaxFailures: LOGIN_MAX_FAILURES, pushMaxSocketsPerUser: 3, pushSessionCheckSec: 1 } });
    [ada, bob] = await Promise.all([f.newDavUser(), f.newDavUser()]);
    adaApp = await appPassword(ada, 'desktop');
    expect((await davAs(ada, 'MKCOL', '/home/docs/')).status).toBe(201);
  });
  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await f.close();
  });

  it('advertises notify_push with the websocket and pre-auth endpoints on the address the client used', async () => {
    const res = await fetch(`${f.davUrl}/ocs/v2.php/cloud/capabilities?format=json`);
    const caps = ((await res.json()) as { ocs: { data: { capabilities: Record<string, unknown> } } }).ocs.data.capabilities;
    const ws = f.davUrl.replace(/^http/, 'ws');
    expect(caps.notify_push).toEqual({
      type: ['files', 'activities', 'notifications'],
      endpoints: { websocket: `${ws}/push/ws`, pre_auth: `${f.davUrl}/index.php/apps/notify_push/pre_auth` },
    });
  });

  it('authenticates a user and app password, and sends notify_file_id with the folder\'s oc:fileid after a PUT', async () => {
    const socket = await open(ada.email, adaApp.password);
    expect(socket.answer).toBe('authenticated');
    socket.listen();
    const docsId = await fileIdOf(ada, '/home/docs/');
    expect(docsId).toBeGreaterThan(0);
    const from = socket.messages.length;
    const started = Date.now();
    expect((await davAs(ada, 'PUT', '/home/docs/a.txt', {}, 'pushed')).status).toBe(201);
    const message = await socket.next((m) => m.startsWith('notify_file'), 5000, from);
    expect(message).toMatch(/^notify_file_id \[[\d,]+\]$/);
    expect(JSON.parse(message.slice('notify_file_id '.length))).toContain(docsId);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('sends plain notify_file to a client that did not ask for ids, as the desktop does not', async () => {
    const socket = await open(ada.email, ada.password);
    expect(socket.answer).toBe('authenticated');
    const from = socket.messages.length;
    expect((await davAs(ada, 'PUT', '/home/b.txt', {}, 'x')).status).toBe(201);
    expect(await socket.next((m) => m.startsWith('notify_'), 5000, from)).toBe('notify_file');
  });

  it('does not tell a user of another user\'s change', async () => {
    const socket = await open(bob.email, bob.password);
    expect(socket.answer).toBe('authenticated');
    const from = socket.messages.length;
    expect((await davAs(ada, 'PUT', '/home/docs/secret.txt', {}, 'ada only')).status).toBe(201);
    await expect(socket.next((m) => m.startsWith('notify_'), 1500, from)).rejects.toThrow(/no matching push message/);
    // Bob's own change does reach him (the socket is alive).
    expect((await davAs(bob, 'PUT', '/home/bob.txt', {}, 'x')).status).toBe(201);
    expect(await socket.next((m) => m.startsWith('notify_'), 5000, from)).toBe('notify_file');
  });

  it('tells a group drive\'s members of a change there, and not an outsider', async () => {
    const ga = groupAdmin(f.client, f.admin);
    const team = await ga.group('Push Team', { quotaBytes: 1_000_000 });
    const [writer, member, outsider] = await Promise.all([f.newDavUser(), f.newDavUser(), f.newDavUser()]);
    await ga.member(team, writer.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    await ga.member(team, member.uuid, { node_permissions: ['read', 'download'] });
    const listening = await open(member.email, member.password);
    const outside = await open(outsider.email, outsider.password);
    expect([listening.answer, outside.answer]).toEqual(['authenticated', 'authenticated']);
    expect((await davAs(writer, 'PUT', `/groups/${encodeURIComponent('Push Team')}/home/plan.txt`, {}, 'the plan')).status).toBe(201);
    expect(await listening.next((m) => m.startsWith('notify_'), 5000)).toBe('notify_file');
    await expect(outside.next((m) => m.startsWith('notify_'), 1000)).rejects.toThrow(/no matching push message/);
  });

  it("tells a group member who listens for ids of a move into the group drive without the numbers of the mover's own folders", async () => {
    const ga = groupAdmin(f.client, f.admin);
    const team = await ga.group('Push Ids', { quotaBytes: 1_000_000 });
    const [writer, member] = await Promise.all([f.newDavUser(), f.newDavUser()]);
    await ga.member(team, writer.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    await ga.member(team, member.uuid, { node_permissions: ['read', 'download'] });
    expect((await davAs(writer, 'MKCOL', '/home/private/')).status).toBe(201);
    const privateId = await fileIdOf(writer, '/home/private/');
    const mine = await open(writer.email, writer.password);
    const theirs = await open(member.email, member.password);
    mine.listen();
    theirs.listen();
    // The writer's own socket learns the private folder's number first (the cache that must not serve the member).
    let from = mine.messages.length;
    expect((await davAs(writer, 'PUT', '/home/private/x.txt', {}, 'x')).status).toBe(201);
    expect(JSON.parse((await mine.next((m) => m.startsWith('notify_file_id'), 5000, from)).slice('notify_file_id '.length))).toContain(privateId);
    from = theirs.messages.length;
    const moved = await davAs(writer, 'MOVE', '/home/private/x.txt', { destination: `${f.davUrl}/groups/${encodeURIComponent('Push Ids')}/home/x.txt` });
    expect(moved.status).toBe(201);
    const told = await theirs.next((m) => m.startsWith('notify_file'), 5000, from);
    if (told.startsWith('notify_file_id ')) expect(JSON.parse(told.slice('notify_file_id '.length))).not.toContain(privateId);
    else expect(told).toBe('notify_file');
  });

  it('authenticates with a pre-auth token once, as its user', async () => {
    const token = await fetch(`${f.davUrl}/index.php/apps/notify_push/pre_auth`, { method: 'POST', headers: { authorization: basicAuth(ada.email, adaApp.password) } });
    expect(token.status).toBe(200);
    const text = await token.text();
    expect(text).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const socket = await open('', text);
    expect(socket.answer).toBe('authenticated');
    const from = socket.messages.length;
    expect((await davAs(ada, 'PUT', '/home/c.txt', {}, 'x')).status).toBe(201);
    expect(await socket.next((m) => m.startsWith('notify_'), 5000, from)).toBe('notify_file');
    // Used: a second socket with it is refused.
    expect((await open('', text)).answer).toBe('err: Invalid credentials');
    // Without credentials there is no token.
    expect((await fetch(`${f.davUrl}/index.php/apps/notify_push/pre_auth`, { method: 'POST' })).status).toBe(401);
    expect((await fetch(`${f.davUrl}/index.php/apps/notify_push/pre_auth`, { method: 'POST', headers: { authorization: basicAuth(ada.email, 'wrong') } })).status).toBe(401);
  });

  it('holds at most bridge.pushMaxSocketsPerUser sockets of one user', async () => {
    const dan = await f.newDavUser();
    const held = [await open(dan.email, dan.password), await open(dan.email, dan.password), await open(dan.email, dan.password)];
    expect(held.map((s) => s.answer)).toEqual(['authenticated', 'authenticated', 'authenticated']);
    const extra = await open(dan.email, dan.password);
    await extra.closed;
    expect(extra.messages).toEqual(['authenticated', 'Connection limit exceeded for user']);
  });

  it('closes a socket whose app password was revoked', async () => {
    const eve = await f.newDavUser();
    const eveApp = await appPassword(eve, 'desktop');
    const socket = await open(eve.email, eveApp.password);
    expect(socket.answer).toBe('authenticated');
    expect((await apiCall(f.client, eve.session, 'DELETE', `/api/user/app_passwords/${eveApp.uuid}`)).status).toBe(200);
    const code = await Promise.race([socket.closed, new Promise<number>((resolve) => setTimeout(() => resolve(-1), 5000))]);
    expect(code).toBe(1008);
  });

  it('refuses an upgrade anywhere but /push/ws', async () => {
    await expect(connectPush(`${f.davUrl.replace(/^http/, 'ws')}/elsewhere`, ada.email, ada.password)).rejects.toThrow(/404/);
  });

  // Last: from here on the limiter refuses this address's logins.
  it('refuses a wrong app password, and counts it with the DAV logins: past the limit the right one is refused too', async () => {
    const carol = await f.newDavUser();
    const carolApp = await appPassword(carol, 'desktop');
    for (let i = 0; i < LOGIN_MAX_FAILURES; i += 1) {
      const socket = await open(carol.email, `wrong-app-password-${i}`);
      expect(socket.answer).toBe('err: Invalid credentials');
      expect(await socket.closed).toBeGreaterThan(0);
    }
    // The limiter the DAV door uses holds the count: its right password is refused now, there and here.
    expect((await davAs(carol, 'PROPFIND', '/', { depth: '0' })).status).toBe(503);
    expect((await open(carol.email, carolApp.password)).answer).toMatch(/^err: /);
  });
});

describe.skipIf(TEST_TRANSPORT === 'http')('push sockets: bounded per address, pinged when silent', () => {
  let f: BridgeFixture;
  beforeAll(async () => {
    f = await bridgeFixture({ transport: 'local', bridgeFlags: { pushMaxSocketsPerAddress: 2, pushPingSec: 1 } });
  });
  afterAll(async () => {
    await f.close();
  });

  /** A raw socket (no authentication sent); `autoPong: false` leaves the server's pings unanswered. */
  const raw = (autoPong = true): Promise<{ ws: WebSocket; status?: number; pinged: Promise<void>; closed: Promise<number> }> =>
    new Promise((resolve) => {
      const ws = new WebSocket(pushUrl(f.davUrl), { autoPong });
      const pinged = new Promise<void>((done) => ws.once('ping', () => done()));
      const closed = new Promise<number>((done) => ws.once('close', (code) => done(code)));
      ws.once('open', () => resolve({ ws, pinged, closed }));
      ws.once('unexpected-response', (_req, res) => resolve({ ws, status: res.statusCode, pinged, closed }));
    });

  it('refuses a third socket from one address with 429 at the handshake, and takes one again once a socket closed', async () => {
    const [one, two] = [await raw(), await raw()];
    expect([one.status, two.status]).toEqual([undefined, undefined]);
    expect((await raw()).status).toBe(429);
    one.ws.close();
    await one.closed;
    await new Promise((resolve) => setTimeout(resolve, 100));
    const again = await raw();
    expect(again.status).toBeUndefined();
    two.ws.close();
    again.ws.close();
    await Promise.all([two.closed, again.closed]);
  });

  it('pings an authenticated socket silent for bridge.pushPingSec and closes one that leaves the ping unanswered', async () => {
    const user = await f.newDavUser();
    const socket = await raw(false);
    const answers: string[] = [];
    socket.ws.on('message', (data) => answers.push(data.toString('utf8')));
    socket.ws.send(user.email);
    socket.ws.send(user.password);
    await socket.pinged;
    expect(answers).toEqual(['authenticated']);
    const code = await Promise.race([socket.closed, new Promise<number>((resolve) => setTimeout(() => resolve(-1), 5000))]);
    expect(code).toBe(1006);
  });
});

describe.skipIf(TEST_TRANSPORT === 'http')('push of notifications', () => {
  it('sends notify_notification and notify_activity to the sockets of the users a change names as notified, and to no one else', async () => {
    const fixture = await storeFixture();
    const store = inProcessStore(fixture.store.ctx, 'in-process');
    // The store's own feed, plus the announcement the notifications part makes (`@<user uuid>`,
    // StoreChange.notified), sent here as the feed would deliver it.
    const listeners = new Set<StoreChangeListener>();
    const real = store.changes as ChangeFeed;
    const feed: ChangeFeed = {
      subscribe(listener) {
        listeners.add(listener);
        const stop = real.subscribe(listener);
        return () => {
          listeners.delete(listener);
          stop();
        };
      },
      settled: () => real.settled(),
      get listening() {
        return real.listening;
      },
    };
    const bridge = await startBridge({
      config: fixture.store.config,
      logger: createLogger('silent'),
      store: { ...store, changes: feed },
      state: await bridgeStateFor(fixture.store, 'local'),
      port: 0,
    });
    try {
      const [ann, ben] = await Promise.all([fixture.newUser(), fixture.newUser()]);
      const [annSocket, benSocket] = await Promise.all([connectPush(pushUrl(bridge.url), ann.email, ann.password), connectPush(pushUrl(bridge.url), ben.email, ben.password)]);
      expect([annSocket.answer, benSocket.answer]).toEqual(['authenticated', 'authenticated']);
      const change: StoreChange = { folders: [], notified: [ann.uuid], everything: false, properties: false, locks: false, sessions: false, local: false };
      for (const listener of listeners) listener(change);
      expect(await annSocket.next((m) => m === 'notify_notification', 3000)).toBe('notify_notification');
      expect(await annSocket.next((m) => m === 'notify_activity', 3000)).toBe('notify_activity');
      await expect(benSocket.next((m) => m.startsWith('notify_'), 1000)).rejects.toThrow(/no matching push message/);
      annSocket.close();
      benSocket.close();
    } finally {
      await bridge.close();
      await fixture.close();
    }
  });
});

describe.skipIf(TEST_TRANSPORT !== 'http')('push without a change feed', () => {
  it('is not advertised by a bridge in front of a store over HTTP', async () => {
    const f = await bridgeFixture({ transport: 'http' });
    try {
      const res = await fetch(`${f.davUrl}/ocs/v2.php/cloud/capabilities?format=json`);
      const caps = ((await res.json()) as { ocs: { data: { capabilities: Record<string, unknown> } } }).ocs.data.capabilities;
      expect(caps).not.toHaveProperty('notify_push');
      await expect(connectPush(`${f.davUrl.replace(/^http/, 'ws')}/push/ws`, 'x', 'y')).rejects.toThrow(/404/);
    } finally {
      await f.close();
    }
  });
});

describe.skipIf(TEST_TRANSPORT === 'http')('push sockets behind a trusted proxy: an IPv6 network counts as one address', () => {
  let f: BridgeFixture;
  beforeAll(async () => {
    f = await bridgeFixture({ transport: 'local', flags: { 'store.trustedProxies': ['127.0.0.1'] }, bridgeFlags: { pushMaxSocketsPerAddress: 2 } });
  });
  afterAll(async () => {
    await f.close();
  });

  const from = (forwarded: string): Promise<{ ws: WebSocket; status?: number }> =>
    new Promise((resolve) => {
      const ws = new WebSocket(pushUrl(f.davUrl), { headers: { 'x-forwarded-for': forwarded } });
      ws.once('open', () => resolve({ ws }));
      ws.once('unexpected-response', (_req, res) => resolve({ ws, status: res.statusCode }));
    });

  it("refuses a third socket from another address of the same /64, and takes one from another network", async () => {
    const held = [await from('2001:db8:0:1::1'), await from('2001:db8:0:1::2')];
    expect(held.map((s) => s.status)).toEqual([undefined, undefined]);
    expect((await from('2001:db8:0:1:ffff:ffff:ffff:ffff')).status).toBe(429);
    const other = await from('2001:db8:0:2::1');
    expect(other.status).toBeUndefined();
    for (const s of [...held, other]) s.ws.close();
  });
});
