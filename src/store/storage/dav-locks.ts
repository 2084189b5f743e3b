/**
 * The storage layer's repository of WebDAV locks: the LockRepository contract
 * (contracts/dav-locks.ts) over the `dav_locks` table (migration 012), for SQLite or PostgreSQL
 * through one `Sql` handle: every instance over one database sees every lock, and two
 * instances cannot both grant conflicting locks. The lock table is sabre/dav's, with what
 * sabre's PDO backend lacks (nextcloud/server issues cited in docs/scale-out.md):
 * - check and insert in ONE transaction. SQLite: the dialect's one-transaction gate (and
 *   BEGIN IMMEDIATE across processes) serialises them. PostgreSQL: the transaction first takes
 *   advisory locks on the chain, shared on each ancestor and exclusive on the resource, so two
 *   LOCKs whose resources are equal or nested queue up while unrelated ones do not; the dialect
 *   runs it SERIALIZABLE, so a LOCK that waited (its snapshot predates the winner's commit) is
 *   rolled back and run again by the dialect, and then sees the winner's row: exactly one wins.
 * - a lock is a lease: reads ignore rows past `expires_ms`, which are swept every few hundred
 *   inserts per instance and whenever a budget looks full (the budgets count a row until then).
 * - budgets per principal and in total, in `dav_lock_usage`, kept by triggers in the same
 *   transaction as every insert, update and delete (migration 012).
 *
 * Expected refusals (conflict, budget) are decided inside the transaction but thrown after it,
 * which commits having written nothing: a transaction never rolls back for them. That matters
 * while the store still writes through its own better-sqlite3 calls on the connection this
 * handle shares (the store's ctx.storage): a rollback there could take a store write with it.
 *
 * - lookups answered from memory while the change feed listens (LockLookups below): a PUT or a
 *   PROPFIND asks whether anything is locked, and almost always nothing is; every change to a
 *   lock, by this instance or (announced by migration 017's trigger) another, drops the answers.
 *
 * run.ts (dav-state.ts) wires it into the bridge over PostgreSQL only: over SQLite one process
 * serves the data directory, and the bridge keeps its locks in memory (MemoryLockRepository).
 */
import type { ChangeFeed } from '../../common/change-feed.js';
import { FeedMemo } from '../../common/feed-memo.js';
import type { Sql } from './sql.js';
import {
  budgetError,
  budgetPassed,
  conflictsOf,
  LockError,
  lockBudgets,
  lockBytes,
  parentOf,
  SWEEP_EVERY_LOCKS,
  type ActiveLock,
  type LockBudgets,
  type LockRenewal,
  type LockRepository,
} from '../../contracts/dav-locks.js';
import { inKeys, keyRows } from './sql-lists.js';

/** First key of PostgreSQL's two-key advisory locks taken here ("DAVL"); the second is hashtext(resource). */
const ADVISORY_NAMESPACE = 0x4441564c;

interface LockRow {
  token: string;
  resource: string;
  chain: string;
  root_href: string;
  scope: 'exclusive' | 'shared';
  depth: '0' | 'infinity';
  owner_xml: string | null;
  principal: string;
  timeout_sec: number;
  expires_ms: number;
}

const COLUMNS = 'l.token, l.resource, l.chain, l.root_href, l.scope, l.depth, l.owner_xml, l.principal, l.timeout_sec, l.expires_ms';

function toLock(row: LockRow): ActiveLock {
  return {
    token: row.token,
    resourceId: row.resource,
    chain: JSON.parse(row.chain) as string[],
    rootHref: row.root_href,
    scope: row.scope,
    depth: row.depth,
    ownerXml: row.owner_xml ?? undefined,
    principal: row.principal,
    timeoutSec: Number(row.timeout_sec),
    expiresAtMs: Number(row.expires_ms),
  };
}

type Verdict = { kind: 'inserted' } | { kind: 'conflict'; conflicts: ActiveLock[] } | { kind: 'budget'; passed: 'total' | 'principal' };

/**
 * Lock lookups kept in memory while the change feed listens (common/feed-memo.ts: sound behind
 * the per-request barrier). Rows are kept as read and filtered by expiry at each use, so a lock
 * expires from memory as from the table. Most of the time no lock exists at all (rclone, curl,
 * backup tools never lock): that is learnt with one probe and then answers every lookup, a new
 * file's included (whose chain no earlier lookup named), until the next change to a lock.
 */
