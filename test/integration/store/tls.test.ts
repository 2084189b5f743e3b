/**
 * HTTPS on the store listener (`store.tlsCert` / `store.tlsKey`, common/tls.ts, the helper the
 * bridge uses too): a real https request to 127.0.0.1 trusting only the test's self-signed
 * certificate, and plain HTTP sent to either TLS port (store and bridge) answered with 400 and a
 * one-line body instead of an empty reply.
 */
import https from 'node:https';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/common/logger.js';
import { PLAINTEXT_ANSWER_BODY } from '../../../src/common/tls.js';
import { startBridge, type RunningBridge } from '../../../src/bridge/server.js';
import { bridgeStateFor, bridgeStoreFor } from '../../helpers/start-bridge.js';
import { startTestStore, type TestStore } from '../../helpers/start-store.js';
import { selfSignedCertificate } from '../../helpers/tls-cert.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

let tmp: ReturnType<typeof makeTmpDir>;
let store: TestStore;
let bridge: RunningBridge;
let cert: Buffer;

beforeAll(async () => {
  tmp = makeTmpDir('driveway-tls-');
  cert = selfSignedCertificate(tmp.dir).cert;
  store = await startTestStore({ storage: 'sqlite', flags: { 'store.tlsCert': `${tmp.dir}/cert.pem`, 'store.tlsKey': `${tmp.dir}/key.pem` } });
  const config = structuredClone(store.config);
  config.bridge.tlsCert = `${tmp.dir}/cert.pem`;
  config.bridge.tlsKey = `${tmp.dir}/key.pem`;
  bridge = await startBridge({ config, logger: createLogger('silent'), store: bridgeStoreFor(store, 'local'), state: await bridgeStateFor(store, 'local', { stateFile: `${tmp.dir}/bridge.sqlite`, config }), port: 0 });
});

afterAll(async () => {
  await bridge?.close();
  await store?.close();
  tmp?.remove();
});

function httpsGet(url: string): Promise<{ status: number; body: string; authorized: boolean }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ca: cert, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), authorized: (res.socket as import('node:tls').TLSSocket).authorized }));
    });
    req.on('error', reject);
  });
}

/** Sends a plaintext HTTP request on a raw TCP connection and returns all that comes back until close. */
function plaintextExchange(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(`GET / HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', reject);
    socket.setTimeout(5_000, () => socket.destroy(new Error('no answer within 5 s')));
  });
}

describe('store over HTTPS', () => {
  it('listens on an https:// URL and answers a verified TLS request with its JSON envelope', async () => {
    expect(store.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const answer = await httpsGet(`${store.url}/api/user`);
    expect(answer.authorized).toBe(true);
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toMatchObject({ status: 'error' });
  });

  it('sets the web app\'s session cookie Secure (docs/security.md "Sessions of the web app")', async () => {
    const setCookie = await new Promise<string>((resolve, reject) => {
      const req = https.request(`${store.url}/api/session`, { method: 'POST', ca: cert, agent: false, headers: { 'content-type': 'application/json', 'x-driveway-csrf': '1' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(String(res.headers['set-cookie'] ?? '')));
      });
      req.on('error', reject);
      req.end(JSON.stringify({ username: 'admin', password: store.adminPassword }));
    });
    expect(setCookie).toMatch(/^driveway_session=[\w.-]+; Path=\/; Max-Age=86400; HttpOnly; SameSite=Strict; Secure$/);
  });

  it('keeps serving TLS clients after a plaintext one was turned away', async () => {
    await plaintextExchange(store.url);
    expect((await httpsGet(`${store.url}/api/user`)).status).toBe(401);
  });
});

describe('plain HTTP sent to a TLS port', () => {
  it.each([
    ['store', () => store.url],
    ['bridge', () => bridge.url],
  ])('the %s answers 400 with a one-line "this port speaks HTTPS" body, then closes', async (_part, urlOf) => {
    const raw = await plaintextExchange(urlOf());
    expect(raw.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    expect(raw).toContain('Connection: close');
    expect(raw.endsWith(`\r\n\r\n${PLAINTEXT_ANSWER_BODY}`)).toBe(true);
    expect(PLAINTEXT_ANSWER_BODY.trim().split('\n')).toHaveLength(1);
  });
});
