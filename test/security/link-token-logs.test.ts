/**
 * Issue 14 (item 11): public-link and upload-link tokens travel in the URL path
 * (`/public/<token>...`) and were logged in clear. A store and a bridge logging everything into a
 * captured stream serve a public link (a file below a shared folder too), take an upload through
 * an upload link, refuse a wrong password and an unknown token; no token appears in what they
 * wrote, while the request lines themselves are there.
 */
import { Writable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startBridge, type RunningBridge } from '../../src/bridge/server.js';
import { createLogger } from '../../src/common/logger.js';
import { createStoreClient, type HttpStoreClient, type StoreSession } from '../../src/store-client/index.js';
import { createFolder, uploadFile } from '../helpers/seed.js';
import { basic, fetchRaw, multipartFile } from '../helpers/sharing.js';
import { bridgeStateFor, bridgeStoreFor } from '../helpers/start-bridge.js';
import { startTestStore, type TestStore } from '../helpers/start-store.js';

const lines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    lines.push(chunk.toString('utf8'));
    done();
  },
});

let store: TestStore;
let bridge: RunningBridge;
let client: HttpStoreClient;
let user: StoreSession;

beforeAll(async () => {
  store = await startTestStore({ logger: createLogger('trace', sink), flags: { logLevel: 'trace' } });
  const config = structuredClone(store.config);
  bridge = await startBridge({ config, logger: createLogger('trace', sink), store: bridgeStoreFor(store), state: await bridgeStateFor(store, undefined, { config }), port: 0 });
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

it('logs link requests on the store and the bridge without their tokens', async () => {
  const file = await uploadFile(client, user, 'home', 'flyer.txt', 'public bytes');
  const folder = await createFolder(client, user, 'home', 'shared');
  await uploadFile(client, user, folder, 'inside.txt', 'below the link');
  const inbox = await createFolder(client, user, 'home', 'inbox');
  const fileLink = await makeLink(file, { type: 'public' });
  const folderLink = await makeLink(folder, { type: 'public', password: 'letmein' });
  const uploadLink = await makeLink(inbox, { type: 'upload' });
  const tokens = [fileLink.token, folderLink.token, uploadLink.token];

  expect((await fetchRaw(store, fileLink.url)).status).toBe(200);
  expect((await fetchRaw(store, fileLink.url, { method: 'HEAD' })).status).toBe(200);
  expect((await fetchRaw(store, `${folderLink.url}/inside.txt`)).status).toBe(401);
  expect((await fetchRaw(store, `${folderLink.url}/inside.txt`, { headers: basic('letmein') })).status).toBe(200);
  const form = multipartFile('dropped.txt', 'from a stranger');
  expect((await fetchRaw(store, `${uploadLink.url}/upload`, { method: 'POST', headers: form.headers, body: form.body })).status).toBe(200);
  const unknown = `${'Q'.repeat(43)}`;
  tokens.push(unknown);
  expect((await fetchRaw(store, `/public/${unknown}`)).status).toBe(404);
  // The same paths sent to the bridge by mistake are logged there too.
  const atBridge = await request(`${bridge.url}/public/${fileLink.token}/upload`, { method: 'PROPFIND', headers: { depth: '0' }, reset: true });
  await atBridge.body.dump();

  const written = lines.join('');
  expect(written).toContain('"url":"/public/[redacted]"');
  expect(written).toContain('"url":"/public/[redacted]/upload"');
  expect(written).toContain('"url":"/public/[redacted]/inside.txt"');
  expect(lines.some((line) => line.includes('"part":"bridge"') && line.includes('"method":"PROPFIND"') && line.includes('"url":"/public/[redacted]/upload"'))).toBe(true);
  for (const token of tokens) expect(written).not.toContain(token);
});