class LockLookups {
  private readonly existence: FeedMemo<boolean>;
  private readonly answers: FeedMemo<LockRow[]>;

  constructor(
    feed: ChangeFeed,
    private readonly anyLive: (nowMs: number) => Promise<boolean>,
  ) {
    const options = { max: 20_000, ttlMs: 2000 };
    this.existence = new FeedMemo(feed, (change) => change.locks, options);
    this.answers = new FeedMemo(feed, (change) => change.locks, options);
  }

  drop(): void {
    this.existence.drop();
    this.answers.drop();
  }

  async rows(key: string, nowMs: number, read: () => Promise<LockRow[]>): Promise<LockRow[]> {
    if (!(await this.existence.get('any', () => this.anyLive(nowMs)))) return [];
    return this.answers.get(key, read);
  }
}

const live = (rows: readonly LockRow[], nowMs: number): LockRow[] => rows.filter((r) => Number(r.expires_ms) > nowMs);

export class SqlLockRepository implements LockRepository {
  private readonly budgets: LockBudgets;
  private insertsSinceSweep = 0;
  private readonly lookups: LockLookups | undefined;

  /** `changes`: the storage's change feed (PostgreSQL), which lets lookups be answered from memory. */
  constructor(
    private readonly sql: Sql,
    budgets: Partial<LockBudgets> = {},
    changes?: ChangeFeed,
  ) {
    this.budgets = lockBudgets(budgets);
    this.lookups = changes
      ? new LockLookups(changes, async (nowMs) => (await sql.get('SELECT 1 AS any FROM dav_locks WHERE expires_ms > ? LIMIT 1', [nowMs])) !== undefined)
      : undefined;
  }

  /** Rows of a lookup (live at `nowMs`), from memory when kept. */
  private async lookup(key: string, nowMs: number, read: (sql: Sql, nowMs: number) => Promise<LockRow[]>): Promise<LockRow[]> {
    if (!this.lookups) return read(this.sql, nowMs);
    return live(await this.lookups.rows(key, nowMs, () => read(this.sql, nowMs)), nowMs);
  }

