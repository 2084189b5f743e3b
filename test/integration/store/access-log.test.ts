/**
 * The store's access log (common/access-log.ts): one info line per request when it ends, with
 * method, path (upload, link and file access tokens redacted), status, bytes in and out,
 * duration and the caller's user UUID; a download whose client goes away says `closedEarly`;
 * log.accessLog: false leaves only failures; log.format: pretty writes readable lines.
 */
import net from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId } from '../../../src/store-client/index.js';
import { captureLog, type LogCapture } from '../../helpers/log-capture.js';
import { uploadFile } from '../../helpers/seed.js';
import { storeFixture, type StoreFixture, type TestUser } from '../../helpers/store-fixture.js';

const BIG = 8 * 1024 * 1024;
const LATEST = '999999999999999';

const requestLine = (method: string, path: string | RegExp) => (line: Record<string, unknown>) =>
  line.msg === 'request' && line.method === method && (typeof path === 'string' ? line.url === path : path.test(String(line.url)));

describe('store access log', () => {
  let f: StoreFixture;
  let capture: LogCapture;
  let user: TestUser;

  beforeAll(async () => {
    capture = captureLog('info');
    f = await storeFixture({ logger: capture.logger });
    user = await f.newUser();
  });
  afterAll(async () => {
    await f.close();
  });

  it('writes one line per request: status, bytes, duration, the caller, tokens redacted', async () => {
    const secrets = [user.password, user.session.token, user.session.fileAccessKey];
    const token = await f.client.requestUploadToken(user.session, nodeId('home'));
    secrets.push(token);
    const uploaded = await f.client.uploadWithToken(token, 'big.bin', Readable.from([Buffer.alloc(BIG, 3)]), BIG);
    const upload = await capture.waitFor(requestLine('POST', '/upload/[redacted]'));
    expect(upload).toMatchObject({ level: 30, part: 'store', status: 200 });
    expect(upload.bytesIn as number).toBeGreaterThanOrEqual(BIG);
    expect(upload.bytesIn as number).toBeLessThan(BIG + 8192);
    expect(upload.bytesOut as number).toBeGreaterThan(0);
    expect(typeof upload.ms).toBe('number');
    expect(typeof upload.reqId).toBe('string');

    const me = await f.client.http.requestRaw({ method: 'GET', path: '/api/user', token: user.session.token });
    expect(me.status).toBe(200);
    const line = await capture.waitFor(requestLine('GET', '/api/user'));
    expect(line).toMatchObject({ status: 200, user: user.uuid });

    const fileId = uploaded.id as string;
    const download = `/resources/auth/download/${user.session.fileAccessKey}/${fileId}/${LATEST}/big.bin`;
    const got = await f.client.http.requestRaw({ method: 'GET', path: download });
    expect(got.status).toBe(200);
    const downloaded = await capture.waitFor(requestLine('GET', `/resources/auth/download/[redacted]/${fileId}/${LATEST}/big.bin`));
    expect(downloaded.bytesOut as number).toBeGreaterThanOrEqual(BIG);

    const shared = await f.client.http.requestRaw({ method: 'POST', path: `/api/nodes/${fileId}/shares`, token: user.session.token, json: { type: 'public' } });
    expect(shared.status).toBe(200);
    const linkToken = (shared.body as { data: { token: string } }).data.token;
    secrets.push(linkToken);
    const anonymous = await f.client.http.requestRaw({ method: 'HEAD', path: `/public/${linkToken}` });
    expect(anonymous.status).toBeLessThan(500);
    const viaLink = await capture.waitFor(requestLine('HEAD', /^\/public\/\[redacted\]/));
    expect(viaLink.user).toBeUndefined();

    secrets.push('Query-Secret-1');
    expect((await f.client.http.requestRaw({ method: 'GET', path: '/api/user?token=Query-Secret-1', token: user.session.token })).status).toBe(200);
    await capture.waitFor(requestLine('GET', '/api/user?token=[redacted]'));

    const failed = await f.client.http.requestRaw({ method: 'GET', path: '/api/user', headers: { authorization: 'Bearer not-a-token' } });
    expect(failed.status).toBe(401);
    await capture.waitFor((l) => requestLine('GET', '/api/user')(l) && l.status === 401 && l.user === undefined);

    expect(capture.lines().filter(requestLine('POST', '/upload/[redacted]'))).toHaveLength(1);
    const text = capture.text();
    for (const secret of secrets) expect(text).not.toContain(secret);
  });

  it('says closedEarly when the client goes away before the download is finished', async () => {
    const fileId = await uploadFile(f.client, user.session, 'home', 'cut.bin', Buffer.alloc(BIG, 5));
    const { port } = new URL(f.store.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write(`GET /resources/auth/download/${user.session.fileAccessKey}/${fileId}/${LATEST}/cut.bin HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.destroy();
    const line = await capture.waitFor((l) => l.msg === 'request' && l.closedEarly === true);
    expect(line).toMatchObject({ method: 'GET', url: `/resources/auth/download/[redacted]/${fileId}/${LATEST}/cut.bin`, status: 200 });
    expect(line.bytesOut as number).toBeLessThan(BIG);
  });
});

describe('store access log settings', () => {
  it('log.accessLog: false writes no line for requests that succeeded', async () => {
    const capture = captureLog('info');
    const f = await storeFixture({ logger: capture.logger, flags: { 'log.accessLog': false } });
    try {
      const user = await f.newUser();
      expect((await f.client.http.requestRaw({ method: 'GET', path: '/api/user', token: user.session.token })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(capture.lines().filter((line) => line.msg === 'request')).toHaveLength(0);
    } finally {
      await f.close();
    }
  });

  it('log.format: pretty writes one readable line per request, the caller included', async () => {
    const capture = captureLog('info', 'pretty');
    const f = await storeFixture({ logger: capture.logger });
    try {
      const user = await f.newUser();
      expect((await f.client.http.requestRaw({ method: 'GET', path: '/api/user', token: user.session.token })).status).toBe(200);
      const deadline = Date.now() + 3000;
      const pattern = new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  store: request .*method=GET url=/api/user status=200 .*user=${user.uuid}`, 'm');
      while (!pattern.test(capture.text()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(capture.text()).toMatch(pattern);
      expect(capture.text()).not.toContain('{"level"');
      expect(capture.text()).not.toContain(user.password);
    } finally {
      await f.close();
    }
  });
});
