/**
 * Issue 21, item 9: a WebDAV request refused because the store is unavailable for now (its 503,
 * or a gateway's 502/504 in front of it) is logged at warn with its cause and no stack, as the
 * store logs its own 503s; a 5xx that is a real failure (the store's 500) stays an error with its
 * stack. The store's answers are played by the counting proxy in front of the real store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests } from '../../helpers/dav-requests.js';
import { captureLog } from '../../helpers/log-capture.js';
import { createFolder } from '../../helpers/seed.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

describe('how the bridge logs a store that cannot serve', () => {
  const log = captureLog('info');
  let f: BridgeFixture;
  let user: DavUser;
  const { davAs } = bridgeRequests(() => f);

  beforeAll(async () => {
    f = await bridgeFixture({ viaProxy: true, bridgeLogger: log.logger });
    user = await f.newDavUser();
    for (const name of ['busy', 'broken']) await createFolder(f.client, user.session, 'home', name);
    // Logged in, and the home listing cached: what follows reaches the store only for the folder asked.
    expect((await davAs(user, 'PROPFIND', '/home/', { depth: '1' })).status).toBe(207);
  });
  afterAll(async () => {
    await f?.close();
  });

  /** The bridge's lines about `url` at warn or above. */
  const linesAbout = (url: string) => log.lines().filter((l) => l.url === url && Number(l.level) >= 40);

  it('logs a store 503 as one warn line with its cause and no stack, and answers 503 with Retry-After', async () => {
    const stop = f.proxy!.answerInstead(/\/dirlist$/, 503, { status: 'error', msg: 'the database is unavailable; try again later', code: 'unavailable' });
    try {
      const answer = await davAs(user, 'PROPFIND', '/home/busy/', { depth: '1' });
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toMatch(/^\d+$/);
    } finally {
      stop();
    }
    const lines = linesAbout('/home/busy/');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, status: 503, cause: expect.stringMatching(/unavailable/) });
    expect(Object.keys(lines[0]!)).not.toContain('err');
    expect(JSON.stringify(lines[0])).not.toMatch(/stack|at [\w.]+ \(/);
  });

  it('logs a store 500 (a failure, not a pause) as an error with its stack', async () => {
    const stop = f.proxy!.answerInstead(/\/dirlist$/, 500, { status: 'error', msg: 'internal error', code: 'internal' });
    try {
      expect((await davAs(user, 'PROPFIND', '/home/broken/', { depth: '1' })).status).toBe(502);
    } finally {
      stop();
    }
    const lines = linesAbout('/home/broken/');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, status: 502 });
    expect((lines[0]!.err as { stack?: string }).stack).toMatch(/StoreError/);
  });
});

describe('how the bridge logs a 507 or 502 the client caused (issue 29)', () => {
  const log = captureLog('info');
  let f: BridgeFixture;
  let user: DavUser;
  const { davAs } = bridgeRequests(() => f);

  beforeAll(async () => {
    f = await bridgeFixture({ bridgeLogger: log.logger });
    user = await f.newDavUser({ quotaBytes: 64 });
  });
  afterAll(async () => {
    await f?.close();
  });

  /** One warn line about `url`, with the status and no stack, and nothing at error. */
  async function expectOneWarning(url: string, status: number): Promise<void> {
    await log.waitFor((l) => l.url === url && Number(l.level) >= 40);
    const lines = log.lines().filter((l) => l.url === url && Number(l.level) >= 40);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, status });
    expect(Object.keys(lines[0]!)).not.toContain('err');
    expect(JSON.stringify(lines[0])).not.toMatch(/stack|at [\w.]+ \(/);
  }

  it('logs a PUT over the quota (507) as one warn line without a stack', async () => {
    const answer = await davAs(user, 'PUT', '/home/too-big.bin', {}, 'x'.repeat(1000));
    expect(answer.status).toBe(507);
    await expectOneWarning('/home/too-big.bin', 507);
  });

  it('logs a COPY to another server (502) as one warn line without a stack', async () => {
    expect((await davAs(user, 'PUT', '/home/small.txt', {}, 'small')).status).toBe(201);
    const answer = await davAs(user, 'COPY', '/home/small.txt', { destination: 'http://elsewhere.example/home/copy.txt' });
    expect(answer.status).toBe(502);
    await expectOneWarning('/home/small.txt', 502);
  });
});
