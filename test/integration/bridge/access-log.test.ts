/**
 * The bridge's access log (common/access-log.ts): one info line per request when it ends, with
 * method, path, status, bytes in and out, duration and the username, never the password; a GET
 * whose client goes away mid-answer says `closedEarly`; health polls are not info lines; and
 * log.accessLog: false leaves only failures.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { davRequest } from '../../helpers/dav-requests.js';
import { captureLog, type LogCapture } from '../../helpers/log-capture.js';

const BIG = 8 * 1024 * 1024;
const PROPFIND_BODY = '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:getcontentlength/></D:prop></D:propfind>';

const isRequest = (method: string, path: string) => (line: Record<string, unknown>) => line.msg === 'request' && line.method === method && line.url === path;

describe('bridge access log', () => {
  let f: BridgeFixture;
  let u: DavUser;
  let capture: LogCapture;

  beforeAll(async () => {
    capture = captureLog('info');
    f = await bridgeFixture({ bridgeLogger: capture.logger });
    u = await f.newDavUser();
  });
  afterAll(async () => {
    await f.close();
  });

  it('writes one line per request with status, bytes, duration and the username, never the password', async () => {
    const body = Buffer.alloc(BIG, 7);
    expect((await davRequest(f.davUrl, 'PUT', '/home/big.bin', { auth: u.auth, body })).status).toBe(201);
    const put = await capture.waitFor(isRequest('PUT', '/home/big.bin'));
    expect(put).toMatchObject({ level: 30, part: 'bridge', status: 201, user: u.email });
    // Bytes on the connection, headers included: at least the body, not much more.
    expect(put.bytesIn as number).toBeGreaterThanOrEqual(BIG);
    expect(put.bytesIn as number).toBeLessThan(BIG + 4096);
    expect(put.bytesOut as number).toBeGreaterThan(0);
    expect(put.bytesOut as number).toBeLessThan(4096);
    expect(typeof put.ms).toBe('number');
    expect(put.closedEarly).toBeUndefined();

    const get = await davRequest(f.davUrl, 'GET', '/home/big.bin', { auth: u.auth });
    expect(get.body.length).toBe(BIG);
    const got = await capture.waitFor(isRequest('GET', '/home/big.bin'));
    expect(got).toMatchObject({ status: 200, user: u.email });
    expect(got.bytesOut as number).toBeGreaterThanOrEqual(BIG);
    expect(got.bytesIn as number).toBeLessThan(4096);

    const listing = await davRequest(f.davUrl, 'PROPFIND', '/home/', { auth: u.auth, headers: { depth: '1' }, body: PROPFIND_BODY });
    expect(listing.status).toBe(207);
    const found = await capture.waitFor(isRequest('PROPFIND', '/home/'));
    expect(found).toMatchObject({ status: 207, user: u.email });
    expect(found.bytesOut as number).toBeGreaterThanOrEqual(listing.body.length);

    // Exactly one line for each of these requests.
    expect(capture.lines().filter(isRequest('PUT', '/home/big.bin'))).toHaveLength(1);
    expect(capture.lines().filter(isRequest('GET', '/home/big.bin'))).toHaveLength(1);
    expect(capture.text()).not.toContain(u.password);
    expect(capture.text()).not.toContain(u.auth.slice('Basic '.length));
  });

  it('logs a refused login without a user and a health poll not at info', async () => {
    const wrong = `Basic ${Buffer.from(`${u.email}:Not-The-Passw0rd`).toString('base64')}`;
    expect((await davRequest(f.davUrl, 'PROPFIND', '/home/', { auth: wrong, headers: { depth: '0' } })).status).toBe(401);
    const refused = await capture.waitFor((line) => line.msg === 'request' && line.method === 'PROPFIND' && line.status === 401);
    expect(refused.user).toBeUndefined();
    expect(capture.text()).not.toContain('Not-The-Passw0rd');

    expect((await davRequest(f.davUrl, 'GET', '/healthz')).status).toBe(200);
    expect((await davRequest(f.davUrl, 'OPTIONS', '/', { auth: u.auth })).status).toBe(200);
    await capture.waitFor(isRequest('OPTIONS', '/'));
    expect(capture.lines().filter((line) => line.url === '/healthz')).toHaveLength(0);
  });

  it('says closedEarly when the client goes away before the answer is finished', async () => {
    const { port } = new URL(f.davUrl);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write(`GET /home/big.bin HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: ${u.auth}\r\n\r\n`);
    // The first bytes of the answer, then gone.
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.destroy();
    const line = await capture.waitFor((l) => l.msg === 'request' && l.method === 'GET' && l.closedEarly === true);
    expect(line).toMatchObject({ url: '/home/big.bin', status: 200, user: u.email });
    expect(line.bytesOut as number).toBeLessThan(BIG);
  });
});

describe('bridge access log turned off', () => {
  it('writes no line for a request that succeeded', async () => {
    const capture = captureLog('info');
    const f = await bridgeFixture({ bridgeLogger: capture.logger, flags: { 'log.accessLog': false } });
    try {
      const u = await f.newDavUser();
      expect((await davRequest(f.davUrl, 'PUT', '/home/quiet.txt', { auth: u.auth, body: 'quiet' })).status).toBe(201);
      expect((await davRequest(f.davUrl, 'GET', '/home/quiet.txt', { auth: u.auth })).text).toBe('quiet');
      // A request made after both: its end is logged (were the log on) after theirs.
      expect((await davRequest(f.davUrl, 'OPTIONS', '/', { auth: u.auth })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(capture.lines().filter((line) => line.msg === 'request')).toHaveLength(0);
    } finally {
      await f.close();
    }
  });
});
