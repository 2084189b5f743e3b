/**
 * Log redaction end to end: a store logging everything (level trace) into a captured stream
 * goes through login, an upload (token in the path), a download (fileaccesskey in the path),
 * failures that carry the same secrets, and logout; no password, JWT, upload token or
 * fileaccesskey may appear anywhere in what it wrote.
 */
import { Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/common/logger.js';
import { createStoreClient, nodeId, type HttpStoreClient } from '../../../src/store-client/index.js';
import { ADMIN_PASSWORD, startTestStore, type TestStore } from '../../helpers/start-store.js';

const USER_PASSWORD = 'Logged-Passw0rd';
const WRONG_PASSWORD = 'Wrong-But-Secret-Passw0rd';
const LATEST = '999999999999999';

describe('store logs', () => {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  let store: TestStore;
  let client: HttpStoreClient;

  beforeAll(async () => {
    store = await startTestStore({ logger: createLogger('trace', sink), flags: { logLevel: 'trace' } });
    client = createStoreClient(store.url, { retries: 0, logger: createLogger('trace', sink) });
  });
  afterAll(async () => {
    await client.close();
    await store.close();
  });

  it('never contain a password, JWT, upload token or fileaccesskey', async () => {
    const secrets: string[] = [ADMIN_PASSWORD, USER_PASSWORD, WRONG_PASSWORD];

    const admin = await client.login('admin', ADMIN_PASSWORD);
    secrets.push(admin.token, admin.fileAccessKey);
    await client.createUser(admin, { fullname: 'Logged User', email: 'logged@example.org', password: USER_PASSWORD });
    const user = await client.login('logged@example.org', USER_PASSWORD);
    secrets.push(user.token, user.fileAccessKey);

    const uploadToken = await client.requestUploadToken(user, nodeId('home'));
    secrets.push(uploadToken);
    const uploaded = await client.uploadWithToken(uploadToken, 'notes.txt', Readable.from([Buffer.from('logged bytes')]), 12);
    const fileId = uploaded.id as NonNullable<typeof uploaded.id>;
    // A client that sends its bearer token where none is wanted: the multipart parser logs
    // the request headers at trace level.
    const habitToken = await client.requestUploadToken(user, nodeId('home'));
    secrets.push(habitToken);
    const withBearer = await client.http.requestRaw({
      method: 'POST',
      path: `/upload/${habitToken}`,
      token: user.token,
      headers: { 'content-type': 'multipart/form-data; boundary=b', cookie: `session=${user.fileAccessKey}` },
      body: '--b\r\nContent-Disposition: form-data; name="file"; filename="habit.txt"\r\n\r\nhabit\r\n--b--\r\n',
    });
    expect(withBearer.status).toBe(200);
    // The same token again: refused (410), and the refusal is logged too.
    const reused = await client.http.requestRaw({ method: 'POST', path: `/upload/${uploadToken}`, body: 'x', headers: { 'content-type': 'text/plain' } });
    expect(reused.status).toBeGreaterThanOrEqual(400);

    const download = await client.download(user, fileId, 'notes.txt');
    expect(Buffer.concat(await download.body.toArray()).toString()).toBe('logged bytes');
    const view = await client.http.requestRaw({ method: 'GET', path: `/resources/auth/view/${user.fileAccessKey}/${fileId}/${LATEST}/notes.txt` });
    expect(view.status).toBe(200);

    const failed = await client.http.requestRaw({ method: 'POST', path: '/auth', json: { username: 'logged@example.org', password: WRONG_PASSWORD } });
    expect(failed.status).toBe(401);
    const malformed = await client.http.requestRaw({
      method: 'POST',
      path: '/auth',
      body: `{"username":"admin","password":"${WRONG_PASSWORD}"`,
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    const badBearer = await client.http.requestRaw({ method: 'GET', path: '/api/user', headers: { authorization: `Bearer ${user.token}x` } });
    expect(badBearer.status).toBe(401);
    const unknownPath = await client.http.requestRaw({ method: 'GET', path: `/nowhere?token=${user.token}&password=${USER_PASSWORD}` });
    expect(unknownPath.status).toBe(404);

    await client.logout(user);
    const revokedKey = await client.http.requestRaw({ method: 'GET', path: `/resources/auth/download/${user.fileAccessKey}/${fileId}/${LATEST}/notes.txt` });
    expect(revokedKey.status).toBe(401);
    await client.logout(admin);

    const log = chunks.join('');
    // The log is not empty: requests were logged, with their secrets replaced.
    expect(log).toContain('"msg":"request"');
    expect(log).toContain('/upload/[redacted]');
    expect(log).toContain('/resources/auth/download/[redacted]/');
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(8);
      expect(log.includes(secret), `log contains a secret starting ${secret.slice(0, 4)}`).toBe(false);
    }
    // Parts of a JWT (its signature) must not leak either.
    for (const token of [admin.token, user.token]) expect(log).not.toContain(token.split('.')[2] as string);
  });
});
