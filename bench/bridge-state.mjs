// What keeping the bridge's locks and dead properties in the store's database costs (issue 15):
// `node bench/bridge-state.mjs [ROOT]` starts `node ROOT/dist/main.js` (build it first; ROOT
// defaults to this checkout) on a temp data dir and free loopback ports, seeds a folder of
// BENCH_DIR_ENTRIES (10,000) empty files through WebDAV, and times with curl:
//   - PROPFIND Depth 1 (allprop) of that folder: the first after start, then warm ones (answered
//     from the bridge's body cache), then ones after a PROPPATCH of the folder (body cache missed:
//     dead properties and mtimes of all 10,001 entries are read);
//   - LOCK + UNLOCK of one file, and PROPPATCH of one file, BENCH_OPS (200) times each, one
//     keep-alive connection (fetch): mean ms per request.
// Prints one JSON line. Run it for two builds to compare; only our own child is stopped, by PID.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(process.argv[2] ?? '.');
const entries = Number(process.env.BENCH_DIR_ENTRIES ?? 10_000);
const ops = Number(process.env.BENCH_OPS ?? 200);
const password = 'bench-admin-password-1';
const auth = `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`;

const freePort = () =>
  new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

const tmp = mkdtempSync(path.join(os.tmpdir(), 'bench-bridgestate-'));
const [storePort, davPort] = [await freePort(), await freePort()];
const child = spawn(process.execPath, [path.join(root, 'dist/main.js')], {
  env: { ...process.env, DRIVEWAY_DATA_DIR: path.join(tmp, 'data'), DRIVEWAY_ADMIN_PASSWORD: password, DRIVEWAY_STORE_PORT: String(storePort), DRIVEWAY_DAV_PORT: String(davPort), DRIVEWAY_CACHE_TTL_MS: '60000', DRIVEWAY_LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const dav = `http://127.0.0.1:${davPort}`;

async function request(method, href, headers = {}, body) {
  const res = await fetch(dav + href, { method, headers: { authorization: auth, ...headers }, body });
  const text = await res.text();
  return { status: res.status, text, headers: res.headers };
}

function curlMs(args) {
  const out = spawnSync('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code} %{time_total}', '-u', `admin:${password}`, ...args], { encoding: 'utf8' });
  const [code, seconds] = out.stdout.trim().split(' ');
  if (code !== '207') throw new Error(`curl answered ${code}`);
  return Number(seconds) * 1000;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

try {
  for (let i = 0; ; i++) {
    try {
      if ((await request('OPTIONS', '/')).status < 500) break;
    } catch {
      if (i > 200) throw new Error('driveway did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  if ((await request('MKCOL', '/home/many/')).status !== 201) throw new Error('MKCOL failed');
  const config = path.join(tmp, 'uploads.curl');
  const empty = path.join(tmp, 'empty');
  writeFileSync(empty, '');
  writeFileSync(config, Array.from({ length: entries }, (_, i) => `url = "${dav}/home/many/f${i}.txt"\nupload-file = "${empty}"\noutput = /dev/null\n`).join(''));
  spawnSync('curl', ['-s', '--parallel', '--parallel-max', '4', '-u', `admin:${password}`, '-K', config], { stdio: 'ignore' });

  const body = path.join(tmp, 'allprop.xml');
  writeFileSync(body, '<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>');
  const propfind = () => curlMs(['-X', 'PROPFIND', '-H', 'Depth: 1', '-H', 'Content-Type: application/xml', '--data-binary', `@${body}`, `${dav}/home/many/`]);
  const first = propfind();
  const warm = Array.from({ length: 5 }, propfind);
  const patch = (v) => `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x:tag xmlns:x="urn:bench">${v}</x:tag></D:prop></D:set></D:propertyupdate>`;
  const missed = [];
  for (let i = 0; i < 5; i++) {
    if ((await request('PROPPATCH', '/home/many/', { 'content-type': 'application/xml' }, patch(i))).status !== 207) throw new Error('PROPPATCH failed');
    missed.push(propfind());
  }

  const lockBody = '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
  let started = performance.now();
  for (let i = 0; i < ops; i++) {
    const locked = await request('LOCK', '/home/many/f1.txt', { 'content-type': 'application/xml', timeout: 'Second-600' }, lockBody);
    if (locked.status !== 200) throw new Error(`LOCK answered ${locked.status}`);
    const unlocked = await request('UNLOCK', '/home/many/f1.txt', { 'lock-token': locked.headers.get('lock-token') });
    if (unlocked.status !== 204) throw new Error(`UNLOCK answered ${unlocked.status}`);
  }
  const lockUnlockMs = (performance.now() - started) / ops / 2;
  started = performance.now();
  for (let i = 0; i < ops; i++) {
    if ((await request('PROPPATCH', '/home/many/f2.txt', { 'content-type': 'application/xml' }, patch(i))).status !== 207) throw new Error('PROPPATCH failed');
  }
  const proppatchMs = (performance.now() - started) / ops;
  const round = (x) => Math.round(x * 10) / 10;
  console.log(JSON.stringify({ root, entries, propfindFirstMs: round(first), propfindWarmMedianMs: round(median(warm)), propfindAfterPatchMedianMs: round(median(missed)), lockOrUnlockMs: round(lockUnlockMs), proppatchMs: round(proppatchMs) }));
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(tmp, { recursive: true, force: true });
}
