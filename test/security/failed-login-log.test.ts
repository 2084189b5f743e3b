/**
 * Issue 14, "logs an operator can use": rate-limited bridge logins were logged at error level
 * with a stack trace each, so a flood of guesses flooded the log. Now every refused login,
 * through REST (`api`), a link's password (`link`) or Basic auth through the bridge (`dav`),
 * is ONE line at info: msg "login failed" with door, user, client address and reason, no stack,
 * never the password; nothing about it at warn or above. fail2ban reads these lines
 * (docs/security.md). In-process, a DAV login is logged by the bridge only, not twice.
 */
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/common/clock.js';
import { createLogger } from '../../src/common/logger.js';
import { startBridge, type RunningBridge } from '../../src/bridge/server.js';
import { basicAuth, bridgeStateFor, bridgeStoreFor, type Transport } from '../helpers/start-bridge.js';
import { davRequest } from '../helpers/dav-requests.js';
import { uploadFile } from '../helpers/seed.js';
import { basic, fetchRaw } from '../helpers/sharing.js';
import { storeFixture, type StoreFixture } from '../helpers/store-fixture.js';
import { apiCall, dataOf, postAuth } from '../helpers/user-api.js';

const PAST_WINDOW_MS = 16 * 60 * 1000;
const LIMIT = 10;

interface Line {
  level: number;
  msg: string;
  door?: string;
  user?: string;
  ip?: string;
  reason?: string;
  [key: string]: unknown;
}

function capture(): { lines: () => Line[]; raw: () => string; sink: Writable; reset: () => void } {
  let chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const raw = () => chunks.join('');
  return {
    sink,
    raw,
    lines: () =>
      raw()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Line),
    reset: () => {
      chunks = [];
    },
  };
}

