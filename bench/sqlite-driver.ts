/**
 * Which SQLite driver the embedded store should run on: better-sqlite3 or Node's built-in
 * `node:sqlite` (DatabaseSync), timed side by side in one process on the statement shapes the
 * store's hot paths make (`npx tsx bench/sqlite-driver.ts`, on Node 22.13+ or 24):
 *   - a small upload's commit: BEGIN IMMEDIATE, a point read by primary key, an INSERT into a
 *     nodes-like table with a unique (parent, name) index, an UPDATE of a usage counter, COMMIT;
 *   - a point read by primary key outside a transaction (a session or a node's stat);
 *   - a listing: 10,000 rows of one parent through the index, as objects;
 *   - statement compilation (the cache in sqlite-open.ts misses): prepare + run + drop.
 * Both connections use the store's pragmas (WAL, synchronous = NORMAL, foreign keys) on a file in
 * a temp dir, and prepared statements are cached by text in both, as sqlite-open.ts does.
 * Rounds alternate between the drivers; each figure is the median of the rounds. Figures only.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const COMMITS = Number(process.env.BENCH_COMMITS ?? 5000);
const READS = Number(process.env.BENCH_READS ?? 50_000);
const LIST_ROWS = 10_000;

/** The few calls the store makes of a driver. */
interface Driver {
  name: string;
  exec(sql: string): void;
  run(sql: string, params: unknown[]): void;
  get(sql: string, params: unknown[]): unknown;
  all(sql: string, params: unknown[]): unknown[];
  /** prepare without the cache (what a cache miss costs), run once, and let it go. */
  compileAndRun(sql: string, params: unknown[]): void;
  close(): void;
}

const PRAGMAS = ['PRAGMA journal_mode = WAL', 'PRAGMA synchronous = NORMAL', 'PRAGMA foreign_keys = ON', 'PRAGMA busy_timeout = 5000'];
const SCHEMA = `
  CREATE TABLE users (id TEXT PRIMARY KEY, disk_used INTEGER NOT NULL DEFAULT 0);
  CREATE TABLE nodes (id TEXT PRIMARY KEY, parent TEXT, owner TEXT NOT NULL REFERENCES users(id), name TEXT NOT NULL,
    kind TEXT NOT NULL, size INTEGER NOT NULL, updated INTEGER NOT NULL, blob TEXT);
  CREATE UNIQUE INDEX nodes_parent_name ON nodes(parent, name);`;

function betterSqlite(file: string): Driver {
  const db = new Database(file);
  for (const p of PRAGMAS) db.exec(p);
  const cache = new Map<string, Database.Statement>();
  const prepare = (sql: string): Database.Statement => {
    let s = cache.get(sql);
    if (!s) cache.set(sql, (s = db.prepare(sql)));
    return s;
  };
  return {
    name: `better-sqlite3 ${createRequire(import.meta.url)('better-sqlite3/package.json').version}`,
    exec: (sql) => void db.exec(sql),
    run: (sql, params) => void prepare(sql).run(...params),
    get: (sql, params) => prepare(sql).get(...params),
    all: (sql, params) => prepare(sql).all(...params),
    compileAndRun: (sql, params) => void db.prepare(sql).get(...params),
    close: () => db.close(),
  };
}

