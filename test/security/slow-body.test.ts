/**
 * Issue 21, item 5: a body trickled a byte every few seconds dodged the idle limit and held its
 * connection for up to `http.requestTimeoutMs` (4 h); one address could open any number of
 * connections; headers were cut up to a quarter of `http.headersTimeoutMs` late (Node's check
 * interval). Against the store's and the bridge's listeners, over HTTP and HTTPS, with a short
 * rate window and the default minimum rate: a trickle is cut with 408 within the window and
 * leaves the old content (no new file); a body at 1 MB/s, and one that stalls for less than a
 * window after a burst, complete; past `http.maxConnectionsPerAddress` a connection is closed at
 * accept with one warning, those under it are served, and a closed one frees its place; headers
 * trickled on connections opened at staggered moments are all cut within a second of the bound.
 */
import net from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/common/config.js';
import { captureLog, type LogCapture } from '../helpers/log-capture.js';
import { multipartFile } from '../helpers/sharing.js';
import { connectTo, exchange, pieces } from '../helpers/slow-socket.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';
import { selfSignedCertificate } from '../helpers/tls-cert.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';

const WINDOW_MS = 2_000;
const MAX_CONNECTIONS = 6;
const HEADERS_MS = 8_000;
/** How long a trickle test waits for a cut before it calls the server unbounded. */
const GIVE_UP_MS = 10_000;
const OLD = 'the old content, kept';

interface Listeners {
  name: string;
  f: BridgeFixture;
  user: DavUser;
  log: LogCapture;
  /** Trusts the fixture's certificate when it serves HTTPS. */
  dispatcher: Agent;
  ca?: Buffer;
  /** An upload link to the user's folder `inbox`, and that folder. */
  linkUrl: string;
  inbox: string;
}

const tmp = makeTmpDir('driveway-slow-body-');
const certificate = selfSignedCertificate(tmp.dir);
const targets: Listeners[] = [];

async function listeners(name: string, tls: boolean): Promise<Listeners> {
  const log = captureLog('info');
  const f = await bridgeFixture({
    transport: 'local',
    logger: log.logger,
    bridgeLogger: log.logger,
    ...(tls ? { ca: certificate.cert } : {}),
    flags: { 'http.bodyRateWindowMs': WINDOW_MS, 'http.maxConnectionsPerAddress': MAX_CONNECTIONS, ...(tls ? certificate.flags : {}) },
  });
  const user = await f.newDavUser();
  await f.client.createFolder(user.session, 'home' as never, 'inbox');
  const inbox = (await f.client.listFolder(user.session, 'home' as never)).find((entry) => entry.name === 'inbox')?.id as string;
  const res = await f.client.http.requestRaw({ method: 'POST', path: `/api/nodes/${inbox}/shares`, token: user.session.token, json: { type: 'upload' } });
  const linkUrl = (res.body as { data: { url: string } }).data.url;
  const dispatcher = new Agent({ connections: 1, ...(tls ? { connect: { ca: certificate.cert } } : {}) });
  return { name, f, user, log, dispatcher, ...(tls ? { ca: certificate.cert } : {}), linkUrl, inbox };
}

beforeAll(async () => {
  targets.push(await listeners('HTTP', false), await listeners('HTTPS', true));
});

afterAll(async () => {
  for (const t of targets) {
    await t.dispatcher.close();
    await t.f.close();
  }
  tmp.remove();
});

/** One request to the bridge through the target's own connection pool, read to the end. */
async function dav(t: Listeners, method: string, path: string, body?: Buffer | string): Promise<{ status: number; text: string }> {
  const res = await request(`${t.f.davUrl}${path}`, { method, headers: { authorization: t.user.auth }, dispatcher: t.dispatcher, ...(body !== undefined ? { body } : {}) });
  return { status: res.statusCode, text: await res.body.text() };
}

const putHead = (t: Listeners, path: string, length: number): string =>
  `PUT ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${t.user.auth}\r\nContent-Length: ${length}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n`;

const uploadHead = (t: Listeners, form: { headers: Record<string, string>; body: Buffer }): string =>
  `POST ${new URL(t.linkUrl).pathname}/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${form.headers['content-type']}\r\nContent-Length: ${form.body.length}\r\nConnection: close\r\n\r\n`;

async function inboxNames(t: Listeners): Promise<string[]> {
  return (await t.f.client.listFolder(t.user.session, t.inbox as never)).map((entry) => entry.name).sort();
}

