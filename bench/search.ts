/**
 * The search bench of issue 32, item 5: `npm run bench:search` (`npx tsx bench/search.ts`).
 * Embedded (SQLite, as `npm start` runs), in-process: a store over a fresh temp dir, one user
 * whose home holds BENCH_SEARCH_FILES (100,000) files in folders of 1,000 (two levels below
 * home), seeded straight into the database in one transaction (the triggers of migration 032 fill
 * the name index as for any write), and a bridge in front of it on 127.0.0.1. Then, each the
 * median of 21 runs after one warm-up:
 *   - the store's search (StoreClient.search, in-process) by a name substring matching 1 file,
 *     by a prefix, and by a substring matching 1,000 (first page of 100);
 *   - SEARCH over HTTP through the bridge (the Android app's FILE_SEARCH body) by a substring
 *     matching 1 file: the figure the target names (<= 100 ms);
 *   - for scale, the store's search by kind alone and the same SEARCH by a type only (image/%):
 *     no name index, every file (every fifth) of the user a candidate.
 * Figures only; nothing is asserted.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../src/common/clock.js';
import { loadConfig } from '../src/common/config.js';
import { createLogger } from '../src/common/logger.js';
import { startBridge } from '../src/bridge/server.js';
import { buildStoreApp } from '../src/store/app.js';
import { inProcessStore } from '../src/store/bridge-store.js';
import { createLocalClient } from '../src/store/local-client.js';
import { openDavState, propertyLimitsOf } from '../src/store/storage/dav-state.js';
import type { SearchQuery } from '../src/store-client/contract.js';

const FILES = Number(process.env.BENCH_SEARCH_FILES ?? 100_000);
const PER_FOLDER = 1000;
const RUNS = 21;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function timed(run: () => Promise<number>): Promise<{ ms: number; hits: number }> {
  let hits = await run();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    hits = await run();
    times.push(performance.now() - t);
  }
  return { ms: median(times), hits };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'driveway-bench-search-'));
  const password = 'Bench-Passw0rd-1a';
  const config = loadConfig({
    env: {},
    flags: { dataDir, host: '127.0.0.1', logLevel: 'silent', 'store.port': 0, 'store.adminPassword': password, 'store.scryptCost': 1024 },
  });
  const logger = createLogger('silent');
  const built = await buildStoreApp({ config, clock: new ManualClock(), logger });
  const bridge = await startBridge({
    config,
    logger,
    store: inProcessStore(built.ctx, 'in-process'),
    state: await openDavState({ storage: built.ctx.storage, stateFile: path.join(dataDir, 'bridge.sqlite'), properties: propertyLimitsOf(config.bridge) }),
    port: 0,
  });
  try {
    const client = createLocalClient(built.ctx);
    const s = await client.login('admin', password);
    const { sql } = built.ctx.storage;
    const home = (await sql.get("SELECT uuid, owner_uuid FROM nodes WHERE top_kind = 'home' AND owner_uuid = ?", [s.userId])) as { uuid: string; owner_uuid: string };
    const words = ['report', 'invoice', 'holiday', 'notes', 'draft', 'budget', 'minutes', 'photo', 'scan', 'letter'];
    const exts = ['pdf', 'txt', 'jpg', 'docx', 'png', 'xlsx', 'md', 'odt', 'csv', 'mp4'];
    let t0 = performance.now();
    await sql.transaction(async (tx) => {
      const now = Date.now();
      const insert = (uuid: string, parent: string, name: string, type: 'Dir' | 'File', size: number) =>
        tx.run("INSERT INTO nodes (uuid, owner_uuid, owner_type, parent_uuid, name, type, created, updated, size) VALUES (?, ?, 'User', ?, ?, ?, ?, ?, ?)", [
          uuid,
          home.owner_uuid,
          parent,
          name,
          type,
          now,
          now - Math.floor(Math.random() * 1e10),
          size,
        ]);
      const top = randomUUID();
      await insert(top, home.uuid, 'archive', 'Dir', 0);
      for (let folder = 0; folder * PER_FOLDER < FILES; folder++) {
        const dir = randomUUID();
        await insert(dir, top, `year-${1900 + folder}`, 'Dir', 0);
        for (let i = 0; i < PER_FOLDER && folder * PER_FOLDER + i < FILES; i++) {
          const n = folder * PER_FOLDER + i;
          await insert(randomUUID(), dir, `${words[n % 10]}-${String(n).padStart(6, '0')}.${exts[Math.floor(n / 10) % 10]}`, 'File', (n * 37) % 100_000);
        }
      }
    });
    const seedMs = performance.now() - t0;
    const indexed = ((await sql.get('SELECT COUNT(*) AS n FROM node_names')) as { n: number }).n;
    console.log(`seeded ${FILES.toLocaleString('en')} files (${indexed.toLocaleString('en')} names indexed) in ${(seedMs / 1000).toFixed(1)} s`);

    const store = (query: SearchQuery) => async () => (await client.search(s, query)).hits.length;
    const rows: Array<[string, { ms: number; hits: number }]> = [];
    rows.push(['store: name contains "042421" (1 file)', await timed(store({ where: { name_contains: '042421' } }))]);
    rows.push(['store: name like "%042421%" (1 file)', await timed(store({ where: { name: '%042421%' } }))]);
    rows.push(['store: name like "invoice-04242%" (prefix, 1 file)', await timed(store({ where: { name: 'invoice-04242%' } }))]);
    rows.push(['store: name contains "-0424" (1,000 files, page of 100)', await timed(store({ where: { name_contains: '-0424' }, limit: 100 }))]);
    rows.push(['store: kind file, newest first (every file a candidate, page of 100)', await timed(store({ where: { kind: 'file' }, order: [{ by: 'updated', desc: true }], limit: 100 }))]);

    const auth = `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`;
    const body = (where: string) =>
      '<?xml version="1.0" encoding="UTF-8"?><d:searchrequest xmlns:d="DAV:" xmlns:oc="http://nextcloud.com/ns"><d:basicsearch>' +
      '<d:select><d:prop><d:displayname/><d:getcontenttype/><d:resourcetype/><d:getcontentlength/><d:getlastmodified/><d:getetag/><oc:id/><oc:favorite/><oc:permissions/></d:prop></d:select>' +
      '<d:from><d:scope><d:href>/files/admin</d:href><d:depth>infinity</d:depth></d:scope></d:from>' +
      `<d:where>${where}</d:where><d:orderby/></d:basicsearch></d:searchrequest>`;
    const dav = (where: string) => async () => {
      const res = await fetch(`${bridge.url}/remote.php/dav/`, { method: 'SEARCH', headers: { authorization: auth, 'content-type': 'text/xml' }, body: body(where) });
      const text = await res.text();
      if (res.status !== 207) throw new Error(`SEARCH answered ${res.status}: ${text.slice(0, 200)}`);
      return (text.match(/<D:response>/g) ?? []).length;
    };
    rows.push(['bridge SEARCH (Android FILE_SEARCH): "%042421%" (1 file)', await timed(dav('<d:like><d:prop><d:displayname/></d:prop><d:literal>%042421%</d:literal></d:like>'))]);
    rows.push(['bridge SEARCH: "%invoice-0424%" (10 files)', await timed(dav('<d:like><d:prop><d:displayname/></d:prop><d:literal>%invoice-0424%</d:literal></d:like>'))]);
    rows.push(['bridge SEARCH: getcontenttype like image/% (no name: scan, page of 100)', await timed(dav('<d:like><d:prop><d:getcontenttype/></d:prop><d:literal>image/%</d:literal></d:like>'))]);
    for (const [label, r] of rows) console.log(`${label.padEnd(72)} ${r.ms.toFixed(1).padStart(7)} ms  (${r.hits} hits)`);
  } finally {
    await bridge.close();
    await built.app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
