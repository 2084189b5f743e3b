/**
 * The session signing keys in the database (store/sessions.ts, `jwt_keys` of migration 013), on
 * SQLite and on PostgreSQL: the key of `<data dir>/jwt-secret` imported as the first key, so a
 * token signed before keys had ids still verifies; the kid in every new token; two instances
 * opening an empty ring at once agreeing on one key; an unknown kid read from the database at
 * most once a second; rotation adding a key and retiring the replaced one a session TTL later;
 * DRIVEWAY_JWT_SECRET winning over the ring.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { decodeProtectedHeader, SignJWT } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/common/clock.js';
import { openDatabase } from '../../../src/store/storage/dialects/sqlite-open.js';
import { SqliteStorage } from '../../../src/store/storage/dialects/sqlite.js';
import { PostgresStorage } from '../../../src/store/storage/dialects/postgres.js';
import { migrate } from '../../../src/store/storage/migrations.js';
import type { Sql, Storage } from '../../../src/store/storage/sql.js';
import { FIRST_KID, openSessionKeys, rotateSessionKeys, signSession, verifiedClaims, type SessionKeys } from '../../../src/store/sessions.js';
import { freshPostgresDatabase, requirePostgres } from '../../helpers/postgres.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function dataDir(): string {
  const tmp = makeTmpDir('driveway-keys-');
  cleanups.push(() => tmp.remove());
  return tmp.dir;
}

interface Dialect {
  name: string;
  /** Storages over ONE fresh database (several: instances sharing it). */
  open(count?: number): Promise<Storage[]>;
}

const sqlite: Dialect = {
  name: 'SQLite',
  async open() {
    const storage = new SqliteStorage(openDatabase(path.join(dataDir(), 'driveway.sqlite')));
    cleanups.push(() => storage.close());
    return [storage];
  },
};

const postgresBinary = requirePostgres();
const postgres: Dialect = {
  name: 'PostgreSQL',
  async open(count = 1) {
    const url = await freshPostgresDatabase();
    const storages = Array.from({ length: count }, () => new PostgresStorage(url, { maxConnections: 4 }));
    for (const storage of storages) cleanups.push(() => storage.close());
    await migrate(storages[0] as Storage, 'the test database');
    return storages;
  },
};

const SECRET = 'an-old-jwt-secret-from-the-data-dir-0123456789';
const TTL_SEC = 86_400;

/** A token as the release before key ids signed it: HS256, no kid. */
async function legacyToken(secret: string, clock: ManualClock): Promise<string> {
  const now = Math.floor(clock.now() / 1000);
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(randomUUID())
    .setJti(randomUUID())
    .setIssuedAt(now)
    .setExpirationTime(now + TTL_SEC)
    .sign(new TextEncoder().encode(secret));
}

async function tokenOf(keys: SessionKeys, clock: ManualClock): Promise<string> {
  return (await signSession(keys, clock, randomUUID(), TTL_SEC)).token;
}

/** The Sql handle with its reads of jwt_keys counted. */
function counting(sql: Sql): { sql: Sql; reads: () => number } {
  let reads = 0;
  const counted: Sql = {
    ...sql,
    dialect: sql.dialect,
    inTransaction: sql.inTransaction,
    all: async (text, params) => {
      if (text.includes('FROM jwt_keys')) reads += 1;
      return sql.all(text, params);
    },
  };
  return { sql: counted, reads: () => reads };
}

function frozenClock(): ManualClock {
  const clock = new ManualClock();
  clock.freeze();
  return clock;
}