/** `total` bytes of `fill` in chunks of `chunkBytes`. */
const chunksOf = (total: number, chunkBytes: number, fill: number): Buffer[] => pieces(Buffer.alloc(total, fill), Math.ceil(total / chunkBytes));

it('has defaults that pass 1 MB/s by a hundredfold and cut a trickle within a minute', () => {
  const { http } = loadConfig({ env: {} });
  expect(http.minBodyRateBytesPerSec).toBeGreaterThan(0);
  expect(http.minBodyRateBytesPerSec).toBeLessThanOrEqual(1_000_000 / 100);
  expect(http.bodyRateWindowMs).toBeLessThanOrEqual(60_000 - 1_000);
  expect(http.maxConnectionsPerAddress).toBeGreaterThanOrEqual(64);
});

describe.each(['HTTP', 'HTTPS'])('over %s', (name) => {
  const t = (): Listeners => targets.find((target) => target.name === name) as Listeners;

  it('cuts a PUT trickled a byte every 2 s with 408 within the window, and the file keeps its old content', async () => {
    expect((await dav(t(), 'PUT', '/home/trickle.txt', OLD)).status).toBe(201);
    const body = Buffer.from('x'.repeat(100));
    const result = await exchange(t().f.davUrl, putHead(t(), '/home/trickle.txt', body.length), pieces(body, 100), 2_000, { giveUpMs: GIVE_UP_MS, ...(t().ca ? { ca: t().ca } : {}) });
    expect({ closedByServer: result.closedByServer, status: result.response.slice(0, 12) }).toEqual({ closedByServer: true, status: 'HTTP/1.1 408' });
    expect(result.elapsedMs).toBeLessThan(WINDOW_MS + 2_000);
    expect(await dav(t(), 'GET', '/home/trickle.txt')).toEqual({ status: 200, text: OLD });
    const line = await t().log.waitFor((l) => l.msg === 'request body too slow: connection cut' && l.part === 'bridge');
    expect(line).toMatchObject({ method: 'PUT', url: '/home/trickle.txt', ip: '127.0.0.1' });
  });

  it('cuts an upload through a link trickled a byte every 2 s with 408, no file appears, and the log hides the link token', async () => {
    const form = multipartFile('trickle.bin', Buffer.alloc(100, 1));
    const result = await exchange(t().f.store.url, uploadHead(t(), form), pieces(form.body, form.body.length), 2_000, { giveUpMs: GIVE_UP_MS, ...(t().ca ? { ca: t().ca } : {}) });
    expect({ closedByServer: result.closedByServer, status: result.response.slice(0, 12) }).toEqual({ closedByServer: true, status: 'HTTP/1.1 408' });
    expect(result.elapsedMs).toBeLessThan(WINDOW_MS + 2_000);
    expect(await inboxNames(t())).toEqual([]);
    const line = await t().log.waitFor((l) => l.msg === 'request body too slow: connection cut' && l.part === 'store');
    const token = new URL(t().linkUrl).pathname.split('/')[2] as string;
    expect(JSON.stringify(line)).not.toContain(token);
  });

  it('lets a PUT at 1 MB/s run for several windows and complete', { timeout: 60_000 }, async () => {
    const chunks = chunksOf(5_000_000, 64 * 1024, 7);
    const result = await exchange(t().f.davUrl, putHead(t(), '/home/fast.bin', 5_000_000), chunks, 64, { giveUpMs: 30_000, ...(t().ca ? { ca: t().ca } : {}) });
    expect(result.elapsedMs).toBeGreaterThan(2 * WINDOW_MS);
    expect(result.response.slice(0, 12)).toBe('HTTP/1.1 201');
    const now = await dav(t(), 'GET', '/home/fast.bin');
    expect({ status: now.status, length: now.text.length }).toEqual({ status: 200, length: 5_000_000 });
  });

  it('lets an upload that stalls for less than a window after a burst complete', async () => {
    const form = multipartFile('stalling.bin', Buffer.alloc(16 * 1024, 3));
    // The first 8 KiB at once, then nothing for 1.5 s, then the rest in 5 pieces 300 ms apart.
    const [first, ...rest] = pieces(form.body, 2) as [Buffer, Buffer];
    const chunks = [first, ...Array.from({ length: 4 }, () => Buffer.alloc(0)), ...pieces(rest[0] as Buffer, 5)];
    const result = await exchange(t().f.store.url, uploadHead(t(), form), chunks, 300, { giveUpMs: GIVE_UP_MS, ...(t().ca ? { ca: t().ca } : {}) });
    expect(result.response).toMatch(/^HTTP\/1\.1 200/);
    expect(await inboxNames(t())).toEqual(['stalling.bin']);
  });

  it.each(['store', 'bridge'] as const)('closes a connection past the cap on the %s listener at accept, serves those under it, and warns once', async (part) => {
    const url = part === 'store' ? t().f.store.url : t().f.davUrl;
    const opened: Array<{ socket: net.Socket; served: boolean }> = [];
    try {
      // Other connections of this suite's clients may be open still: open until one is refused.
      for (let i = 0; i <= MAX_CONNECTIONS && !opened.some((o) => !o.served); i += 1) opened.push(await healthOn(url, t().ca));
      const served = opened.filter((o) => o.served);
      expect(served.length).toBeGreaterThan(0);
      expect(opened.at(-1)?.served).toBe(false);
      for (let i = 0; i < 3; i += 1) opened.push(await healthOn(url, t().ca));
      expect(opened.slice(-3).map((o) => o.served)).toEqual([false, false, false]);
      // Those under the cap are still served, on their open connections.
      for (const o of served) expect(await healthAgain(o.socket)).toBe(true);
      // A closed one frees its place (once the server has seen it close: a few tries).
      served[0]?.socket.destroy();
      let again = false;
      for (let attempt = 0; attempt < 20 && !again; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const next = await healthOn(url, t().ca);
        opened.push(next);
        again = next.served;
      }
      expect(again).toBe(true);
    } finally {
      for (const o of opened) o.socket.destroy();
    }
    const warnings = t().log.lines().filter((l) => l.msg === 'connections refused: too many open from one address (http.maxConnectionsPerAddress)' && l.part === part);
    expect(warnings.map((l) => ({ ip: l.ip, max: l.maxConnectionsPerAddress, refused: l.refused }))).toEqual([{ ip: '127.0.0.1', max: MAX_CONNECTIONS, refused: 1 }]);
  });
});

