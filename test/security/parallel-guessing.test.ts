/**
 * Issue 14, finding 3: rate limits fell to parallel requests. The limiter was asked before the
 * secret was checked and told after, so 50 wrong guesses sent at once were all checked. Now an
 * attempt is counted before the check: of 50 parallel guesses, the limit (10) are checked and
 * answered 401, the others refused (429 from the store, 503 with Retry-After from the bridge),
 * and the login history holds no more checked failures than the limit. For every door that
 * checks a secret: the account password and an app password (REST), a TOTP code, a link's
 * password, and Basic auth through the bridge, in-process and over HTTP, including a store that
 * limits nothing itself. During the lockout the right secret is refused too; after the window
 * it works.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/common/clock.js';
import type { RawResponse } from '../../src/store-client/index.js';
import { basicAuth, bridgeFixture, type BridgeFixture, type Transport } from '../helpers/start-bridge.js';
import { davRequest } from '../helpers/dav-requests.js';
import { uploadFile } from '../helpers/seed.js';
import { basic, fetchRaw } from '../helpers/sharing.js';
import { storeFixture, type StoreFixture, type TestUser } from '../helpers/store-fixture.js';
import { totpCode } from '../helpers/totp.js';
import { apiCall, dataOf, readHistoryRows, postAuth } from '../helpers/user-api.js';

const LIMIT = 10;
const PARALLEL = 50;
const PAST_WINDOW_MS = 16 * 60 * 1000;

/** Statuses of the answers, counted. */
function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

/** Failures the store checked (not the ones it refused unchecked as rate limited). */
async function checkedFailures(f: StoreFixture, userUuid: string): Promise<number> {
  return (await readHistoryRows(f.store, userUuid)).filter((r) => r.status === 'failure' && r.error_details !== 'rate limited').length;
}

describe('parallel guessing through the store', () => {
  let f: StoreFixture;

  beforeAll(async () => {
    f = await storeFixture();
    f.store.clock.freeze();
  });
  afterEach(() => {
    // Every test starts with empty counters (all requests come from 127.0.0.1).
    f.store.clock.advance(PAST_WINDOW_MS);
  });
  afterAll(async () => {
    await f.close();
  });

  const login = (user: TestUser, password: string, code?: string): Promise<RawResponse> =>
    postAuth(f.client, { username: user.email, password, ...(code === undefined ? {} : { code }) });

  it(`checks no more than ${LIMIT} of ${PARALLEL} wrong passwords sent at once`, async () => {
    const user = await f.newUser();
    const answers = await Promise.all(Array.from({ length: PARALLEL }, (_, i) => login(user, `Wrong-Passw0rd-${i}`)));
    expect(tally(answers.map((a) => a.status))).toEqual({ 401: LIMIT, 429: PARALLEL - LIMIT });
    expect(answers.find((a) => a.status === 429)?.body).toStrictEqual({ status: 'error', msg: 'too many failed logins; try again later', code: 'rate_limited' });
    expect(Number(answers.find((a) => a.status === 429)?.headers['retry-after'])).toBeGreaterThan(0);
    expect(await checkedFailures(f, user.uuid)).toBe(LIMIT);

    expect((await login(user, user.password)).status).toBe(429);
    f.store.clock.advance(PAST_WINDOW_MS);
    expect((await login(user, user.password)).status).toBe(200);
  });

  it(`checks no more than ${LIMIT} of ${PARALLEL} wrong app passwords sent at once`, async () => {
    const user = await f.newUser();
    const app = dataOf<{ password: string }>(await apiCall(f.client, user.session, 'POST', '/api/user/app_passwords', { name: 'laptop' }));
    // Guesses shaped like the real one (same length and alphabet), one character off each.
    const guesses = Array.from({ length: PARALLEL }, (_, i) => `${app.password.slice(0, -2)}${String(i).padStart(2, '0')}`).filter((g) => g !== app.password);
    const answers = await Promise.all(guesses.map((g) => login(user, g)));
    expect(answers.filter((a) => a.status === 401)).toHaveLength(LIMIT);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(guesses.length - LIMIT);
    expect(await checkedFailures(f, user.uuid)).toBe(LIMIT);

    expect((await login(user, app.password)).status).toBe(429);
    f.store.clock.advance(PAST_WINDOW_MS);
    expect((await login(user, app.password)).status).toBe(200);
  });

  it(`checks no more than ${LIMIT} of ${PARALLEL} wrong two-factor codes sent at once`, async () => {
    const user = await f.newUser();
    const { secret_twofa: secret } = dataOf<{ secret_twofa: string }>(await apiCall(f.client, user.session, 'POST', '/api/user/2fa', { twofa: true }));
    const right = totpCode(secret, f.store.clock.now());
    const wrong = Array.from({ length: PARALLEL }, (_, i) => String((Number(right) + 1 + i * 7919) % 1_000_000).padStart(6, '0'));
    const answers = await Promise.all(wrong.map((code) => login(user, user.password, code)));
    expect(answers.filter((a) => a.status === 401 && (a.body as { code: string }).code === 'twofa_invalid')).toHaveLength(LIMIT);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(PARALLEL - LIMIT);
    expect((await readHistoryRows(f.store, user.uuid)).filter((r) => r.error_details === 'wrong two-factor code')).toHaveLength(LIMIT);

    expect((await login(user, user.password, right)).status).toBe(429);
    f.store.clock.advance(PAST_WINDOW_MS);
    expect((await login(user, user.password, totpCode(secret, f.store.clock.now()))).status).toBe(200);
  });

  it(`checks no more than ${LIMIT} of ${PARALLEL} wrong link passwords sent at once`, async () => {
    const user = await f.newUser();
    const file = await uploadFile(f.client, user.session, 'home', 'guarded.txt', 'guarded bytes');
    const link = dataOf<{ url: string }>(await apiCall(f.client, user.session, 'POST', `/api/nodes/${file}/shares`, { type: 'public', password: 'correct horse' }));
    const answers = await Promise.all(Array.from({ length: PARALLEL }, (_, i) => fetchRaw(f.store, link.url, { headers: basic(`guess ${i}`) })));
    expect(tally(answers.map((a) => a.status))).toEqual({ 401: LIMIT, 429: PARALLEL - LIMIT });
    expect(answers.find((a) => a.status === 429)?.json()).toMatchObject({ status: 'error', code: 'rate_limited' });

    expect((await fetchRaw(f.store, link.url, { headers: basic('correct horse') })).status).toBe(429);
    f.store.clock.advance(PAST_WINDOW_MS);
    const right = await fetchRaw(f.store, link.url, { headers: basic('correct horse') });
    expect({ status: right.status, body: right.body.toString() }).toEqual({ status: 200, body: 'guarded bytes' });
  });
});