for (const dialect of [sqlite, postgres]) {
  const suite = dialect === postgres ? postgresBinary.describe : describe;
  suite(`session keys on ${dialect.name}`, () => {
    it('imports <data dir>/jwt-secret as the first key: a token signed before keys had ids still verifies, new ones name kid 0', async () => {
      const [storage] = await dialect.open();
      const clock = frozenClock();
      const dir = dataDir();
      writeFileSync(path.join(dir, 'jwt-secret'), `${SECRET}\n`);
      const old = await legacyToken(SECRET, clock);
      const keys = await openSessionKeys(storage!.sql, clock, dir);
      expect(await verifiedClaims(keys, clock, old)).toMatchObject({ expMs: expect.any(Number) });
      const token = await tokenOf(keys, clock);
      expect(decodeProtectedHeader(token).kid).toBe(FIRST_KID);
      expect(await verifiedClaims(keys, clock, token)).toBeDefined();
      // Stored once: another start reads the same key, the file no longer matters.
      writeFileSync(path.join(dir, 'jwt-secret'), 'another-secret-that-is-long-enough-0123456789');
      const again = await openSessionKeys(storage!.sql, clock, dir);
      expect(await verifiedClaims(again, clock, old)).toBeDefined();
      expect(await storage!.sql.all('SELECT kid FROM jwt_keys')).toEqual([{ kid: FIRST_KID }]);
      // A token signed with any other secret is refused.
      expect(await verifiedClaims(keys, clock, await legacyToken('not-the-secret-of-this-store-0123456789', clock))).toBeUndefined();
    });

    it('makes a key when there is no file, and reads an unknown kid from the database at most once a second', async () => {
      const [storage] = await dialect.open();
      const clock = frozenClock();
      const watched = counting(storage!.sql);
      const keys = await openSessionKeys(watched.sql, clock, dataDir());
      expect(watched.reads()).toBe(2); // empty, then the key it inserted
      // Another instance rotates: a token with the new kid verifies here after one read.
      await rotateSessionKeys(storage!.sql, clock, { everyMs: 0, ttlSec: TTL_SEC });
      const other = await openSessionKeys(storage!.sql, clock, dataDir());
      const fresh = await tokenOf(other, clock);
      expect(decodeProtectedHeader(fresh).kid).not.toBe(FIRST_KID);
      await new Promise((resolve) => setTimeout(resolve, 1_050));
      expect(await verifiedClaims(keys, clock, fresh)).toBeDefined();
      expect(watched.reads()).toBe(3);
      // A stream of bogus kids: no more reads within the second.
      for (let i = 0; i < 50; i += 1) {
        const bogus = await new SignJWT({})
          .setProtectedHeader({ alg: 'HS256', kid: `bogus${i}` })
          .setSubject('x')
          .setJti(randomUUID())
          .setExpirationTime(Math.floor(clock.now() / 1000) + 60)
          .sign(new TextEncoder().encode('x'.repeat(40)));
        expect(await verifiedClaims(keys, clock, bogus)).toBeUndefined();
      }
      expect(watched.reads()).toBe(3);
    });

    it('the key a rotation adds signs next, even when rotations fall within one millisecond', async () => {
      const [storage] = await dialect.open();
      const clock = frozenClock();
      const sql = storage!.sql;
      await openSessionKeys(sql, clock, dataDir());
      // Each added kid is random: with created tied, the order fell to it (1 in 64 sorts before '0').
      for (let i = 0; i < 40; i += 1) {
        const { added } = await rotateSessionKeys(sql, clock, { everyMs: 0, ttlSec: TTL_SEC });
        const signer = await openSessionKeys(sql, clock, dataDir());
        expect(decodeProtectedHeader(await tokenOf(signer, clock)).kid).toBe(added);
      }
    });

    it('rotates: a new key when the newest is due, the replaced one retired only a session TTL (and a refresh) later', async () => {
      const [storage] = await dialect.open();
      const clock = frozenClock();
      const sql = storage!.sql;
      const DAY = 86_400_000;
      const keys = await openSessionKeys(sql, clock, dataDir());
      // Signed by the first key with a lifetime beyond its retirement (a TTL configured longer elsewhere).
      const longLived = (await signSession(keys, clock, randomUUID(), 100 * 86_400)).token;
      clock.advance(10 * DAY);
      expect(await rotateSessionKeys(sql, clock, { everyMs: 30 * DAY, ttlSec: TTL_SEC })).toEqual({ retired: 0 });
      clock.advance(21 * DAY);
      const rotated = await rotateSessionKeys(sql, clock, { everyMs: 30 * DAY, ttlSec: TTL_SEC });
      expect(rotated).toEqual({ added: expect.any(String), retired: 0 });
      // Not due again.
      expect(await rotateSessionKeys(sql, clock, { everyMs: 30 * DAY, ttlSec: TTL_SEC })).toEqual({ retired: 0 });
      const rows = await sql.all<{ kid: string }>('SELECT kid FROM jwt_keys WHERE retired IS NULL ORDER BY created');
      expect(rows.map((r) => r.kid)).toEqual([FIRST_KID, rotated.added]);
      const signer = await openSessionKeys(sql, clock, dataDir());
      const second = await tokenOf(signer, clock);
      expect(decodeProtectedHeader(second).kid).toBe(rotated.added);
      // Within the TTL after the replacement the old key still verifies (its tokens may be live).
      clock.advance(TTL_SEC * 1000);
      expect(await verifiedClaims(await openSessionKeys(sql, clock, dataDir()), clock, longLived)).toBeDefined();
      expect(await rotateSessionKeys(sql, clock, { everyMs: 30 * DAY, ttlSec: TTL_SEC })).toEqual({ retired: 0 });
      clock.advance(61_000);
      expect(await rotateSessionKeys(sql, clock, { everyMs: 30 * DAY, ttlSec: TTL_SEC })).toEqual({ retired: 1 });
      const later = await openSessionKeys(sql, clock, dataDir());
      expect(await later.verifying(FIRST_KID)).toBeUndefined();
      expect(await later.verifying(rotated.added)).toBeDefined();
      // Retired: its tokens are refused even where they have not expired.
      expect(await verifiedClaims(later, clock, longLived)).toBeUndefined();
      expect(await verifiedClaims(later, clock, await tokenOf(signer, clock))).toBeDefined();
    });
  });
}