/** A request for /healthz on a new kept-alive connection: whether it was answered 200 (else the server closed it). */
function healthOn(url: string, ca: Buffer | undefined): Promise<{ socket: net.Socket; served: boolean }> {
  return new Promise((resolve) => {
    const socket = connectTo(url, () => socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'), ca);
    let answer = '';
    const done = (served: boolean): void => {
      socket.removeAllListeners('data');
      resolve({ socket, served });
    };
    socket.on('data', (data: Buffer) => {
      answer += data.toString('latin1');
      if (/\r\n\r\n/.test(answer)) done(answer.startsWith('HTTP/1.1 200'));
    });
    socket.once('close', () => done(false));
    socket.on('error', () => undefined);
  });
}

/** /healthz again on an open connection: whether it was answered 200. */
function healthAgain(socket: net.Socket): Promise<boolean> {
  return new Promise((resolve) => {
    let answer = '';
    socket.on('data', (data: Buffer) => {
      answer += data.toString('latin1');
      if (/\r\n\r\n/.test(answer)) resolve(answer.startsWith('HTTP/1.1 200'));
    });
    socket.once('close', () => resolve(false));
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  });
}

describe('headers trickled a byte every 500 ms', () => {
  let f: BridgeFixture;

  beforeAll(async () => {
    f = await bridgeFixture({ transport: 'local', flags: { 'http.headersTimeoutMs': HEADERS_MS } });
  });

  afterAll(() => f?.close());

  it('are cut with 408 within a second of http.headersTimeoutMs, on connections opened at any moment, on both listeners', async () => {
    // Five connections per listener, 400 ms apart: with a check every HEADERS_MS / 4 (Node's
    // interval as it was set), one of them would wait 1.6 s or more past the bound.
    const rest = Buffer.from(`ET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${'s'.repeat(60)}\r\n\r\n`);
    const runs = [f.store.url, f.davUrl].flatMap((url) =>
      Array.from({ length: 5 }, async (_, i) => {
        await new Promise((resolve) => setTimeout(resolve, i * 400));
        return exchange(url, 'G', pieces(rest, rest.length), 500, { giveUpMs: HEADERS_MS + 5_000 });
      }),
    );
    const results = await Promise.all(runs);
    for (const result of results) {
      expect({ closedByServer: result.closedByServer, status: result.response.slice(0, 12) }).toEqual({ closedByServer: true, status: 'HTTP/1.1 408' });
      expect(result.elapsedMs).toBeGreaterThanOrEqual(HEADERS_MS - 100);
    }
    expect(Math.max(...results.map((r) => r.elapsedMs))).toBeLessThan(HEADERS_MS + 1_000);
  }, 30_000);
});
