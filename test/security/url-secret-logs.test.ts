/**
 * Secrets that travel in a URL's path are never logged (issue 14, item 11): public-link and
 * upload-link tokens (`/public/<token>...`) and the caller's fileaccesskey in the zip route
 * (`/resources/auth/zip/<key>/<name>.zip?node=...`, like the view and download routes: the key
 * opens every file the user may download). A store and a bridge logging everything into one
 * captured stream answer each case's requests, good and refused; none of the case's secrets
 * appears in what they wrote, while the request lines themselves are there, redacted.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBridge, type RunningBridge } from '../../src/bridge/server.js';
import { createStoreClient, type HttpStoreClient, type StoreSession } from '../../src/store-client/index.js';
import { captureLog } from '../helpers/log-capture.js';
import { createFolder, uploadFile } from '../helpers/seed.js';
import { basic, fetchRaw, multipartFile } from '../helpers/sharing.js';
import { bridgeStateFor, bridgeStoreFor } from '../helpers/start-bridge.js';
import { startTestStore, type TestStore } from '../helpers/start-store.js';

const log = captureLog('trace');

let store: TestStore;
let bridge: RunningBridge;
let client: HttpStoreClient;
let user: StoreSession;

beforeAll(async () => {
  store = await startTestStore({ logger: log.logger, flags: { logLevel: 'trace' } });
  const config = structuredClone(store.config);
  bridge = await startBridge({ config, logger: log.logger, store: bridgeStoreFor(store), state: await bridgeStateFor(store, undefined, { config }), port: 0 });
  client = createStoreClient(store.url, { retries: 0 });
  const admin = await client.login('admin', store.adminPassword);
  await client.createUser(admin, { fullname: 'Link Owner', email: 'links@example.org', password: 'Link-Passw0rd' });
  user = await client.login('links@example.org', 'Link-Passw0rd');
});

afterAll(async () => {
  await bridge?.close();
  await client?.close();
  await store?.close();
});

async function makeLink(node: string, body: Record<string, unknown>): Promise<{ token: string; url: string }> {
  const res = await client.http.requestRaw({ method: 'POST', path: `/api/nodes/${node}/shares`, token: user.token, json: body });
  expect(res.status).toBe(200);
  return (res.body as { data: { token: string; url: string } }).data;
}

/** One kind of secret: its requests (each status checked) answer the secrets sent and what the log must show of them. */
interface Case {
  what: string;
  run(): Promise<{ secrets: string[]; logged: string[]; loggedByBridge?: string[] }>;
}

const CASES: Case[] = [
  {
    what: 'link tokens, on the store and the bridge',
    async run() {
      const file = await uploadFile(client, user, 'home', 'flyer.txt', 'public bytes');
      const folder = await createFolder(client, user, 'home', 'shared');
      await uploadFile(client, user, folder, 'inside.txt', 'below the link');
      const inbox = await createFolder(client, user, 'home', 'inbox');
      const fileLink = await makeLink(file, { type: 'public' });
      const folderLink = await makeLink(folder, { type: 'public', password: 'letmein' });
      const uploadLink = await makeLink(inbox, { type: 'upload' });
      const unknown = `${'Q'.repeat(43)}`;

      expect((await fetchRaw(store, fileLink.url)).status).toBe(200);
      expect((await fetchRaw(store, fileLink.url, { method: 'HEAD' })).status).toBe(200);
      expect((await fetchRaw(store, `${folderLink.url}/inside.txt`)).status).toBe(401);
      expect((await fetchRaw(store, `${folderLink.url}/inside.txt`, { headers: basic('letmein') })).status).toBe(200);
      const form = multipartFile('dropped.txt', 'from a stranger');
      expect((await fetchRaw(store, `${uploadLink.url}/upload`, { method: 'POST', headers: form.headers, body: form.body })).status).toBe(200);
      expect((await fetchRaw(store, `/public/${unknown}`)).status).toBe(404);
      // The same paths sent to the bridge by mistake are logged there too.
      const atBridge = await request(`${bridge.url}/public/${fileLink.token}/upload`, { method: 'PROPFIND', headers: { depth: '0' }, reset: true });
      await atBridge.body.dump();
      return {
        secrets: [fileLink.token, folderLink.token, uploadLink.token, unknown],
        logged: ['"url":"/public/[redacted]"', '"url":"/public/[redacted]/upload"', '"url":"/public/[redacted]/inside.txt"'],
        loggedByBridge: ['"method":"PROPFIND"', '"url":"/public/[redacted]/upload"'],
      };
    },
  },
  {
    what: 'the zip route\'s fileaccesskey',
    async run() {
      const folder = await createFolder(client, user, 'home', 'Zipped');
      await uploadFile(client, user, folder, 'in.txt', 'zip me');
      const key = encodeURIComponent(user.fileAccessKey);
      expect((await fetchRaw(store, `/resources/auth/zip/${key}/Zipped.zip?node=${folder}`)).status).toBe(200);
      expect((await fetchRaw(store, `/resources/auth/zip/${key}/none.zip`)).status).toBe(400);
      expect((await fetchRaw(store, `/resources/auth/zip/${key}/x.zip?node=00000000-0000-4000-8000-000000000000`)).status).toBe(404);
      return { secrets: [user.fileAccessKey], logged: ['"url":"/resources/auth/zip/[redacted]/Zipped.zip?node='] };
    },
  },
];

describe('logging everything', () => {
  it.each(CASES)('logs requests with $what in their path without them', async ({ run }) => {
    const { secrets, logged, loggedByBridge } = await run();
    const written = log.text();
    for (const line of logged) expect(written).toContain(line);
    if (loggedByBridge) expect(written.split('\n').some((line) => line.includes('"part":"bridge"') && loggedByBridge.every((part) => line.includes(part)))).toBe(true);
    for (const secret of secrets) expect(written).not.toContain(secret);
  });
});