postgresBinary.describe('session keys on PostgreSQL: instances starting at once', () => {
  it('two instances opening an empty ring at once sign with one key, each verifying the other tokens', async () => {
    const [one, two] = await postgres.open(2);
    const clock = frozenClock();
    const [a, b] = await Promise.all([openSessionKeys(one!.sql, clock, dataDir()), openSessionKeys(two!.sql, clock, dataDir())]);
    expect(await one!.sql.all('SELECT kid FROM jwt_keys')).toEqual([{ kid: FIRST_KID }]);
    expect(await verifiedClaims(b!, clock, await tokenOf(a!, clock))).toBeDefined();
    expect(await verifiedClaims(a!, clock, await tokenOf(b!, clock))).toBeDefined();
    // Both due to rotate at once: one key is added.
    clock.advance(2 * 86_400_000);
    const both = await Promise.all([one!, two!].map((s) => rotateSessionKeys(s.sql, clock, { everyMs: 86_400_000, ttlSec: TTL_SEC })));
    expect(both.filter((r) => r.added !== undefined)).toHaveLength(1);
    expect(await one!.sql.all('SELECT kid FROM jwt_keys')).toHaveLength(2);
  });
});

describe('session keys: DRIVEWAY_JWT_SECRET', () => {
  it('wins over the ring: tokens with and without its kid verify, the database is not touched', async () => {
    const [storage] = await sqlite.open();
    const clock = frozenClock();
    const keys = await openSessionKeys(storage!.sql, clock, dataDir(), SECRET);
    const token = await tokenOf(keys, clock);
    expect(decodeProtectedHeader(token).kid).toMatch(/^cfg-/);
    expect(await verifiedClaims(keys, clock, token)).toBeDefined();
    expect(await verifiedClaims(keys, clock, await legacyToken(SECRET, clock))).toBeDefined();
    expect(await storage!.sql.all('SELECT kid FROM jwt_keys')).toEqual([]);
  });
});
