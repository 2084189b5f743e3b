/**
 * The zip route carries the caller's fileaccesskey in its path (GET
 * /resources/auth/zip/{key}/{name}.zip?node=...), like the view and download routes, and the key
 * opens every file the user may download: a store logging everything into a captured stream
 * answers a zip, a refused one and a bad key's; the key appears nowhere in what it wrote, while
 * the request lines themselves are there.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../src/common/logger.js';
import { createStoreClient, type HttpStoreClient, type StoreSession } from '../../src/store-client/index.js';
import { createFolder, uploadFile } from '../helpers/seed.js';
import { fetchRaw } from '../helpers/sharing.js';
import { startTestStore, type TestStore } from '../helpers/start-store.js';

const lines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    lines.push(chunk.toString('utf8'));
    done();
  },
});

let store: TestStore;
let client: HttpStoreClient;
let user: StoreSession;

beforeAll(async () => {
  store = await startTestStore({ logger: createLogger('trace', sink), flags: { logLevel: 'trace' } });
  client = createStoreClient(store.url, { retries: 0 });
  const admin = await client.login('admin', store.adminPassword);
  await client.createUser(admin, { fullname: 'Zip Owner', email: 'zips@example.org', password: 'Zip-Passw0rd' });
  user = await client.login('zips@example.org', 'Zip-Passw0rd');
});

afterAll(async () => {
  await client?.close();
  await store?.close();
});

it('logs zip requests without the fileaccesskey in their path', async () => {
  const folder = await createFolder(client, user, 'home', 'Zipped');
  await uploadFile(client, user, folder, 'in.txt', 'zip me');
  const key = user.fileAccessKey;
  expect((await fetchRaw(store, `/resources/auth/zip/${encodeURIComponent(key)}/Zipped.zip?node=${folder}`)).status).toBe(200);
  expect((await fetchRaw(store, `/resources/auth/zip/${encodeURIComponent(key)}/none.zip`)).status).toBe(400);
  expect((await fetchRaw(store, `/resources/auth/zip/${encodeURIComponent(key)}/x.zip?node=00000000-0000-4000-8000-000000000000`)).status).toBe(404);

  const written = lines.join('');
  expect(written).toContain('"url":"/resources/auth/zip/[redacted]/Zipped.zip?node=');
  expect(written).not.toContain(key);
});
