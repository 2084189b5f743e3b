/**
 * Instances started at the same moment on one database (issue 21, item 2): README "Scaling out"
 * starts its instances together, and on a fresh database one of them used to exit with
 * `relation "users" already exists` or a duplicate `pg_type` row. Three real processes
 * (src/main.ts, each its own data directory) are started at once on an empty database, ten
 * rounds, and on a database an older driveway left after its first migrations; each round checks
 * that all three serve, that each missing migration was applied by exactly one of them (their
 * `applied database migrations` lines) and recorded once, that the schema is the one a single
 * migrator makes, and what the other startup writes left: one built-in admin, one session key
 * (a token one instance signed verifies on all), and (when no admin password is configured) one
 * generated password file, in the data directory of the instance that made the admin, holding
 * the password that logs in.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { migrate, migrationsOf } from '../../src/store/storage/migrations.js';
import { PostgresStorage } from '../../src/store/storage/dialects/postgres.js';
import { ADMIN_PASSWORD, spawnDriveway, type DrivewayProcess } from '../helpers/driveway-process.js';
import { requirePostgres, sharedPostgres, type TestPostgres } from '../helpers/postgres.js';
import { freshS3Bucket, postgresS3Env } from '../helpers/s3-server.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';

const postgres = requirePostgres();

const INSTANCES = 3;
const ROUNDS = 10;
/** The migrations an "older" database holds: the baseline and the next one. */
const OLDER_VERSIONS = 2;

/** Tables, columns, indexes, triggers and functions of the public schema: what "the schema" is here. */
const SCHEMA_QUERY = `
  SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable AS item
    FROM information_schema.columns WHERE table_schema = 'public'
  UNION ALL SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
  UNION ALL SELECT 'trigger ' || tgrelid::regclass || ' ' || tgname FROM pg_trigger WHERE NOT tgisinternal
  UNION ALL SELECT 'function ' || p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'
  ORDER BY item`;

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

const schemaOf = async (url: string): Promise<string[]> => (await query<{ item: string }>(url, SCHEMA_QUERY)).map((r) => r.item);

/** What an older driveway left: its first migrations applied and recorded, as it recorded them. */
async function applyFirstMigrations(url: string, count: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied BIGINT NOT NULL)');
    for (const migration of migrationsOf('postgres').slice(0, count)) {
      await client.query('BEGIN');
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, $3)', [migration.version, migration.name, Date.now()]);
      await client.query('COMMIT');
    }
  } finally {
    await client.end();
  }
}

/** The versions one instance's log says it applied (its JSON `applied database migrations` lines). */
function appliedBy(output: string): number[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg?: string; applied?: number[] })
    .filter((entry) => entry.msg === 'applied database migrations')
    .flatMap((entry) => entry.applied ?? []);
}

async function login(storeUrl: string, password: string): Promise<{ status: number; token?: string }> {
  const response = await fetch(`${storeUrl}/auth`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  });
  const body = (await response.json()) as { token?: string };
  return body.token === undefined ? { status: response.status } : { status: response.status, token: body.token };
}

