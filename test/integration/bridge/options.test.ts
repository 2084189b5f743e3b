import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeFixture, type BridgeFixture } from '../../helpers/start-bridge.js';

describe('OPTIONS', () => {
  let f: BridgeFixture;
  beforeAll(async () => {
    f = await bridgeFixture();
  });
  afterAll(async () => {
    await f.close();
  });

  it('answers 200 without credentials with DAV class 2, MS-Author-Via and the verbs in Allow', async () => {
    for (const path of ['/', '/home', '/home/', '/home/missing/deeper.txt']) {
      const res = await request(`${f.davUrl}${path}`, { method: 'OPTIONS' });
      await res.body.dump();
      expect(res.statusCode).toBe(200);
      expect(res.headers.dav).toBe('1, 2');
      expect(res.headers['ms-author-via']).toBe('DAV');
      const allow = String(res.headers.allow);
      for (const verb of ['PROPFIND', 'PROPPATCH', 'LOCK', 'UNLOCK', 'PUT', 'MKCOL', 'MOVE', 'COPY']) expect(allow).toContain(verb);
      expect(res.headers['www-authenticate']).toBeUndefined();
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('answers 400 for a path that cannot be decoded, and keeps serving', async () => {
    const bad = await request(`${f.davUrl}/home/%zz`, { method: 'OPTIONS' });
    await bad.body.dump();
    expect(bad.statusCode).toBe(400);
    const good = await request(`${f.davUrl}/`, { method: 'OPTIONS' });
    await good.body.dump();
    expect(good.statusCode).toBe(200);
  });
});
