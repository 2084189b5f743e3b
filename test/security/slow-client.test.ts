/**
 * Issue 14, finding 6: slow clients held connections for ever (`requestTimeout: 0`, no idle
 * limit). With short limits configured (`http.*`), a raw socket against the store and the bridge:
 * a body that stops flowing is cut by the idle limit and nothing half-written is kept (the
 * target keeps its old content, no new node); a body trickled just fast enough to dodge the idle
 * limit is cut by the whole-request limit; headers trickled a byte at a time are answered 408
 * and cut; a slow but steady body (gaps below the idle limit, longer in all than it) completes.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { multipartFile } from '../helpers/sharing.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';
import { davRequest } from '../helpers/dav-requests.js';
import { exchange, pieces } from '../helpers/slow-socket.js';
import { loadConfig } from '../../src/common/config.js';

const IDLE_MS = 600;
const HEADERS_MS = 1_000;
const REQUEST_MS = 3_000;
/** How long a test waits for the server to cut a socket before it calls the server unbounded. */
const GIVE_UP_MS = 8_000;

let f: BridgeFixture;
let user: DavUser;

beforeAll(async () => {
  f = await bridgeFixture({ flags: { 'http.idleTimeoutMs': IDLE_MS, 'http.headersTimeoutMs': HEADERS_MS, 'http.requestTimeoutMs': REQUEST_MS } });
  user = await f.newDavUser();
});

afterAll(() => f?.close());

it('has defaults that let a 1 GiB upload at 1 MB/s pass and cut a stalled body within a minute', () => {
  const { http } = loadConfig({ env: {} });
  const oneGiBAtOneMBps = ((1024 ** 3) / 1_000_000) * 1000;
  expect(http.requestTimeoutMs === 0 || http.requestTimeoutMs > 2 * oneGiBAtOneMBps).toBe(true);
  expect(http.idleTimeoutMs).toBeGreaterThan(0);
  expect(http.idleTimeoutMs).toBeLessThanOrEqual(60_000);
  expect(http.headersTimeoutMs).toBeGreaterThan(0);
});

describe('the bridge', () => {
  const OLD = 'the old content, kept';
  /** Written through the bridge itself, so its listing cache knows the file. */
  const put = async (path: string, body: string | Buffer): Promise<void> => {
    const res = await davRequest(f.davUrl, 'PUT', path, { auth: user.auth, body });
    expect(res.status).toBe(201);
  };
  const putHead = (path: string, length: number) =>
    `PUT ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${user.auth}\r\nContent-Length: ${length}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n`;

  it('cuts a PUT whose body stops flowing, and the file keeps its old content', async () => {
    await put('/home/stalled.txt', OLD);
    const body = Buffer.from('n'.repeat(100));
    // Ten bytes, then nothing: the gap is far longer than the idle limit.
    const result = await exchange(f.davUrl, putHead('/home/stalled.txt', body.length), [body.subarray(0, 10)], 50);
    expect(result.closedByServer).toBe(true);
    expect(result.elapsedMs).toBeLessThan(IDLE_MS + 2_000);
    const now = await davRequest(f.davUrl, 'GET', '/home/stalled.txt', { auth: user.auth });
    expect({ status: now.status, body: now.text }).toEqual({ status: 200, body: OLD });
  });

  it('cuts a body trickled a byte every so often (gaps longer than the idle limit)', async () => {
    const body = Buffer.from('t'.repeat(20));
    const result = await exchange(f.davUrl, putHead('/home/trickled.txt', body.length), pieces(body, 20), IDLE_MS * 2);
    expect(result.closedByServer).toBe(true);
    expect(result.chunksSent).toBeLessThan(3);
    expect((await davRequest(f.davUrl, 'GET', '/home/trickled.txt', { auth: user.auth })).status).toBe(404);
  });

  it('cuts a body trickled just fast enough to dodge the idle limit once the whole request takes too long (408)', async () => {
    await put('/home/dodging.txt', OLD);
    const body = Buffer.from('d'.repeat(100));
    const result = await exchange(f.davUrl, putHead('/home/dodging.txt', body.length), pieces(body, 100), IDLE_MS / 3);
    expect(result.closedByServer).toBe(true);
    expect(result.elapsedMs).toBeGreaterThanOrEqual(REQUEST_MS - 100);
    expect(result.response).toMatch(/^HTTP\/1\.1 408/);
    const now = await davRequest(f.davUrl, 'GET', '/home/dodging.txt', { auth: user.auth });
    expect(now.text).toBe(OLD);
  });

  it('answers 408 to headers trickled a byte at a time, and cuts them', async () => {
    const head = `PROPFIND /home/ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${user.auth}\r\nDepth: 1\r\nX-Slow: ${'s'.repeat(40)}\r\n\r\n`;
    const result = await exchange(f.davUrl, 'P', pieces(Buffer.from(head.slice(1)), head.length - 1), IDLE_MS / 3);
    expect(result.closedByServer).toBe(true);
    expect(result.response).toMatch(/^HTTP\/1\.1 408/);
    expect(result.elapsedMs).toBeLessThan(HEADERS_MS + 2_000);
  });

  it('cuts a download the client stops reading', async () => {
    const size = 48 * 1024 * 1024;
    await put('/home/unread.bin', Buffer.alloc(size, 5));
    const { hostname, port } = new URL(f.davUrl);
    const socket = net.connect(Number(port), hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`GET /home/unread.bin HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${user.auth}\r\n\r\n`);
    socket.pause();
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS * 3));
    let received = 0;
    let head = '';
    const ended = new Promise<boolean>((resolve) => {
      const giveUp = setTimeout(() => resolve(false), GIVE_UP_MS);
      socket.on('data', (chunk: Buffer) => {
        if (received === 0) head = chunk.subarray(0, 12).toString('latin1');
        received += chunk.length;
      });
      socket.once('close', () => {
        clearTimeout(giveUp);
        resolve(true);
      });
      socket.on('error', () => undefined);
    });
    socket.resume();
    const closedByServer = await ended;
    socket.destroy();
    expect({ head, closedByServer, cut: received < size }).toEqual({ head: 'HTTP/1.1 200', closedByServer: true, cut: true });
  }, 30_000);

  it('lets a slow but steady PUT finish, though it takes longer than the idle limit', async () => {
    const body = Buffer.from('steady bytes, slow but never stalled');
    const result = await exchange(f.davUrl, putHead('/home/steady.txt', body.length), pieces(body, 8), IDLE_MS / 3);
    expect(result.elapsedMs).toBeGreaterThan(IDLE_MS);
    expect(result.response).toMatch(/^HTTP\/1\.1 201/);
    const now = await davRequest(f.davUrl, 'GET', '/home/steady.txt', { auth: user.auth });
    expect(now.text).toBe(body.toString());
  });
});

