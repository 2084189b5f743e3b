/**
 * The throwaway PostgreSQL of test/helpers/postgres.ts, held to what the scale-out suites rely
 * on: it listens on loopback only, the app role connects with its password (and a wrong one is
 * refused), a restart keeps committed data and comes back on the same port, databases made
 * per suite are isolated, and stop() leaves no server and no folder behind; the run's shared
 * cluster (globalSetup) hands out databases and refuses to be restarted by a suite.
 */
import { existsSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { freshPostgresDatabase, POSTGRES_APP_ROLE, requirePostgres, sharedPostgres, startPostgres, type TestPostgres } from '../../helpers/postgres.js';

const postgres = requirePostgres();

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

postgres.describe('a throwaway PostgreSQL cluster of its own', () => {
  let cluster: TestPostgres;
  beforeAll(async () => {
    cluster = await startPostgres();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('listens on 127.0.0.1 at a free port other than 5432, as the app role, with fsync off', async () => {
    expect(cluster.url).toMatch(new RegExp(`^postgres://${POSTGRES_APP_ROLE}:[0-9a-f]+@127\\.0\\.0\\.1:${cluster.port}/${POSTGRES_APP_ROLE}$`));
    expect(cluster.port).not.toBe(5432);
    expect(cluster.major).toBeGreaterThanOrEqual(15);
    const [row] = await query<{ who: string; addr: string; fsync: string; listen: string; max: string; enc: string }>(
      cluster.url,
      "SELECT current_user AS who, inet_server_addr()::text AS addr, current_setting('fsync') AS fsync, current_setting('listen_addresses') AS listen, current_setting('max_connections') AS max, pg_encoding_to_char(encoding) AS enc FROM pg_database WHERE datname = current_database()",
    );
    expect(row).toEqual({ who: POSTGRES_APP_ROLE, addr: '127.0.0.1/32', fsync: 'off', listen: '127.0.0.1', max: '100', enc: 'UTF8' });
    // Case folding beyond ASCII (names compare case-insensitively in the store).
    const [folded] = await query<{ l: string }>(cluster.url, "SELECT lower('ÉCOLE Ünïcode') AS l");
    expect(folded?.l).toBe('école ünïcode');
  });

  it('refuses a wrong password over TCP', async () => {
    const wrong = cluster.url.replace(/:[0-9a-f]+@/, ':not-the-password@');
    await expect(query(wrong, 'SELECT 1')).rejects.toThrow(/password authentication failed/);
  });

  it('keeps a table and its rows across a restart on the same port, and a new client reconnects', async () => {
    const url = await cluster.createDatabase();
    await query(url, 'CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)');
    await query(url, 'INSERT INTO notes (body) VALUES ($1), ($2)', ['one', 'two']);

    const before = cluster.pid;
    const held = new pg.Client({ connectionString: url });
    await held.connect();
    held.on('error', () => undefined); // the restart ends this connection; the error is expected
    await cluster.restart();
    expect(cluster.pid).not.toBe(before);
    expect(isRunning(before)).toBe(false);
    await expect(held.query('SELECT 1')).rejects.toThrow();

    const rows = await query<{ body: string }>(url, 'SELECT body FROM notes ORDER BY id');
    expect(rows.map((r) => r.body)).toEqual(['one', 'two']);
  });

  it('refuses connections while stopped and serves again after startServer', async () => {
    await cluster.stopServer();
    await expect(query(cluster.url, 'SELECT 1')).rejects.toThrow(/ECONNREFUSED/);
    await cluster.startServer();
    expect(await query<{ n: number }>(cluster.url, 'SELECT 1 AS n')).toEqual([{ n: 1 }]);
  });

  it('makes databases that are isolated from each other, and drops one on request', async () => {
    const a = await cluster.createDatabase();
    const b = await cluster.createDatabase();
    expect(a).not.toBe(b);
    await query(a, 'CREATE TABLE only_in_a (x int)');
    await query(a, 'INSERT INTO only_in_a VALUES (1)');
    const inB = await query<{ n: string }>(b, "SELECT count(*)::text AS n FROM information_schema.tables WHERE table_name = 'only_in_a'");
    expect(inB).toEqual([{ n: '0' }]);
    await expect(query(b, 'SELECT * FROM only_in_a')).rejects.toThrow(/does not exist/);

    const named = await cluster.createDatabase('harness_named');
    expect(named.endsWith('/harness_named')).toBe(true);
    await expect(cluster.createDatabase('harness_named')).rejects.toThrow(/already exists/);
    await expect(cluster.createDatabase('bad; DROP ROLE driveway')).rejects.toThrow(/not a plain database name/);
    await cluster.dropDatabase('harness_named');
    await expect(query(named, 'SELECT 1')).rejects.toThrow(/does not exist/);
  });

  it('stops only its own server and removes its folder', async () => {
    const other = await startPostgres();
    const otherPid = other.pid;
    const otherDir = (await query<{ d: string }>(other.adminUrl, "SELECT current_setting('data_directory') AS d"))[0]!.d;
    expect(existsSync(otherDir)).toBe(true);
    await other.stop();
    expect(isRunning(otherPid)).toBe(false);
    expect(existsSync(otherDir)).toBe(false);
    await other.stop(); // idempotent
    // The first cluster is untouched.
    expect(isRunning(cluster.pid)).toBe(true);
    expect(await query<{ n: number }>(cluster.url, 'SELECT 2 AS n')).toEqual([{ n: 2 }]);
  });
});

postgres.describe("the run's shared cluster", () => {
  it("is the globalSetup's cluster for every file, a fresh database per caller, and not a suite's to restart", async () => {
    const provided = inject('drivewayPostgres');
    expect(provided, 'vitest.config.ts gives the integration project postgres-global-setup').not.toBeNull();
    const [first, second] = await Promise.all([sharedPostgres(), sharedPostgres()]);
    expect(first).toBe(second);
    expect(first!.port).toBe(provided!.port);
    const [one, two] = await Promise.all([freshPostgresDatabase(), freshPostgresDatabase()]);
    expect(one).not.toBe(two);
    await query(one, 'CREATE TABLE t (x int)');
    expect(await query(one, 'SELECT * FROM t')).toEqual([]);
    await expect(query(two, 'SELECT * FROM t')).rejects.toThrow(/does not exist/);
    await expect(first!.restart()).rejects.toThrow(/not a suite's to stop or restart/);
    await expect(first!.stop()).rejects.toThrow(/not a suite's/);
    expect(await query<{ n: number }>(first!.url, 'SELECT 3 AS n')).toEqual([{ n: 3 }]);
  });
});
