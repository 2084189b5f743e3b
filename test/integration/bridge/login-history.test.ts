/**
 * Logins the bridge relays show in the store's login history as WebDAV logins (issue 6): the
 * bridge's name and the DAV client's own User-Agent in `action_args`, failures with their
 * `error_details`, and, when the store trusts the bridge as a proxy (`store.trustedProxies`),
 * the DAV client's address rather than the bridge's. The DAV client connects from 127.0.0.2
 * (all of 127/8 is loopback) so the two addresses differ.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { readHistoryRows } from '../../helpers/user-api.js';

describe('login history of WebDAV logins', () => {
  let f: BridgeFixture;
  let user: DavUser;
  /** PROPFIND / from 127.0.0.2 (node:http: undici's connector does not bind a local address). */
  function propfind(auth: string, userAgent: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = http.request(`${f.davUrl}/`, { method: 'PROPFIND', localAddress: '127.0.0.2', headers: { authorization: auth, depth: '0', 'user-agent': userAgent } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
  }

  beforeAll(async () => {
    f = await bridgeFixture({ flags: { 'store.trustedProxies': ['127.0.0.1'] } });
    user = await f.newDavUser();
  });
  afterAll(async () => {
    await f.close();
  });

  it('records a good WebDAV login with the bridge, the client program and the client address', async () => {
    expect(await propfind(user.auth, 'rclone/v1.60.1-DEV')).toBe(207);
    const last = (await readHistoryRows(f.store, user.uuid)).at(-1);
    expect(last).toMatchObject({ action: 'login', status: 'success', ip_address: '127.0.0.2' });
    expect(last?.action_args).toMatch(/^password; client: driveway-webdav \(rclone\/v1\.60\.1-DEV\)$/);
  });

  it('records a refused WebDAV login as a failure with its reason', async () => {
    expect(await propfind(basicAuth(user.email, 'Wrong-Passw0rd'), 'Microsoft-WebDAV-MiniRedir/10.0.19045')).toBe(401);
    const last = (await readHistoryRows(f.store, user.uuid)).at(-1);
    expect(last).toMatchObject({ action: 'login', status: 'failure', error_details: 'wrong password', ip_address: '127.0.0.2' });
    expect(last?.action_args).toContain('Microsoft-WebDAV-MiniRedir/10.0.19045');
  });
});
