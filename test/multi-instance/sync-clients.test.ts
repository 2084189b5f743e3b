/**
 * Two-way sync with `nextcloudcmd` and `owncloudcmd` (issue 30) on the scaled-out deployment:
 * two driveway instances over one PostgreSQL database and one S3 bucket, nginx round-robin in
 * front of the bridges (the address the clients are given) and of the stores, as
 * docs/scale-out.md deploys them. The scenarios are test/clients/sync-scenarios.ts's, the same as
 * the embedded suite's; the suite's own server-side changes go to instance b directly, so every
 * change a client must see was made on an instance it may not be talking to.
 * The big file of the first sync is 24 MiB here (DRIVEWAY_SYNC_BIG_MIB to change it): still
 * chunking NG, its chunks spread over both instances by the balancer; the 150 MB one runs in the
 * embedded suite, as s3rver on the same 2 cores makes it cost minutes here.
 * Cost: about 1.5 to 3 min per client on 2 cores (4 min for nextcloudcmd with 150 MB under load).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { createStoreClient, type HttpStoreClient, type StoreSession } from '../../src/store-client/index.js';
import { syncScenarios, type SyncDeployment } from '../clients/sync-scenarios.js';
import { requireSyncClient, SYNC_CLIENTS } from '../clients/sync-client.js';
import { requireNginx, startNginx, type TestNginx } from '../helpers/nginx.js';
import { freshPostgresDatabase, requirePostgres } from '../helpers/postgres.js';
import { freshS3Bucket } from '../helpers/s3-server.js';
import { basicAuth, type DavUser } from '../helpers/start-bridge.js';
import { startInstance, type Instance } from './instances.js';

const postgres = requirePostgres();
const nginx = requireNginx();
const clients = SYNC_CLIENTS.map((name) => [name, requireSyncClient(name)] as const);

const BIG_FILE_BYTES = Number(process.env.DRIVEWAY_SYNC_BIG_MIB ?? 24) * 1024 * 1024;
const ADMIN_PASSWORD = 'Admin-Passw0rd';
const USER_PASSWORD = 'User-Passw0rd';

postgres.describe('two-way sync with two instances over PostgreSQL + S3 behind nginx', () => {
  nginx.describe('nginx in front', () => {
    let instances: Instance[] = [];
    let davBalancer: TestNginx | undefined;
    let storeBalancer: TestNginx | undefined;
    let client: HttpStoreClient;
    let admin: StoreSession;
    let deployment: SyncDeployment;

    beforeAll(async () => {
      const shared = { databaseUrl: await freshPostgresDatabase(), s3: await freshS3Bucket(), adminPassword: ADMIN_PASSWORD };
      // The first migrates the empty database; the second then starts on a current schema.
      instances.push(await startInstance(shared, 'a'));
      instances.push(await startInstance(shared, 'b'));
      davBalancer = await startNginx(instances.map((i) => `${i.davUrl}/`));
      storeBalancer = await startNginx(instances.map((i) => `${i.storeUrl}/`));
      client = createStoreClient(storeBalancer.url, { retries: 0 });
      admin = await client.login('admin', ADMIN_PASSWORD);
      const newUser = async (): Promise<DavUser> => {
        const email = `sync-${randomBytes(4).toString('hex')}@example.test`;
        const uuid = await client.createUser(admin, { fullname: 'Sync Client', email, password: USER_PASSWORD, diskQuotaBytes: 0 });
        const session = await client.login(email, USER_PASSWORD);
        return { uuid: uuid ?? '', email, password: USER_PASSWORD, session, auth: basicAuth(email, USER_PASSWORD) };
      };
      deployment = { davUrl: davBalancer.url, serverDavUrl: (instances[1] as Instance).davUrl, client, admin, newUser };
    }, 150_000);

    afterAll(async () => {
      await client?.close();
      await davBalancer?.stop();
      await storeBalancer?.stop();
      await Promise.all(instances.map((i) => i.stop()));
      instances = [];
    }, 60_000);

    for (const [name, binary] of clients) {
      binary.describe(`${name} through the balancer`, () => {
        syncScenarios(name, binary, () => deployment, { bigFileBytes: BIG_FILE_BYTES });
      });
    }
  });
});
