/**
 * The PostgreSQL change feed (storage/dialects/postgres-changes.ts) when its connection stops
 * answering, on a database of the run's throwaway cluster: the backend serving the feed's
 * LISTEN connection is paused with SIGSTOP (a process of our own cluster, found by its
 * application_name in that database) and resumed with SIGCONT.
 *   - a barrier that cannot settle in time tells every subscriber "everything" before its caller
 *     goes on, so nothing kept (memos, listings) is trusted past it;
 *   - a ping unanswered for pingTimeoutMs ends the connection (listening false: memos bypassed),
 *     and once the server answers again the feed listens again and says "everything";
 *   - the store's log says once (warn) that the feed lost PostgreSQL and once (info) that it
 *     listens again, however many reconnections fail in between (the database refuses
 *     connections meanwhile: ALTER DATABASE … ALLOW_CONNECTIONS false, as its superuser).
 * Without PostgreSQL installed the suite is skipped with a warning, and fails when CI=true.
 */
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import type { StoreChange } from '../../../src/common/change-feed.js';
import { PostgresStorage } from '../../../src/store/storage/dialects/postgres.js';
import { LISTENER_APPLICATION_NAME, PostgresChangeFeed } from '../../../src/store/storage/dialects/postgres-changes.js';
import { captureLog } from '../../helpers/log-capture.js';
import { freshPostgresDatabase, requirePostgres, sharedPostgres } from '../../helpers/postgres.js';

const postgres = requirePostgres();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, condition: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(20);
  }
}

/** The backend process serving the feed's connection to `url`'s database. */
async function listenerBackend(url: string): Promise<number> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    const rows = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [LISTENER_APPLICATION_NAME]);
    expect(rows.rows).toHaveLength(1);
    return rows.rows[0]!.pid;
  } finally {
    await client.end();
  }
}

let paused: number | undefined;
let feed: PostgresChangeFeed | undefined;
let storage: PostgresStorage | undefined;
afterEach(async () => {
  if (paused !== undefined) process.kill(paused, 'SIGCONT');
  paused = undefined;
  await feed?.close();
  feed = undefined;
  await storage?.close();
  storage = undefined;
});

/** A statement as the cluster's superuser. */
async function asSuperuser(text: string, values: unknown[] = []): Promise<void> {
  const client = new pg.Client((await sharedPostgres()).adminUrl);
  await client.connect();
  try {
    await client.query(text, values);
  } finally {
    await client.end();
  }
}

postgres.describe('the change feed when its connection stops answering', () => {
  it('tells every subscriber "everything" when a barrier cannot settle in time, and settles normally again once it answers', async () => {
    const url = await freshPostgresDatabase();
    feed = new PostgresChangeFeed(url, { ownBackends: new Set(), settleTimeoutMs: 300, pingMs: 60_000 });
    const heard: StoreChange[] = [];
    feed.subscribe((change) => heard.push(change));
    await until('listening', () => feed!.listening);
    await until('the first "everything" after connecting', () => heard.length === 1);
    await feed.settled();
    expect(heard).toHaveLength(1);

    paused = await listenerBackend(url);
    process.kill(paused, 'SIGSTOP');
    const started = Date.now();
    await feed.settled();
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(heard).toHaveLength(2);
    expect(heard[1]).toMatchObject({ everything: true, locks: true, sessions: true });

    process.kill(paused, 'SIGCONT');
    paused = undefined;
    await sleep(100);
    const count = heard.length;
    await feed.settled();
    expect(feed.listening).toBe(true);
    expect(heard.length).toBe(count);
  }, 30_000);

  it('ends a connection whose ping goes unanswered, so nothing is trusted meanwhile, and listens again once the server answers', async () => {
    const url = await freshPostgresDatabase();
    feed = new PostgresChangeFeed(url, { ownBackends: new Set(), pingMs: 100, pingTimeoutMs: 300, minBackoffMs: 50, maxBackoffMs: 200 });
    const heard: StoreChange[] = [];
    feed.subscribe((change) => heard.push(change));
    await until('listening', () => feed!.listening);

    paused = await listenerBackend(url);
    process.kill(paused, 'SIGSTOP');
    await until('the silent connection ended', () => !feed!.listening, 5_000);

    process.kill(paused, 'SIGCONT');
    paused = undefined;
    const before = heard.length;
    await until('listening again', () => feed!.listening, 10_000);
    await until('"everything" after reconnecting', () => heard.length > before);
    expect(heard.at(-1)).toMatchObject({ everything: true });
  }, 30_000);

  it('logs once that it lost PostgreSQL and once that it listens again, not once per failed reconnection', async () => {
    const url = await freshPostgresDatabase();
    const database = new URL(url).pathname.slice(1);
    const log = captureLog('info');
    storage = new PostgresStorage(url, { maxConnections: 1, log: log.logger });
    const changes = storage.changes;
    changes.subscribe(() => undefined);
    await until('listening', () => changes.listening);
    expect(log.lines()).toEqual([]);

    await asSuperuser(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS false`);
    try {
      await asSuperuser('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = $2', [LISTENER_APPLICATION_NAME, database]);
      await until('the connection lost', () => !changes.listening, 5_000);
      // Reconnections at 100, 200, 400, 800 ms: each refused.
      await sleep(1_600);
    } finally {
      await asSuperuser(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`);
    }
    await until('listening again', () => changes.listening, 10_000);
    expect(log.lines().map((l) => [l.level, l.msg])).toEqual([
      [40, "the change feed lost PostgreSQL: other instances' writes reach this one's caches only as they expire, until it listens again"],
      [30, 'the change feed listens again: every cache starts over'],
    ]);
    expect(log.text()).not.toMatch(/"stack"/);
  }, 30_000);
});
