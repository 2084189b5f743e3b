/**
 * Push across instances (bridge/nextcloud/push.ts): two driveway instances over one PostgreSQL
 * database and one S3 bucket, nginx round robin in front of the bridges with the push location of
 * docs/deploy.md (test/helpers/nginx.ts pushProxyLocation). A client speaking notify_push's
 * protocol as the Nextcloud desktop does (test/helpers/push-client.ts) holds sockets through the
 * balancer (round robin: one on each instance) and one on instance a directly; a PUT through
 * instance b reaches every one of them within 1 s, through PostgreSQL's change feed alone. A
 * pre-auth token asked of b opens a socket on a. The capability names the balancer's address.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createStoreClient, type HttpStoreClient } from '../../src/store-client/index.js';
import { davRequest } from '../helpers/dav-requests.js';
import { requireNginx, startNginx, type TestNginx } from '../helpers/nginx.js';
import { freshPostgresDatabase, requirePostgres } from '../helpers/postgres.js';
import { connectPush, pushUrl, type PushClient } from '../helpers/push-client.js';
import { freshS3Bucket } from '../helpers/s3-server.js';
import { startInstance, type Instance } from './instances.js';

const postgres = requirePostgres();
const nginx = requireNginx();

const ADMIN_PASSWORD = 'Admin-Passw0rd';
const USER_PASSWORD = 'User-Passw0rd';
const BOUND_MS = 1000;

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

postgres.describe('push across two instances over PostgreSQL + S3', () => {
  nginx.describe('behind nginx', () => {
    let instances: Instance[] = [];
    let balancer: TestNginx | undefined;
    let client: HttpStoreClient;
    const sockets: PushClient[] = [];
    let email: string;

    beforeAll(async () => {
      const shared = { databaseUrl: await freshPostgresDatabase(), s3: await freshS3Bucket(), adminPassword: ADMIN_PASSWORD };
      instances.push(await startInstance(shared, 'a'));
      instances.push(await startInstance(shared, 'b'));
      balancer = await startNginx(instances.map((i) => `${i.davUrl}/`));
      client = createStoreClient((instances[0] as Instance).storeUrl, { retries: 0 });
      const admin = await client.login('admin', ADMIN_PASSWORD);
      email = `push-${randomBytes(4).toString('hex')}@example.test`;
      await client.createUser(admin, { fullname: 'Push', email, password: USER_PASSWORD, diskQuotaBytes: 0 });
    }, 150_000);

    afterAll(async () => {
      for (const socket of sockets) socket.close();
      await client?.close();
      await balancer?.stop();
      await Promise.all(instances.map((i) => i.stop()));
      instances = [];
    }, 60_000);

    it('advertises the websocket at the address the client used (the balancer)', async () => {
      const res = await fetch(`${balancer?.url}/ocs/v2.php/cloud/capabilities?format=json`);
      const caps = ((await res.json()) as { ocs: { data: { capabilities: Record<string, { endpoints: Record<string, string> }> } } }).ocs.data.capabilities;
      expect(caps.notify_push?.endpoints).toEqual({ websocket: pushUrl(balancer?.url as string), pre_auth: `${balancer?.url}/index.php/apps/notify_push/pre_auth` });
    });

    it('brings a PUT through instance b to sockets on instance a (directly and through nginx) within 1 s', async () => {
      const [a, b] = instances as [Instance, Instance];
      const via = balancer?.url as string;
      for (const url of [pushUrl(via), pushUrl(via), pushUrl(a.davUrl)]) {
        const socket = await connectPush(url, email, USER_PASSWORD);
        expect(socket.answer).toBe('authenticated');
        socket.listen();
        sockets.push(socket);
      }
      // A token asked of b opens a socket on a: the tokens live in the shared database.
      const token = await fetch(`${b.davUrl}/index.php/apps/notify_push/pre_auth`, { method: 'POST', headers: { authorization: basic(email, USER_PASSWORD) } });
      expect(token.status).toBe(200);
      const byToken = await connectPush(pushUrl(a.davUrl), '', await token.text());
      expect(byToken.answer).toBe('authenticated');
      sockets.push(byToken);
      // A first write warms the instances up (the first PUT to s3rver takes about a second here);
      // then the debounce of the message it caused (at most 1.5 s) has passed.
      let from = sockets.map((s) => s.messages.length);
      expect((await davRequest(b.davUrl, 'PUT', '/home/warm-up.txt', { auth: basic(email, USER_PASSWORD), body: 'first' })).status).toBe(201);
      await Promise.all(sockets.map((s, i) => s.next((m) => m.startsWith('notify_file'), 5000, from[i])));
      await new Promise((resolve) => setTimeout(resolve, 1600));
      from = sockets.map((s) => s.messages.length);
      const started = Date.now();
      expect((await davRequest(b.davUrl, 'PUT', '/home/pushed.txt', { auth: basic(email, USER_PASSWORD), body: 'through b' })).status).toBe(201);
      const putMs = Date.now() - started;
      const arrived = await Promise.all(sockets.map((s, i) => s.next((m) => m.startsWith('notify_file'), 5000, from[i]).then(() => Date.now() - started)));
      console.log(`push across instances: PUT answered in ${putMs} ms; notify_file after ${arrived.map((ms) => `${ms} ms`).join(', ')} (sockets: balancer x2, a, a by pre-auth token)`);
      for (const ms of arrived) expect(ms).toBeLessThanOrEqual(BOUND_MS);
    });
  });
});