  /** A write of this instance's: lookups kept from before it are dropped once it ended (committed or not). */
  private async writing<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } finally {
      this.lookups?.drop();
    }
  }

  async active(resource: string, nowMs: number): Promise<ActiveLock[]> {
    return (await this.lookup(`r ${resource}`, nowMs, (sql, now) => sql.all<LockRow>(`SELECT ${COLUMNS} FROM dav_locks l WHERE l.resource = ? AND l.expires_ms > ?`, [resource, now]))).map(toLock);
  }

  async covering(chain: readonly string[], nowMs: number): Promise<ActiveLock[]> {
    return orderCovering(chain, await this.lookup(`c ${chain.join(' ')}`, nowMs, (sql, now) => coveringRows(sql, chain, now)));
  }

  async below(id: string, nowMs: number): Promise<ActiveLock[]> {
    return (await this.lookup(`b ${id}`, nowMs, (sql, now) => belowRows(sql, id, now))).map(toLock);
  }

  async childrenOf(parent: string, nowMs: number): Promise<ActiveLock[]> {
    return (await this.lookup(`p ${parent}`, nowMs, (sql, now) => sql.all<LockRow>(`SELECT ${COLUMNS} FROM dav_locks l WHERE l.parent = ? AND l.expires_ms > ?`, [parent, now]))).map(toLock);
  }

  async get(token: string, nowMs: number): Promise<ActiveLock | undefined> {
    const [row] = await this.lookup(`t ${token}`, nowMs, (sql, now) => sql.all<LockRow>(`SELECT ${COLUMNS} FROM dav_locks l WHERE l.token = ? AND l.expires_ms > ?`, [token, now]));
    return row && toLock(row);
  }

  insert(lock: ActiveLock, nowMs: number): Promise<void> {
    return this.writing(() => this.insertLock(lock, nowMs));
  }

  private async insertLock(lock: ActiveLock, nowMs: number): Promise<void> {
    const weight = lockBytes(lock);
    const verdict = await this.sql.transaction(async (tx): Promise<Verdict> => {
      if (tx.dialect === 'postgres') await serialise(tx, lock.chain);
      const covering = await coveringIn(tx, lock.chain, nowMs);
      const below = lock.depth === 'infinity' ? await belowIn(tx, lock.resourceId, nowMs) : [];
      const conflicts = conflictsOf(lock, covering, below);
      if (conflicts.length > 0) return { kind: 'conflict', conflicts };

      let passed = budgetPassed(this.budgets, ...(await usageIn(tx, lock.principal)), weight);
      if (++this.insertsSinceSweep >= SWEEP_EVERY_LOCKS || passed !== undefined) {
        this.insertsSinceSweep = 0;
        await sweepIn(tx, nowMs);
        passed = budgetPassed(this.budgets, ...(await usageIn(tx, lock.principal)), weight);
      }
      if (passed !== undefined) return { kind: 'budget', passed };

      await tx.run(
        `INSERT INTO dav_locks (token, resource, parent, chain, root_href, scope, depth, owner_xml, principal, timeout_sec, created_ms, expires_ms, bytes)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [lock.token, lock.resourceId, parentOf(lock.chain), JSON.stringify(lock.chain), lock.rootHref, lock.scope, lock.depth, lock.ownerXml ?? null,
          lock.principal, lock.timeoutSec, nowMs, lock.expiresAtMs, weight],
      );
      await insertMembers(tx, lock.token, lock.chain);
      return { kind: 'inserted' };
    });
    if (verdict.kind === 'conflict') throw new LockError('conflict', 'the resource is locked', verdict.conflicts);
    if (verdict.kind === 'budget') throw budgetError(verdict.passed);
  }

  async refresh(token: string, renewal: LockRenewal, nowMs: number): Promise<ActiveLock | undefined> {
    return this.writing(() => this.sql.transaction(async (tx) => {
      const row = await tx.get<LockRow>(`SELECT ${COLUMNS} FROM dav_locks l WHERE l.token = ? AND l.expires_ms > ?`, [token, nowMs]);
      if (row === undefined) return undefined;
      const lock = toLock(row);
      const refreshed: ActiveLock = { ...lock, chain: [...renewal.chain], timeoutSec: renewal.timeoutSec, expiresAtMs: renewal.expiresAtMs };
      const chainChanged = JSON.stringify(lock.chain) !== JSON.stringify(refreshed.chain);
      await tx.run('UPDATE dav_locks SET timeout_sec = ?, expires_ms = ?, chain = ?, parent = ?, bytes = ? WHERE token = ?', [
        refreshed.timeoutSec, refreshed.expiresAtMs, JSON.stringify(refreshed.chain), parentOf(refreshed.chain), lockBytes(refreshed), token,
      ]);
      if (chainChanged) {
        await tx.run('DELETE FROM dav_lock_members WHERE token = ?', [token]);
        await insertMembers(tx, token, refreshed.chain);
      }
      return refreshed;
    }));
  }

  async remove(token: string, nowMs: number): Promise<ActiveLock | undefined> {
    return this.writing(() => this.sql.transaction(async (tx) => {
      const row = await tx.get<LockRow>(`SELECT ${COLUMNS} FROM dav_locks l WHERE l.token = ?`, [token]);
      if (row === undefined) return undefined;
      await tx.run('DELETE FROM dav_lock_members WHERE token = ?', [token]);
      await tx.run('DELETE FROM dav_locks WHERE token = ?', [token]);
      return row.expires_ms > nowMs ? toLock(row) : undefined;
    }));
  }

  async removeWithin(id: string, nowMs: number): Promise<ActiveLock[]> {
    return this.writing(() => this.sql.transaction(async (tx) => {
      const rows = await tx.all<LockRow>(
        `SELECT ${COLUMNS} FROM dav_lock_members m JOIN dav_locks l ON l.token = m.token WHERE m.member = ?`,
        [id],
      );
      if (rows.length === 0) return [];
      const tokens = inKeys(tx, rows.map((r) => r.token));
      await tx.run(`DELETE FROM dav_lock_members WHERE token ${tokens.clause}`, [tokens.param]);
      await tx.run(`DELETE FROM dav_locks WHERE token ${tokens.clause}`, [tokens.param]);
      return rows.filter((r) => r.expires_ms > nowMs).map(toLock);
    }));
  }

  async sweep(nowMs: number): Promise<number> {
    return this.writing(() => this.sql.transaction((tx) => sweepIn(tx, nowMs)));
  }

  async count(nowMs: number): Promise<number> {
    return Number((await this.sql.get<{ n: number }>('SELECT count(*) AS n FROM dav_locks WHERE expires_ms > ?', [nowMs]))?.n ?? 0);
  }
}

/**
 * PostgreSQL: queue behind any transaction taking a lock whose resource is this one, an
 * ancestor of it, or a descendant of it (the one that holds this resource in its chain).
 * Ancestors are taken root first, so two chains never wait on each other in opposite orders.
 */
async function serialise(tx: Sql, chain: readonly string[]): Promise<void> {
  const resource = chain[chain.length - 1] as string;
  const ancestors = [...new Set(chain.slice(0, -1))].filter((id) => id !== resource);
  for (const id of ancestors) await tx.get('SELECT pg_advisory_xact_lock_shared(?, hashtext(?)) AS locked', [ADVISORY_NAMESPACE, id]);
  await tx.get('SELECT pg_advisory_xact_lock(?, hashtext(?)) AS locked', [ADVISORY_NAMESPACE, resource]);
}

async function coveringIn(sql: Sql, chain: readonly string[], nowMs: number): Promise<ActiveLock[]> {
  return orderCovering(chain, await coveringRows(sql, chain, nowMs));
}

/** Rows of the locks on the chain's resources (coveringIn keeps those that cover its last). */
async function coveringRows(sql: Sql, chain: readonly string[], nowMs: number): Promise<LockRow[]> {
  if (chain.length === 0) return [];
  if (chain.length === 1) return sql.all<LockRow>(`SELECT ${COLUMNS} FROM dav_locks l WHERE l.resource = ? AND l.expires_ms > ?`, [chain[0], nowMs]);
  const keys = inKeys(sql, chain);
  return sql.all<LockRow>(`SELECT ${COLUMNS} FROM dav_locks l WHERE l.resource ${keys.clause} AND l.expires_ms > ?`, [keys.param, nowMs]);
}

/** The locks covering the chain's last resource: its own and every depth-infinity one above, root first, then by token (as the memory repository answers). */
function orderCovering(chain: readonly string[], rows: readonly LockRow[]): ActiveLock[] {
  const last = chain[chain.length - 1];
  const at = new Map(chain.map((id, i) => [id, i]));
  return rows
    .filter((r) => r.resource === last || r.depth === 'infinity')
    .sort((a, b) => (at.get(a.resource) as number) - (at.get(b.resource) as number) || (a.token < b.token ? -1 : 1))
    .map(toLock);
}

async function belowIn(sql: Sql, id: string, nowMs: number): Promise<ActiveLock[]> {
  return (await belowRows(sql, id, nowMs)).map(toLock);
}

function belowRows(sql: Sql, id: string, nowMs: number): Promise<LockRow[]> {
  return sql.all<LockRow>(
    `SELECT ${COLUMNS} FROM dav_lock_members m JOIN dav_locks l ON l.token = m.token WHERE m.member = ? AND l.resource <> ? AND l.expires_ms > ?`,
    [id, id, nowMs],
  );
}

async function insertMembers(tx: Sql, token: string, chain: readonly string[]): Promise<void> {
  const rows = keyRows(tx, [...new Set(chain)]);
  await tx.run(`INSERT INTO dav_lock_members (member, token) SELECT k, ? FROM ${rows.source}`, [token, rows.param]);
}

type Usage = { locks: number; bytes: number };

async function usageIn(tx: Sql, principal: string): Promise<[Usage, Usage]> {
  const rows = await tx.all<{ principal: string; locks: number; bytes: number }>(
    "SELECT principal, locks, bytes FROM dav_lock_usage WHERE principal IN ('', ?)",
    [principal],
  );
  const of = (p: string): Usage => {
    const row = rows.find((r) => r.principal === p);
    return { locks: Number(row?.locks ?? 0), bytes: Number(row?.bytes ?? 0) };
  };
  return [of(''), of(principal)];
}

async function sweepIn(tx: Sql, nowMs: number): Promise<number> {
  await tx.run('DELETE FROM dav_lock_members WHERE token IN (SELECT token FROM dav_locks WHERE expires_ms <= ?)', [nowMs]);
  return (await tx.run('DELETE FROM dav_locks WHERE expires_ms <= ?', [nowMs])).changes;
}