describe.each<{ transport: Transport; storeLimits: boolean }>([
  { transport: 'local', storeLimits: true },
  { transport: 'http', storeLimits: true },
  { transport: 'http', storeLimits: false },
])('parallel guessing through the bridge ($transport, store limits: $storeLimits)', ({ transport, storeLimits }) => {
  let f: BridgeFixture;
  const bridgeClock = new ManualClock();

  beforeAll(async () => {
    bridgeClock.freeze();
    // A store that limits nothing of its own stands for a foreign server of the interface.
    f = await bridgeFixture({ transport, clock: bridgeClock, ...(storeLimits ? {} : { flags: { 'store.loginMaxFailures': 100_000 } }) });
    f.store.clock.freeze();
  });
  afterEach(() => {
    f.store.clock.advance(PAST_WINDOW_MS);
    bridgeClock.advance(PAST_WINDOW_MS);
  });
  afterAll(async () => {
    await f.close();
  });

  const propfind = (auth: string) => davRequest(f.davUrl, 'PROPFIND', '/', { auth, headers: { depth: '0' } });

  async function guessInParallel(user: TestUser, guesses: string[]): Promise<void> {
    const answers = await Promise.all(guesses.map((g) => propfind(basicAuth(user.email, g))));
    expect(answers.filter((a) => a.status === 401)).toHaveLength(LIMIT);
    const refused = answers.filter((a) => a.status === 503);
    expect(refused).toHaveLength(guesses.length - LIMIT);
    expect(Number(refused[0]?.headers['retry-after'])).toBeGreaterThan(0);
    expect(await checkedFailures(f, user.uuid)).toBeLessThanOrEqual(LIMIT);
  }

  async function lockedOutThenBack(auth: string): Promise<void> {
    expect((await propfind(auth)).status).toBe(503);
    f.store.clock.advance(PAST_WINDOW_MS);
    bridgeClock.advance(PAST_WINDOW_MS);
    expect((await propfind(auth)).status).toBe(207);
  }

  it(`lets no more than ${LIMIT} of ${PARALLEL} wrong Basic passwords reach a check`, async () => {
    const user = await f.newUser();
    await guessInParallel(
      user,
      Array.from({ length: PARALLEL }, (_, i) => `Wrong-Passw0rd-${i}`),
    );
    await lockedOutThenBack(basicAuth(user.email, user.password));
  });

  it(`lets no more than ${LIMIT} of ${PARALLEL} wrong app passwords over Basic reach a check`, async () => {
    const user = await f.newUser();
    const app = dataOf<{ password: string }>(await apiCall(f.client, user.session, 'POST', '/api/user/app_passwords', { name: 'dav' }));
    const guesses = Array.from({ length: PARALLEL }, (_, i) => `${app.password.slice(0, -2)}${String(i).padStart(2, '0')}`).filter((g) => g !== app.password);
    await guessInParallel(user, guesses);
    await lockedOutThenBack(basicAuth(user.email, app.password));
  });
});