interface NodeSqliteStatement {
  run(...params: unknown[]): unknown;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
interface NodeSqliteDatabase {
  exec(sql: string): void;
  prepare(sql: string): NodeSqliteStatement;
  close(): void;
}

async function nodeSqlite(file: string): Promise<Driver | undefined> {
  let mod: { DatabaseSync: new (file: string) => NodeSqliteDatabase };
  try {
    mod = (await import('node:sqlite')) as unknown as typeof mod;
  } catch {
    return undefined;
  }
  const db = new mod.DatabaseSync(file);
  for (const p of PRAGMAS) db.exec(p);
  const cache = new Map<string, NodeSqliteStatement>();
  const prepare = (sql: string): NodeSqliteStatement => {
    let s = cache.get(sql);
    if (!s) cache.set(sql, (s = db.prepare(sql)));
    return s;
  };
  return {
    name: `node:sqlite (Node ${process.versions.node}, SQLite ${process.versions.sqlite ?? '?'})`,
    exec: (sql) => db.exec(sql),
    run: (sql, params) => void prepare(sql).run(...params),
    get: (sql, params) => prepare(sql).get(...params),
    all: (sql, params) => prepare(sql).all(...params),
    compileAndRun: (sql, params) => void db.prepare(sql).get(...params),
    close: () => db.close(),
  };
}

interface Figures {
  commitsPerSec: number;
  readsPerSec: number;
  listMs: number;
  compilesPerSec: number;
}

function round(d: Driver, tag: string): Figures {
  const user = `u-${tag}`;
  d.run('INSERT INTO users (id) VALUES (?)', [user]);
  const parent = `p-${tag}`;
  const ids: string[] = [];
  let t0 = performance.now();
  for (let i = 0; i < COMMITS; i++) {
    const id = randomUUID();
    ids.push(id);
    d.run('BEGIN IMMEDIATE', []);
    d.get('SELECT id, disk_used FROM users WHERE id = ?', [user]);
    d.get('SELECT id FROM nodes WHERE parent = ? AND name = ?', [parent, `f${i}`]);
    d.run('INSERT INTO nodes (id, parent, owner, name, kind, size, updated, blob) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [id, parent, user, `f${i}`, 'file', 4096, Date.now(), 'b'.repeat(64)]);
    d.run('UPDATE users SET disk_used = disk_used + ? WHERE id = ?', [4096, user]);
    d.run('COMMIT', []);
  }
  const commitsPerSec = COMMITS / ((performance.now() - t0) / 1000);
  while (ids.length < LIST_ROWS) {
    const id = randomUUID();
    ids.push(id);
    d.run('INSERT INTO nodes (id, parent, owner, name, kind, size, updated, blob) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [id, parent, user, `g${ids.length}`, 'file', 1, 0, null]);
  }
  t0 = performance.now();
  for (let i = 0; i < READS; i++) d.get('SELECT id, parent, owner, name, kind, size, updated FROM nodes WHERE id = ?', [ids[i % ids.length]]);
  const readsPerSec = READS / ((performance.now() - t0) / 1000);
  let listMs = Infinity;
  for (let i = 0; i < 10; i++) {
    t0 = performance.now();
    const rows = d.all('SELECT id, name, kind, size, updated FROM nodes WHERE parent = ? ORDER BY name', [parent]);
    listMs = Math.min(listMs, performance.now() - t0);
    if (rows.length !== LIST_ROWS) throw new Error(`listed ${rows.length}`);
  }
  t0 = performance.now();
  const compiles = 2000;
  for (let i = 0; i < compiles; i++) d.compileAndRun(`SELECT id, name FROM nodes WHERE id = ? AND ${i} = ${i}`, [ids[i]]);
  const compilesPerSec = compiles / ((performance.now() - t0) / 1000);
  return { commitsPerSec, readsPerSec, listMs, compilesPerSec };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'driveway-bench-sqlite-'));
  try {
    const drivers = [betterSqlite(path.join(dir, 'better.sqlite')), await nodeSqlite(path.join(dir, 'node.sqlite'))].filter((d): d is Driver => d !== undefined);
    for (const d of drivers) d.exec(SCHEMA);
    const results = new Map<string, Figures[]>(drivers.map((d) => [d.name, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const d of r % 2 === 0 ? drivers : [...drivers].reverse()) results.get(d.name)!.push(round(d, String(r)));
    }
    for (const d of drivers) d.close();
    console.log(`SQLite drivers, median of ${ROUNDS} alternating rounds (Node ${process.version}):`);
    console.log(`${'driver'.padEnd(52)} ${'commits/s'.padStart(10)} ${'reads/s'.padStart(10)} ${'list 10k ms'.padStart(12)} ${'compiles/s'.padStart(11)}`);
    for (const [name, rounds] of results) {
      const f = (k: keyof Figures) => median(rounds.map((x) => x[k]));
      console.log(
        `${name.padEnd(52)} ${f('commitsPerSec').toFixed(0).padStart(10)} ${f('readsPerSec').toFixed(0).padStart(10)} ${f('listMs').toFixed(2).padStart(12)} ${f('compilesPerSec').toFixed(0).padStart(11)}`,
      );
    }
    if (drivers.length < 2) console.log('node:sqlite is not available on this Node.js (it needs 22.13+ or 24)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
