/**
 * Two-way sync with the Nextcloud and ownCloud sync engines (issue 30), embedded deployment: a
 * real store (SQLite file, blob folder) and bridge on 127.0.0.1, and `nextcloudcmd` 3.7 and
 * `owncloudcmd` 2.11 from Debian run against it through a recorder (sync-scenarios.ts has the
 * scenarios, sync-client.ts how each client is run). The same scenarios run on two instances over
 * PostgreSQL + S3 behind nginx in test/multi-instance/sync-clients.test.ts.
 * Cost here: about 1 min per client (two 150 MB transfers each, up and down).
 */
import { afterAll, beforeAll } from 'vitest';
import { bridgeFixture, type BridgeFixture } from '../helpers/start-bridge.js';
import { syncScenarios, type SyncDeployment } from './sync-scenarios.js';
import { requireSyncClient, SYNC_CLIENTS } from './sync-client.js';

for (const name of SYNC_CLIENTS) {
  const binary = requireSyncClient(name);
  binary.describe(`${name}, two-way sync with an embedded store and bridge`, () => {
    let f: BridgeFixture;
    let deployment: SyncDeployment;
    beforeAll(async () => {
      f = await bridgeFixture();
      deployment = { davUrl: f.davUrl, serverDavUrl: f.davUrl, client: f.client, admin: f.admin, newUser: () => f.newDavUser() };
    }, 60_000);
    afterAll(async () => {
      await f?.close();
    });
    syncScenarios(name, binary, () => deployment);
  });
}
