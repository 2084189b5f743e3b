/**
 * Per-user sessions behind the bridge: one store login shared by concurrent first requests,
 * reuse, renewal before the token's end and after a revocation, wrong credentials answered
 * 401 and negative-cached, and a store that cannot be reached answered 502/503 with
 * Retry-After, never 500.
 */
import { request, Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/common/clock.js';
import { loadConfig } from '../../../src/common/config.js';
import { createLogger } from '../../../src/common/logger.js';
import { startBridge } from '../../../src/bridge/server.js';
import { openDavState } from '../../../src/store/storage/dav-state.js';
import { basicAuth, bridgeFixture, type BridgeFixture, bridgeStateFor, bridgeStoreFor } from '../../helpers/start-bridge.js';
import { selfSignedCertificate } from '../../helpers/tls-cert.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const PROPFIND_BODY = '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/></D:prop></D:propfind>';

async function propfind(url: string, auth?: string): Promise<{ status: number; headers: Record<string, unknown> }> {
  const res = await request(url, {
    method: 'PROPFIND',
    headers: { depth: '0', 'content-type': 'application/xml', ...(auth ? { authorization: auth } : {}) },
    body: PROPFIND_BODY,
  });
  await res.body.dump();
  return { status: res.statusCode, headers: res.headers };
}

describe('bridge sessions', () => {
  let f: BridgeFixture;
  const clock = new ManualClock();
  beforeAll(async () => {
    f = await bridgeFixture({ viaProxy: true, clock });
  });
  afterAll(async () => {
    await f.close();
  });

  const logins = () => f.proxy?.matching('POST', /^\/auth$/).length ?? 0;

  it('logs in once for twenty concurrent first requests of one user, then reuses the session', async () => {
    const u = await f.newDavUser();
    f.proxy?.reset();
    const results = await Promise.all(Array.from({ length: 20 }, () => propfind(`${f.davUrl}/home/`, u.auth)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(207));
    expect(logins()).toBe(1);
    await propfind(`${f.davUrl}/home/`, u.auth);
    expect(logins()).toBe(1);
  });

  it('answers wrong credentials 401 with a Basic challenge, and asks the store only once while they are retried', async () => {
    const u = await f.newDavUser();
    f.proxy?.reset();
    const wrong = basicAuth(u.email, 'Wrong-Passw0rd');
    for (let i = 0; i < 10; i += 1) {
      const res = await propfind(`${f.davUrl}/home/`, wrong);
      expect(res.status).toBe(401);
      expect(String(res.headers['www-authenticate'])).toMatch(/^Basic realm="driveway"/);
    }
    expect(logins()).toBe(1);
  });

  it('answers 401 with a challenge to a request without credentials, and to a malformed Authorization header', async () => {
    for (const auth of [undefined, 'Basic !!!', 'Bearer abc', 'Basic ' + Buffer.from('no-colon').toString('base64')]) {
      const res = await propfind(`${f.davUrl}/home/`, auth);
      expect(res.status).toBe(401);
      expect(String(res.headers['www-authenticate'])).toContain('Basic');
    }
  });

  it('accepts passwords with ":" and base64 with "+" and "/", and strips a Windows DOMAIN\\ prefix', async () => {
    const u = await f.newDavUser();
    const password = 'Pass:w0rd>>>?';
    await f.client.updateUser(f.admin, u.uuid, { password });
    expect(Buffer.from(`${u.email}:${password}`).toString('base64')).toMatch(/[+/]/);
    expect((await propfind(`${f.davUrl}/home/`, basicAuth(u.email, password))).status).toBe(207);
    expect((await propfind(`${f.davUrl}/home/`, basicAuth(`WORKGROUP\\${u.email}`, password))).status).toBe(207);
  });

  it('logs in again when the store revoked the session (deactivated and reactivated user)', async () => {
    const u = await f.newDavUser();
    expect((await propfind(`${f.davUrl}/home/`, u.auth)).status).toBe(207);
    await f.client.updateUser(f.admin, u.uuid, { isActive: false });
    await f.client.updateUser(f.admin, u.uuid, { isActive: true });
    f.proxy?.reset();
    f.bridge.services.cache.clear();
    expect((await propfind(`${f.davUrl}/home/`, u.auth)).status).toBe(207);
    expect(logins()).toBe(1);
  });

  it('renews the session before the 24 h token ends', async () => {
    const u = await f.newDavUser();
    expect((await propfind(`${f.davUrl}/home/`, u.auth)).status).toBe(207);
    f.proxy?.reset();
    clock.advance(23 * 3600 * 1000);
    expect((await propfind(`${f.davUrl}/home/`, u.auth)).status).toBe(207);
    expect(logins()).toBe(0);
    clock.advance(55 * 60 * 1000);
    expect((await propfind(`${f.davUrl}/home/`, u.auth)).status).toBe(207);
    expect(logins()).toBe(1);
  });
});

describe('bridge in front of a store that cannot be reached', () => {
  it('answers 503 with Retry-After to a login it cannot make, 200 to OPTIONS, and keeps serving', async () => {
    const tmp = makeTmpDir();
    const config = loadConfig({ env: {}, flags: { dataDir: tmp.dir, logLevel: 'silent', 'bridge.storeTimeoutMs': 2000 } });
    // A port nothing listens on: bind and close to learn one.
    const probe = await import('node:net').then((net) => net.createServer());
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const deadPort = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    const bridge = await startBridge({ config, logger: createLogger('silent'), store: { url: `http://127.0.0.1:${deadPort}` }, state: await openDavState({ stateFile: `${tmp.dir}/bridge.sqlite` }), port: 0 });
    try {
      const res = await propfind(`${bridge.url}/home/`, basicAuth('someone@example.test', 'Passw0rd-x'));
      expect([502, 503]).toContain(res.status);
      expect(res.headers['retry-after']).toBeDefined();
      const options = await request(`${bridge.url}/`, { method: 'OPTIONS' });
      await options.body.dump();
      expect(options.statusCode).toBe(200);
    } finally {
      await bridge.close();
      tmp.remove();
    }
  });
});

describe('bridge over HTTPS', () => {
  it('serves WebDAV over TLS when a certificate and key are configured (Windows sends Basic only over HTTPS)', async () => {
    const tmp = makeTmpDir();
    const f = await bridgeFixture();
    try {
      const certificate = selfSignedCertificate(tmp.dir);
      const config = structuredClone(f.store.config);
      config.bridge.tlsCert = certificate.certFile;
      config.bridge.tlsKey = certificate.keyFile;
      const bridge = await startBridge({ config, logger: createLogger('silent'), store: bridgeStoreFor(f.store), state: await bridgeStateFor(f.store, undefined, { stateFile: `${tmp.dir}/bridge.sqlite`, config }), port: 0 });
      try {
        expect(bridge.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
        const u = await f.newDavUser();
        const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
        const res = await request(`${bridge.url}/home/`, {
          method: 'PROPFIND',
          headers: { depth: '1', authorization: u.auth, 'user-agent': 'Microsoft-WebDAV-MiniRedir/10.0.19045' },
          dispatcher,
        });
        expect(res.statusCode).toBe(207);
        expect(await res.body.text()).toContain('<D:href>/home/</D:href>');
        await dispatcher.close();
      } finally {
        await bridge.close();
      }
    } finally {
      await f.close();
      tmp.remove();
    }
  });
});

describe('bridge sessions: a session the store revoked', () => {
  const TTL_MS = 300;
  let f: BridgeFixture;
  beforeAll(async () => {
    f = await bridgeFixture({ bridgeFlags: { cacheTtlMs: TTL_MS } });
  });
  afterAll(async () => {
    await f.close();
  });

  it('stops serving a deactivated user within bridge.cacheTtlMs, though its cached store session is reused', async () => {
    const u = await f.newDavUser();
    expect((await propfind(`${f.davUrl}/home/`, u.auth)).status).toBe(207);
    await f.client.updateUser(f.admin, u.uuid, { isActive: false });
    // The bound: what the bridge cached (listing, privileges) may answer until it is TTL_MS old;
    // the next request that reaches the store meets the revoked session, and the re-login fails.
    await new Promise((resolve) => setTimeout(resolve, TTL_MS + 50));
    expect((await propfind(`${f.davUrl}/home/`, u.auth)).status).toBe(401);
    expect((await propfind(`${f.davUrl}/`, u.auth)).status).toBe(401);
  });
});