describe('the store', () => {
  let linkUrl = '';
  let inbox = '';

  /** The inbox's entries, by name. */
  async function inboxNames(): Promise<string[]> {
    return (await f.client.listFolder(user.session, inbox as never)).map((entry) => entry.name).sort();
  }

  beforeAll(async () => {
    await f.client.createFolder(user.session, 'home' as never, 'inbox');
    inbox = (await f.client.listFolder(user.session, 'home' as never)).find((entry) => entry.name === 'inbox')?.id as string;
    const res = await f.client.http.requestRaw({ method: 'POST', path: `/api/nodes/${inbox}/shares`, token: user.session.token, json: { type: 'upload' } });
    linkUrl = (res.body as { data: { url: string } }).data.url;
  });

  const uploadHead = (form: { headers: Record<string, string>; body: Buffer }) =>
    `POST ${linkUrl}/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${form.headers['content-type']}\r\nContent-Length: ${form.body.length}\r\nConnection: close\r\n\r\n`;

  it('cuts an upload whose body stops flowing, and no file appears', async () => {
    const form = multipartFile('stalled.bin', Buffer.alloc(4096, 1));
    const result = await exchange(f.store.url, uploadHead(form), [form.body.subarray(0, 1000)], 50);
    expect(result.closedByServer).toBe(true);
    expect(result.elapsedMs).toBeLessThan(IDLE_MS + 2_000);
    expect(await inboxNames()).toEqual([]);
  });

  it('cuts an upload trickled just fast enough to dodge the idle limit once the whole request takes too long (408)', async () => {
    const form = multipartFile('dodging.bin', Buffer.alloc(4096, 2));
    const result = await exchange(f.store.url, uploadHead(form), pieces(form.body, 200), IDLE_MS / 3);
    expect(result.closedByServer).toBe(true);
    expect(result.elapsedMs).toBeGreaterThanOrEqual(REQUEST_MS - 100);
    expect(result.response).toMatch(/^HTTP\/1\.1 408/);
    expect(await inboxNames()).toEqual([]);
  });

  it('answers 408 to headers trickled a byte at a time, and cuts them', async () => {
    const head = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${'s'.repeat(60)}\r\n\r\n`;
    const result = await exchange(f.store.url, 'G', pieces(Buffer.from(head.slice(1)), head.length - 1), IDLE_MS / 3);
    expect(result.closedByServer).toBe(true);
    expect(result.response).toMatch(/^HTTP\/1\.1 408/);
    expect(result.elapsedMs).toBeLessThan(HEADERS_MS + 2_000);
  });

  it('closes a connection that never sends a byte', async () => {
    const result = await exchange(f.store.url, '', [], 1_000);
    expect(result.closedByServer).toBe(true);
    expect(result.elapsedMs).toBeLessThan(IDLE_MS + 2_000);
  });

  it('lets a slow but steady upload finish, though it takes longer than the idle limit', async () => {
    const form = multipartFile('steady.bin', Buffer.alloc(2048, 3));
    const result = await exchange(f.store.url, uploadHead(form), pieces(form.body, 8), IDLE_MS / 3);
    expect(result.elapsedMs).toBeGreaterThan(IDLE_MS);
    expect(result.response).toMatch(/^HTTP\/1\.1 200/);
    expect(await inboxNames()).toEqual(['steady.bin']);
  });
});
