/**
 * A folder of many small files dropped into the Files page (issue 31: "2,000 x 4 KiB dropped as a
 * folder into the page, uploaded through the embedded default in <= 20 s here"; 205 s before it):
 * builds src/web into a temp folder as `npm run build` does, starts the store serving it with the
 * WebDAV bridge in the same process (as `npm start` runs both: the app uploads by tus to the
 * bridge), writes BENCH_WEB_UPLOAD_FILES files of BENCH_WEB_UPLOAD_BYTES in one folder on disk,
 * and in Debian's Chromium (playwright-core, test/helpers/chromium.ts), signed in, drops the
 * folder on the page through the DevTools protocol (as the OS gives a drag), BENCH_WEB_UPLOAD_ROUNDS
 * times, each into a fresh user's home. Prints per round the time from the drop to the batch's
 * "All n uploads finished." and the requests the page sent, then the median against the target.
 * Then the floor: the same requests from Node without a page (what the server costs). A figure,
 * not a timed test (`npm run bench:web-upload`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'vite';
import { launchChromium } from '../test/helpers/chromium.js';
import { SESSION_COOKIE } from '../test/helpers/web-page.js';
import { freeLoopbackPort } from '../test/helpers/free-port.js';
import { bridgeFixture } from '../test/helpers/start-bridge.js';
import { makeTmpDir } from '../test/helpers/tmp-dir.js';
import { apiCall } from '../test/helpers/user-api.js';
import { median, positiveIntEnv, printTable, runBounded } from './lib.js';

const FILES = positiveIntEnv('BENCH_WEB_UPLOAD_FILES', 2000);
const BYTES = positiveIntEnv('BENCH_WEB_UPLOAD_BYTES', 4096);
const ROUNDS = positiveIntEnv('BENCH_WEB_UPLOAD_ROUNDS', 3);
const TARGET_MS = 20_000;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const root = path.resolve(import.meta.dirname, '..');

const tmp = makeTmpDir('driveway-web-upload-bench-');
const webDir = path.join(tmp.dir, 'web');
await build({ configFile: path.join(root, 'vite.web.config.ts'), logLevel: 'error', build: { outDir: webDir, emptyOutDir: true } });
const bridgePort = await freeLoopbackPort();
const f = await bridgeFixture({ flags: { 'store.webDir': webDir, 'bridge.port': bridgePort }, bridgePort, transport: 'local' });
const folder = path.join(tmp.dir, 'small files');
mkdirSync(folder, { recursive: true });
for (let i = 0; i < FILES; i += 1) writeFileSync(path.join(folder, `file ${String(i).padStart(5, '0')}.txt`), Buffer.alloc(BYTES, 97 + (i % 26)));
const browser = await launchChromium(CHROMIUM);
try {
  console.log(`web-upload: ${FILES} x ${BYTES} bytes, Chromium ${browser.version()}`);
  const rows: string[][] = [];
  const times: number[] = [];
  for (let round = 1; round <= ROUNDS; round += 1) {
    const user = await f.newUser({ fullname: 'Bench Uploader' });
    const login = (await apiCall(f.client, undefined, 'POST', '/auth', { username: user.email, password: user.password })).body as Record<string, string>;
    const context = await browser.newContext({ viewport: { width: 1920, height: 1080 } });
    // Signed in as the app is: the store's session cookie (HttpOnly: the page never reads it).
    await context.addCookies([{ name: SESSION_COOKIE, value: login.token as string, url: f.store.url, httpOnly: true, sameSite: 'Strict' }]);
    const page = await context.newPage();
    const requests = new Map<string, number>();
    page.on('request', (request) => {
      const url = new URL(request.url());
      const where = url.port === String(bridgePort) ? 'bridge' : 'store';
      const key = `${request.method()} ${where}`;
      requests.set(key, (requests.get(key) ?? 0) + 1);
    });
    await page.goto(`${f.store.url}/files`);
    const zone = page.getByRole('region', { name: 'Drop files and folders here to upload them' });
    await zone.waitFor();
    const box = await zone.boundingBox();
    if (!box) throw new Error('the drop zone has no box');
    const at = { x: box.x + box.width / 2, y: box.y + Math.min(box.height / 2, 40) };
    const cdp = await context.newCDPSession(page);
    const data = { items: [], files: [folder], dragOperationsMask: 1 };
    requests.clear();
    const started = Date.now();
    for (const type of ['dragEnter', 'dragOver', 'drop'] as const) await cdp.send('Input.dispatchDragEvent', { type, ...at, data });
    await page.getByRole('region', { name: 'Uploads' }).getByText(`All ${FILES.toLocaleString('en')} uploads finished.`).waitFor({ timeout: 600_000 });
    const ms = Date.now() - started;
    const listed = (await apiCall(f.client, user.session, 'GET', '/api/nodes/home/dirlist')).body as { data: Array<{ name: string; uuid: string }> };
    const top = listed.data.find((e) => e.name === 'small files');
    const inside = top ? ((await apiCall(f.client, user.session, 'GET', `/api/nodes/${top.uuid}/dirlist`)).body as { data: unknown[] }).data.length : 0;
    if (inside !== FILES) throw new Error(`round ${round}: ${inside} of ${FILES} files arrived`);
    await context.close();
    times.push(ms);
    rows.push([String(round), (ms / 1000).toFixed(1), (FILES / (ms / 1000)).toFixed(0), [...requests].sort().map(([k, n]) => `${k} ${n}`).join(', ')]);
  }
  printTable(['round', 'seconds', 'files/s', 'requests'], rows);
  // The floor: the same files by the same requests (one tus creation-with-upload each, six in
  // flight) sent from Node, no page: what the server costs, so the page's share is seen.
  const floorUser = await f.newUser({ fullname: 'Bench Floor' });
  await apiCall(f.client, floorUser.session, 'POST', '/api/nodes/home', { new_dir: 'small files' });
  const folderUrl = `${f.davUrl.replace(/\/+$/, '')}/home/small%20files/`;
  const body = Buffer.alloc(BYTES, 97);
  const floorStarted = Date.now();
  await runBounded(FILES, 6, async (i) => {
    const name = Buffer.from(`file ${String(i).padStart(5, '0')}.txt`).toString('base64');
    const res = await fetch(folderUrl, {
      method: 'POST',
      headers: { authorization: `Bearer ${floorUser.session.token}`, 'tus-resumable': '1.0.0', 'upload-length': String(BYTES), 'upload-metadata': `filename ${name}`, 'content-type': 'application/offset+octet-stream' },
      body,
    });
    if (res.status !== 201) throw new Error(`the tus creation answered ${res.status}`);
  });
  const floorMs = Date.now() - floorStarted;
  const mid = median(times);
  console.log(`web-upload: the floor (the same ${FILES} tus creations with their bytes from Node, 6 in flight, no page): ${(floorMs / 1000).toFixed(1)} s; the page: ${(mid / floorMs).toFixed(2)}x the floor`);
  console.log(`web-upload: ${FILES} x ${BYTES} bytes dropped as a folder, median ${(mid / 1000).toFixed(1)} s (target ${TARGET_MS / 1000} s: ${mid <= TARGET_MS ? 'met' : 'missed'})`);
  if (mid > TARGET_MS) process.exitCode = 1;
} finally {
  await browser.close();
  await f.close();
  tmp.remove();
}
