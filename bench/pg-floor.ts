/**
 * The floor of the small-file workload's I/O over PostgreSQL (issue 15): `npx tsx bench/pg-floor.ts`.
 * No driveway: 4 workers (as 4 curl clients) each do, per "upload", the round trips one PUT
 * through the bridge makes on PostgreSQL (bench/profile-upload.ts counts them), on a pg Pool
 * against a throwaway PostgreSQL 15 with fsync on, over BENCH_SMALL_FILES (2,000) uploads, in
 * two shapes side by side:
 *   before  as until 0589637: 12 single-statement reads outside a transaction (session, lock
 *           lookup, barrier, the checks before the bytes), then BEGIN, a read, two writes, COMMIT;
 *   now     the barrier's one round trip outside, then BEGIN, ONE read (uploadFacts), ONE write
 *           (the data-modifying CTE of insertNewFile), COMMIT.
 * It prints both beside the same count of single INSERT transactions into SQLite (better-sqlite3,
 * WAL, synchronous=FULL), what the embedded store's round trips cost. Only loopback; the cluster
 * is stopped and removed whatever happens.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { startPostgres } from '../test/helpers/postgres.js';
import { positiveIntEnv } from './lib.js';

const UPLOADS = positiveIntEnv('BENCH_SMALL_FILES', 2000);
const WORKERS = 4;

interface Shape {
  name: string;
  readsOutside: number;
  /** The transaction's statements between BEGIN and COMMIT. */
  work: (client: pg.PoolClient, n: number) => Promise<void>;
}

const SHAPES: Shape[] = [
  {
    name: 'before: 12 reads + a 4-statement transaction',
    readsOutside: 12,
    work: async (client, n) => {
      await client.query({ name: 'get', text: 'SELECT * FROM nodes WHERE parent = $1 AND name = $2', values: ['p', `b${n}`] });
      await client.query({ name: 'ins', text: 'INSERT INTO nodes VALUES ($1, $2, $3, $4)', values: [randomUUID(), 'p', `b${n}`, 4096] });
      await client.query({ name: 'use', text: 'UPDATE usage SET used = used + $1 WHERE uuid = $2', values: [4096, 'u'] });
    },
  },
  {
    name: 'now: 1 read + a transaction of one read and one write',
    readsOutside: 1,
    work: async (client, n) => {
      await client.query({
        name: 'facts',
        text: 'SELECT (SELECT row_to_json(x) FROM nodes x WHERE parent = $1 AND name = $2) AS existing, (SELECT used FROM usage WHERE uuid = $3) AS used',
        values: ['p', `n${n}`, 'u'],
      });
      await client.query({
        name: 'write',
        text: 'WITH ins AS (INSERT INTO nodes VALUES ($1, $2, $3, $4)) UPDATE usage SET used = used + $4 WHERE uuid = $5',
        values: [randomUUID(), 'p', `n${n}`, 4096, 'u'],
      });
    },
  },
];

async function run(pool: pg.Pool, shape: Shape): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (next < UPLOADS) {
        next += 1;
        const n = next;
        for (let i = 0; i < shape.readsOutside; i++) await pool.query({ name: 'read', text: 'SELECT uuid, used FROM usage WHERE uuid = $1', values: ['u'] });
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          await shape.work(client, n);
          await client.query('COMMIT');
        } finally {
          client.release();
        }
      }
    }),
  );
  return (performance.now() - started) / 1000;
}

async function main(): Promise<void> {
  const cluster = await startPostgres({ durable: true });
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'pg-floor-'));
  try {
    const pool = new pg.Pool({ connectionString: cluster.url, max: 10 });
    await pool.query('CREATE TABLE nodes (uuid TEXT PRIMARY KEY, parent TEXT, name TEXT, size BIGINT)');
    await pool.query('CREATE TABLE usage (uuid TEXT PRIMARY KEY, used BIGINT)');
    await pool.query("INSERT INTO usage VALUES ('u', 0)");
    const seconds = new Map<string, number>();
    for (const shape of SHAPES) seconds.set(shape.name, await run(pool, shape));
    await pool.end();

    const db = new Database(path.join(tmp, 'floor.sqlite'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE nodes (uuid TEXT PRIMARY KEY, parent TEXT, name TEXT, size INTEGER)');
    const insert = db.prepare('INSERT INTO nodes VALUES (?, ?, ?, ?)');
    const sqliteStarted = performance.now();
    for (let i = 0; i < UPLOADS; i++) db.transaction(() => insert.run(randomUUID(), 'p', String(i), 4096))();
    const sqliteSeconds = (performance.now() - sqliteStarted) / 1000;
    db.close();

    for (const [name, pgSeconds] of seconds) {
      console.log(`pg-floor: ${UPLOADS} uploads' round trips (${name}; ${WORKERS} workers) over PostgreSQL ${cluster.major} (fsync on): ${pgSeconds.toFixed(2)} s (${(UPLOADS / pgSeconds).toFixed(0)}/s)`);
    }
    console.log(`pg-floor: the same count of one-INSERT transactions into SQLite (WAL, synchronous=FULL), one at a time: ${sqliteSeconds.toFixed(2)} s`);
  } finally {
    await cluster.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