describe.each<Transport>(['local', 'http'])('failed-login log lines (bridge %s)', (transport) => {
  const storeLog = capture();
  const bridgeLog = capture();
  let f: StoreFixture;
  let bridge: RunningBridge;
  const bridgeClock = new ManualClock();

  beforeAll(async () => {
    f = await storeFixture({ logger: createLogger('info', storeLog.sink) });
    f.store.clock.freeze();
    bridgeClock.freeze();
    bridge = await startBridge({ config: f.store.config, logger: createLogger('info', bridgeLog.sink), store: bridgeStoreFor(f.store, transport), state: await bridgeStateFor(f.store, transport), port: 0, clock: bridgeClock });
  });
  afterEach(() => {
    f.store.clock.advance(PAST_WINDOW_MS);
    bridgeClock.advance(PAST_WINDOW_MS);
    storeLog.reset();
    bridgeLog.reset();
  });
  afterAll(async () => {
    await bridge.close();
    await f.close();
  });

  const failedLines = (log: ReturnType<typeof capture>, door: string): Line[] => log.lines().filter((l) => l.msg === 'login failed' && l.door === door);
  const allLines = (): Line[] => [...storeLog.lines(), ...bridgeLog.lines()];

  function expectPlain(lines: Line[], secrets: string[]): void {
    for (const line of lines) {
      expect(line.level).toBe(30);
      expect(Object.keys(line)).not.toContain('err');
      expect(Object.keys(line)).not.toContain('stack');
    }
    const text = storeLog.raw() + bridgeLog.raw();
    for (const secret of secrets) expect(text).not.toContain(secret);
    // Nothing about the refusals at warn or above, and no stack anywhere.
    expect(allLines().filter((l) => l.level >= 40)).toEqual([]);
    expect(text).not.toMatch(/"stack"/);
  }

  it('REST: one info line per refused login, with user, address and reason, the rate-limited ones too', async () => {
    const user = await f.newUser();
    storeLog.reset();
    const wrong = Array.from({ length: LIMIT + 3 }, (_, i) => `Wrong-Secret-${i}`);
    for (const password of wrong) await postAuth(f.client, { username: user.email, password });

    const lines = failedLines(storeLog, 'api');
    expect(lines.map((l) => ({ user: l.user, ip: l.ip, reason: l.reason }))).toEqual([
      ...Array.from({ length: LIMIT }, () => ({ user: user.email, ip: '127.0.0.1', reason: 'wrong password' })),
      ...Array.from({ length: 3 }, () => ({ user: user.email, ip: '127.0.0.1', reason: 'rate limited' })),
    ]);
    expectPlain(lines, wrong);
  });

  it('a link password: one info line per refusal, door link', async () => {
    const user = await f.newUser();
    const file = await uploadFile(f.client, user.session, 'home', 'guarded.txt', 'guarded');
    const link = dataOf<{ url: string; share_uuid: string }>(await apiCall(f.client, user.session, 'POST', `/api/nodes/${file}/shares`, { type: 'public', password: 'correct horse' }));
    storeLog.reset();
    for (let i = 0; i < LIMIT + 1; i += 1) await fetchRaw(f.store, link.url, { headers: basic(`guess-${i}`) });

    const lines = failedLines(storeLog, 'link');
    expect(lines.map((l) => l.reason)).toEqual([...Array.from({ length: LIMIT }, () => 'wrong password'), 'rate limited']);
    expect(lines.every((l) => l.user === link.share_uuid && l.ip === '127.0.0.1')).toBe(true);
    expectPlain(lines, ['guess-']);
  });

  it('DAV: one info line per refused Basic login, door dav, the rate-limited ones too, never an error with a stack', async () => {
    const user = await f.newUser();
    storeLog.reset();
    const wrong = Array.from({ length: LIMIT + 5 }, (_, i) => `Wrong-Dav-Secret-${i}`);
    const statuses: number[] = [];
    for (const password of wrong) statuses.push((await davRequest(bridge.url, 'PROPFIND', '/', { auth: basicAuth(user.email, password), headers: { depth: '0' } })).status);
    expect(statuses).toEqual([...Array.from({ length: LIMIT }, () => 401), ...Array.from({ length: 5 }, () => 503)]);

    const lines = failedLines(bridgeLog, 'dav');
    expect(lines.map((l) => ({ user: l.user, ip: l.ip, reason: l.reason }))).toEqual([
      ...Array.from({ length: LIMIT }, () => ({ user: user.email, ip: '127.0.0.1', reason: 'wrong username or password' })),
      ...Array.from({ length: 5 }, () => ({ user: user.email, ip: '127.0.0.1', reason: 'rate limited' })),
    ]);
    // In-process the store does not log the same refusal again (one process, one line each).
    if (transport === 'local') expect(failedLines(storeLog, 'api')).toEqual([]);
    expectPlain(lines, wrong);
  });

  /** Ways the credentials a bridge holds a session for stop working (each ends that session). */
  const REVOCATIONS: Array<[string, (user: Awaited<ReturnType<StoreFixture['newUser']>>, appPasswordUuid: string) => Promise<unknown>]> = [
    ['the password changed', (user) => apiCall(f.client, f.admin, 'PUT', `/api/admin/users/${user.uuid}`, { password: 'Another-Passw0rd-1' })],
    ['the account deactivated', (user) => apiCall(f.client, f.admin, 'PUT', `/api/admin/users/${user.uuid}`, { is_active: false })],
    ['the app password revoked', (user, appPasswordUuid) => apiCall(f.client, user.session, 'DELETE', `/api/user/app_passwords/${appPasswordUuid}`)],
  ];

  it.each(REVOCATIONS)('DAV: a login refused mid-request (%s) is one info line with the client’s address', async (what, revoke) => {
    const user = await f.newUser();
    const made = dataOf<{ uuid: string; password: string }>(await apiCall(f.client, user.session, 'POST', '/api/user/app_passwords', { name: 'dav' }));
    const password = what === 'the app password revoked' ? made.password : user.password;
    const auth = basicAuth(user.email, password);
    expect((await davRequest(bridge.url, 'PROPFIND', '/home/', { auth, headers: { depth: '1' } })).status).toBe(207);
    await revoke(user, made.uuid);
    bridgeLog.reset();
    storeLog.reset();

    // The bridge still holds a session for these credentials: the store refuses it (401), and logging in again fails.
    expect((await davRequest(bridge.url, 'PUT', '/home/after.txt', { auth, body: 'after' })).status).toBe(401);
    const lines = failedLines(bridgeLog, 'dav');
    expect(lines.map((l) => ({ user: l.user, ip: l.ip, reason: l.reason }))).toEqual([{ user: user.email, ip: '127.0.0.1', reason: 'wrong username or password' }]);
    if (transport === 'local') expect(failedLines(storeLog, 'api')).toEqual([]);
    expectPlain(lines, [password]);
    // The next try is answered from the negative cache: no second line.
    expect((await davRequest(bridge.url, 'PUT', '/home/after.txt', { auth, body: 'after' })).status).toBe(401);
    expect(failedLines(bridgeLog, 'dav')).toHaveLength(1);
  });

  it('DAV: a repeat of the same wrong credentials answered from the cache adds no line', async () => {
    const user = await f.newUser();
    const auth = basicAuth(user.email, 'Wrong-Repeated-1');
    for (let i = 0; i < 3; i += 1) expect((await davRequest(bridge.url, 'PROPFIND', '/', { auth, headers: { depth: '0' } })).status).toBe(401);
    expect(failedLines(bridgeLog, 'dav')).toHaveLength(1);
  });
});
