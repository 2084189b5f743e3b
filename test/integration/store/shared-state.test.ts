/**
 * Two store instances over one PostgreSQL database (and one S3 bucket), as `npm start` twice with
 * the same DRIVEWAY_DATABASE_URL: what they must agree on lives in the database
 * (docs/scale-out.md "Shared state"). A token signed by one is accepted by the other (one key
 * ring); a logout through one refuses the token on the other at once (the session row is read on
 * every call); an upload token issued by one is spent exactly once whatever instance the parallel
 * uploads reach (UPDATE ... WHERE used IS NULL); wrong passwords are counted across both, so no
 * more than loginMaxFailures are evaluated; upload_tokens is a shared table, not a TEMP one.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
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