postgres.describe('instances started together on one database', () => {
  let cluster: TestPostgres;
  let reference: string[];
  const known = migrationsOf('postgres').map((m) => m.version);
  const started: DrivewayProcess[] = [];
  const folders: Array<ReturnType<typeof makeTmpDir>> = [];
  let rounds = 0;

  beforeAll(async () => {
    cluster = await sharedPostgres();
    // The schema one migrator makes, alone: what every round must end with.
    const url = await cluster.createDatabase();
    const alone = new PostgresStorage(url, { maxConnections: 1 });
    try {
      await migrate(alone, 'the reference database');
    } finally {
      await alone.close();
    }
    reference = await schemaOf(url);
    expect(reference.length).toBeGreaterThan(100);
  });

  afterAll(async () => {
    for (const instance of started) instance.kill();
    await Promise.all(started.map((instance) => instance.exited));
    for (const folder of folders) folder.remove();
  });

  /**
   * One round: INSTANCES processes started at once; resolves once every one is stopped again.
   * `older`: the database already holds the first migrations. `generated`: no admin password is
   * configured, so the one instance that makes the admin writes the password it generated.
   */
  async function round(name: string, options: { older: boolean; generated: boolean }): Promise<void> {
    const url = await cluster.createDatabase();
    if (options.older) await applyFirstMigrations(url, OLDER_VERSIONS);
    const s3 = await freshS3Bucket();
    const dirs = Array.from({ length: INSTANCES }, (_, i) => makeTmpDir(`driveway-together-${name}-${i}-`));
    folders.push(...dirs);
    const env = { ...postgresS3Env(url, s3), DRIVEWAY_LOG_LEVEL: 'info', ...(options.generated ? { DRIVEWAY_ADMIN_PASSWORD: undefined } : {}) };
    const results = await Promise.allSettled(dirs.map((dir) => spawnDriveway({ dataDir: dir.dir, env, startupMs: 60_000 })));
    const running = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    started.push(...running);
    try {
      const failures = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
      expect(failures, `${name}: every instance starts`).toEqual([]);

      // Each missing migration applied by exactly one instance, and recorded once.
      const missing = known.slice(options.older ? OLDER_VERSIONS : 0);
      const applied = running.flatMap((instance) => appliedBy(instance.output()));
      expect(applied.sort((a, b) => a - b), `${name}: migrations applied, over all instances`).toEqual(missing);
      const recorded = await query<{ version: number; times: string }>(url, 'SELECT version, COUNT(*) AS times FROM schema_migrations GROUP BY version ORDER BY version');
      expect(recorded.map((r) => [r.version, Number(r.times)])).toEqual(known.map((v) => [v, 1]));
      expect(await schemaOf(url), `${name}: the schema`).toEqual(reference);

      // One admin, one session key, and every instance serving with it.
      expect(await query(url, 'SELECT username FROM users WHERE is_builtin = 1')).toEqual([{ username: 'admin' }]);
      expect(await query(url, 'SELECT kid FROM jwt_keys')).toEqual([{ kid: '0' }]);
      let password = ADMIN_PASSWORD;
      if (options.generated) {
        const files = dirs.map((dir) => path.join(dir.dir, 'initial-admin-password')).filter((file) => existsSync(file));
        expect(files, `${name}: one generated password file`).toHaveLength(1);
        password = readFileSync(files[0] as string, 'utf8').trim();
      }
      // The admin logs in through one instance (another each round) and its token works on all.
      const signer = running[rounds++ % running.length] as DrivewayProcess;
      const session = await login(signer.storeUrl, password);
      expect(session.status, `${name}: the admin logs in through ${signer.storeUrl}`).toBe(200);
      for (const instance of running) {
        expect((await fetch(`${instance.storeUrl}/readyz`)).status).toBe(200);
        const profile = await fetch(`${instance.storeUrl}/api/user`, { headers: { authorization: `Bearer ${session.token}` } });
        expect(profile.status, `${name}: a token of ${signer.storeUrl} verifies on ${instance.storeUrl}`).toBe(200);
      }
    } finally {
      for (const instance of running) instance.child.kill('SIGTERM');
      const codes = await Promise.all(running.map((instance) => instance.exited));
      expect(codes).toEqual(running.map(() => 0));
      await cluster.dropDatabase(new URL(url).pathname.slice(1));
    }
  }

  it(`starts ${INSTANCES} at once on an empty database, ${ROUNDS} rounds: each migration applied once, every instance serving`, async () => {
    for (let i = 0; i < ROUNDS; i++) await round(`empty-${i}`, { older: false, generated: i % 2 === 1 });
  }, 300_000);

  it(`starts ${INSTANCES} at once on a database an older driveway migrated halfway`, async () => {
    await round('older', { older: true, generated: true });
  }, 60_000);
});
