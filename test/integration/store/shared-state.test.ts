/**
 * Two store instances over one PostgreSQL database (and one S3 bucket), as `npm start` twice with
 * the same DRIVEWAY_DATABASE_URL: what they must agree on lives in the database
 * (docs/scale-out.md "Shared state"). A token signed by one is accepted by the other (one key
 * ring); a logout through one refuses the token on the other at once (the session row is read on
 * every call); an upload token issued by one is spent exactly once whatever instance the parallel
 * uploads reach (UPDATE ... WHERE used IS NULL); wrong passwords are counted across both, so no
 * more than loginMaxFailures are evaluated; upload_tokens is a shared table, not a TEMP one. The
 * in-process client (the bridge's, behind its per-request barrier) keeps live sessions in memory
 * until a change to a session is announced (migration 018).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLocalClient } from '../../../src/store/local-client.js';
import { requirePostgres } from '../../helpers/postgres.js';
import { postgresStorageFlags, startTestStore, type TestStore } from '../../helpers/start-store.js';

const postgres = requirePostgres();
const MAX_FAILURES = 4;

postgres.describe('two store instances over one PostgreSQL database', () => {
  let a: TestStore;
  let b: TestStore;
  beforeAll(async () => {
    const flags = { 'store.loginMaxFailures': MAX_FAILURES };
    a = await startTestStore({ storage: 'postgres', flags });
    b = await startTestStore({ storage: 'sqlite', flags: { ...(await postgresStorageFlags(a.dataDir)), ...flags } });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  async function login(store: TestStore, password = store.adminPassword): Promise<{ status: number; token?: string }> {
    const res = await fetch(`${store.url}/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password }) });
    const body = (await res.json()) as { token?: string };
    return { status: res.status, token: body.token };
  }
  const get = (store: TestStore, path: string, token: string) => fetch(`${store.url}${path}`, { headers: { authorization: `Bearer ${token}` } });

  it('share one database: the same built-in admin, and upload_tokens an UNLOGGED table (not TEMP) with its created index', async () => {
    expect(a.ctx.storage.dialect).toBe('postgres');
    expect(b.ctx.storage.dialect).toBe('postgres');
    const table = await a.ctx.storage.sql.get<{ relpersistence: string }>("SELECT relpersistence FROM pg_class WHERE relname = 'upload_tokens' AND relkind = 'r'");
    expect(table?.relpersistence).toBe('u');
    const index = await a.ctx.storage.sql.get<{ indexdef: string }>("SELECT indexdef FROM pg_indexes WHERE tablename = 'upload_tokens' AND indexname = 'upload_tokens_created'");
    expect(index?.indexdef).toMatch(/\(created\)/);
  });

  it('a session opened through one is accepted by the other, and a logout through one refuses it on the other at once', async () => {
    const { token } = await login(a);
    expect(token).toBeDefined();
    expect((await get(b, '/api/user', token!)).status).toBe(200);
    expect((await get(a, '/api/user/logout', token!)).status).toBe(200);
    const refused = await get(b, '/api/user', token!);
    expect(refused.status).toBe(401);
    expect((await refused.json()) as object).toMatchObject({ status: 'error' });
    expect((await get(a, '/api/user', token!)).status).toBe(401);
  });

  it('the in-process client keeps live sessions in memory behind the feed, and an announced logout on the other instance ends them', async () => {
    const feed = b.ctx.storage.changes;
    if (!feed) throw new Error('no change feed over PostgreSQL');
    const client = createLocalClient(b.ctx, { behindFeedBarrier: true });
    for (let i = 0; !feed.listening; i++) {
      if (i > 200) throw new Error('the change feed did not listen within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const kept = await client.login('admin', b.adminPassword);
    expect((await client.currentUser(kept)).isAdmin).toBe(true);
    const jti = (JSON.parse(Buffer.from(kept.token.split('.')[1] as string, 'base64url').toString('utf8')) as { jti: string }).jti;
    // Revoked behind the feed's back (its trigger off): the answer kept in memory still holds,
    // which is what saves a PUT its round trip.
    await a.ctx.storage.sql.exec('ALTER TABLE sessions DISABLE TRIGGER driveway_sessions_changed');
    try {
      await a.ctx.storage.sql.run('UPDATE sessions SET revoked = ? WHERE id = ?', [Date.now(), jti]);
      await feed.settled();
      expect((await client.currentUser(kept)).isAdmin).toBe(true);
    } finally {
      await a.ctx.storage.sql.exec('ALTER TABLE sessions ENABLE TRIGGER driveway_sessions_changed');
    }
    // Any announced end of a session (another one's logout through the other instance) drops the memory.
    const { token } = await login(a);
    expect((await get(a, '/api/user/logout', token!)).status).toBe(200);
    await feed.settled();
    await expect(client.currentUser(kept)).rejects.toMatchObject({ kind: 'unauthenticated' });

    // A logout through the other instance ends a session kept here, once the feed settled.
    const other = await client.login('admin', b.adminPassword);
    expect((await client.currentUser(other)).isAdmin).toBe(true);
    expect((await get(a, '/api/user/logout', other.token)).status).toBe(200);
    await feed.settled();
    await expect(client.currentUser(other)).rejects.toMatchObject({ kind: 'unauthenticated' });
  });

  it('an upload token issued by one is spent exactly once by parallel uploads through both', async () => {
    const { token } = await login(b);
    const issued = await get(a, '/api/nodes/home/upload', token!);
    expect(issued.status).toBe(200);
    const upload = ((await issued.json()) as { token: string }).token;
    // A name of its own per upload: only the token can refuse them.
    const prefix = `once-${Date.now()}-`;
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => {
        const form = new FormData();
        form.append('file', new Blob([`body ${i}`]), `${prefix}${i}.txt`);
        return fetch(`${(i % 2 === 0 ? a : b).url}/upload/${upload}`, { method: 'POST', body: form }).then(async (res) => {
          await res.arrayBuffer();
          return res.status;
        });
      }),
    );
    expect(answers.filter((s) => s >= 200 && s < 300)).toHaveLength(1);
    expect(answers.filter((s) => s >= 400 && s < 500)).toHaveLength(11);
    const files = await a.ctx.storage.sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM nodes WHERE name LIKE ?', [`${prefix}%`]);
    expect(files?.n).toBe(1);
  });

  it('counts wrong passwords across both: of 20 parallel guesses, exactly loginMaxFailures are evaluated', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => login(i % 2 === 0 ? a : b, `wrong-${i}`)));
    expect(answers.filter((r) => r.status === 401)).toHaveLength(MAX_FAILURES);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(20 - MAX_FAILURES);
    // And the right password is refused too while the account is blocked, on both.
    expect((await login(a)).status).toBe(429);
    expect((await login(b)).status).toBe(429);
  });
});
