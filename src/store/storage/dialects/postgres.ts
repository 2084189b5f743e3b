/**
 * The PostgreSQL dialect of the storage layer (sql.ts), over a `pg` pool: several driveway
 * instances share one database. Parameters written `?` or `@name` become `$n` (rewritten once per
 * distinct text, skipping quoted literals and identifiers). BIGINT and NUMERIC counts come back as
 * JavaScript numbers (times in milliseconds and byte counts stay far below 2^53).
 *
 * Transactions run SERIALIZABLE, so the rules written for SQLite's single writer (check, then
 * insert or update) hold between instances too; a serialization failure or deadlock rolls back
 * and runs `work` again, up to RETRIES times with a short random pause, then fails as unavailable.
 * A connection error, or a server that does not answer, is StorageUnavailableError (a 503 with
 * Retry-After upstream); the pool reconnects by itself when the server is back. `exclusively`
 * lends one connection under a session advisory lock (migrations: one instance at a time).
 */
import pg from 'pg';
import type { Logger } from '../../../common/logger.js';
import { PostgresChangeFeed } from './postgres-changes.js';
import { StorageUnavailableError } from '../../../contracts/storage-unavailable.js';
import { StorageConstraintError, type RunResult, type Sql, type SqlParams, type Storage, type TransactionOptions } from '../sql.js';

// int8 (BIGINT, COUNT) and numeric (SUM) as numbers, not strings.
pg.types.setTypeParser(20, (v: string) => Number(v));
pg.types.setTypeParser(1700, (v: string) => Number(v));

const RETRIES = 12;
/** The longest pause between two attempts (ms); attempt n waits a random share of min(2^n, this). */
const MAX_BACKOFF_MS = 100;
/**
 * Advisory-lock keys are 64-bit; this tag in the high bits keeps serializeOn's keys apart from
 * the WebDAV lock repository's (a shared key would only serialize more, never deadlock: these
 * are taken before a transaction starts, holding nothing).
 */
const SERIALIZE_SEED = 0x64726976;
/** After a first serialization failure a transaction retries in this lane, one at a time, so it cannot starve. */
const RETRY_LANE = 'driveway:retry-lane';

interface Rewritten {
  text: string;
  /** Positional: how many `?`; named: the names in `$n` order. */
  names: string[] | undefined;
  count: number;
  /**
   * A prepared statement's name: each pooled connection parses and plans the text once and then
   * only binds and executes it (a warm PROPFIND's lock lookup spent 94 % of its server time in
   * parse and bind before). Undefined for texts with many parameters (IN lists of every length
   * would each be kept, per connection).
   */
  statementName: string | undefined;
}

const rewrites = new Map<string, Rewritten>();
const REWRITE_CACHE_LIMIT = 2000;
const PREPARED_MAX_PARAMS = 16;
let statementCounter = 0;

/** `?` and `@name` to `$n`, leaving quoted strings, quoted identifiers and comments alone. */
export function rewritePlaceholders(text: string): Rewritten {
  const cached = rewrites.get(text);
  if (cached) return cached;
  let out = '';
  let count = 0;
  let names: string[] | undefined;
  const index = new Map<string, number>();
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === "'" || c === '"') {
      const end = text.indexOf(c, i + 1);
      const stop = end === -1 ? text.length : end;
      out += text.slice(i, stop + 1);
      i = stop;
    } else if (c === '-' && text[i + 1] === '-') {
      const end = text.indexOf('\n', i);
      const stop = end === -1 ? text.length : end;
      out += text.slice(i, stop);
      i = stop - 1;
    } else if (c === '?') {
      out += `$${++count}`;
    } else if (c === '@' && /[A-Za-z_]/.test(text[i + 1] ?? '')) {
      let j = i + 1;
      while (j < text.length && /\w/.test(text[j] as string)) j++;
      const name = text.slice(i + 1, j);
      names ??= [];
      let n = index.get(name);
      if (n === undefined) {
        names.push(name);
        n = names.length;
        index.set(name, n);
      }
      out += `$${n}`;
      i = j - 1;
    } else {
      out += c;
    }
  }
  if (names && count > 0) throw new Error(`storage: a statement mixes ? and @name parameters: ${text}`);
  const params = names ? names.length : count;
  // Names never repeat within the process, so a connection never sees one name with two texts.
  const rewritten = { text: out, names, count: params, statementName: params <= PREPARED_MAX_PARAMS ? `dw${++statementCounter}` : undefined };
  if (rewrites.size >= REWRITE_CACHE_LIMIT) rewrites.clear();
  rewrites.set(text, rewritten);
  return rewritten;
}

function values(rewritten: Rewritten, params: SqlParams | undefined): unknown[] {
  if (params === undefined) return [];
  if (Array.isArray(params)) return (params as unknown[]).map(toPg);
  const named = params as Record<string, unknown>;
  return (rewritten.names ?? []).map((name) => {
    if (!(name in named)) throw new Error(`storage: missing parameter @${name}`);
    return toPg(named[name]);
  });
}

/** What better-sqlite3 accepts and pg would send differently: Buffers go as bytea, bigint as text. */
function toPg(value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

const CONSTRAINTS: Record<string, StorageConstraintError['constraint']> = { '23505': 'unique', '23503': 'foreign-key', '23514': 'check', '23502': 'not-null' };
const RETRYABLE = new Set(['40001', '40P01']);
/** Node's socket errors: the server is not there (yet, or any more). */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);

function translate(err: unknown): unknown {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    const constraint = CONSTRAINTS[code];
    if (constraint) return new StorageConstraintError((err as Error).message, constraint, { cause: err });
    // Class 08: connection exceptions; 57P0x: the server is shutting down or restarting; 53: out of resources.
    // 57014: statement_timeout cancelled it (a server too slow to answer counts as unavailable).
    if (code === '57014' || code.startsWith('08') || code.startsWith('57P') || code.startsWith('53') || NETWORK_CODES.has(code)) {
      return new StorageUnavailableError(`database unavailable: ${(err as Error).message}`, { cause: err });
    }
    return err;
  }
  if (err instanceof Error && /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client was closed/i.test(err.message)) {
    return new StorageUnavailableError(`database unavailable: ${err.message}`, { cause: err });
  }
  return err;
}

type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

async function query(target: Queryable, text: string, params: SqlParams | undefined): Promise<pg.QueryResult> {
  const rewritten = rewritePlaceholders(text);
  try {
    const args = values(rewritten, params);
    return await (rewritten.statementName ? target.query({ name: rewritten.statementName, text: rewritten.text, values: args }) : target.query(rewritten.text, args));
  } catch (err) {
    throw translate(err);
  }
}

function statements(target: () => Queryable): Pick<Sql, 'get' | 'all' | 'run' | 'exec'> {
  return {
    get: async <T>(text: string, params?: SqlParams) => (await query(target(), text, params)).rows[0] as T | undefined,
    all: async <T>(text: string, params?: SqlParams) => (await query(target(), text, params)).rows as T[],
    run: async (text: string, params?: SqlParams): Promise<RunResult> => ({ changes: (await query(target(), text, params)).rowCount ?? 0 }),
    exec: async (text: string) => {
      try {
        await target().query(text);
      } catch (err) {
        throw translate(err);
      }
    },
  };
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface PostgresOptions {
  /** Connections in the pool (default 10). */
  maxConnections?: number;
  /** How long a query may wait for a connection before the database counts as unavailable (ms, default 5000). */
  connectTimeoutMs?: number;
  /**
   * A statement running longer fails as unavailable (ms, default 30000): the server cancels it
   * (statement_timeout) and the client stops waiting a second later (query_timeout), so a server
   * that went silent never hangs a request. 0: no bound (migrations).
   */
  queryTimeoutMs?: number;
  /** Where the change feed says that it lost PostgreSQL and that it listens again (once each). */
  log?: Logger;
}

/** Marks the transaction as the in-process bridge's, for the triggers of migration 038. */
const MARK_BRIDGE_WRITE = "SELECT set_config('driveway.writer', 'bridge', true)";

export class PostgresStorage implements Storage {
  readonly dialect = 'postgres' as const;
  readonly sql: Sql;
  readonly pool: pg.Pool;
  /** Backend process ids of the pool's connections: notifications they sent are this instance's own. */
  private readonly backends = new Set<number>();
  private feed: PostgresChangeFeed | undefined;
  private readonly log: Logger | undefined;

  constructor(
    private readonly url: string,
    options: PostgresOptions = {},
  ) {
    this.log = options.log;
    const queryTimeoutMs = options.queryTimeoutMs ?? 30_000;
    this.pool = new pg.Pool({
      connectionString: url,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      ...(queryTimeoutMs > 0 ? { statement_timeout: queryTimeoutMs, query_timeout: queryTimeoutMs + 1000 } : {}),
      // A peer that vanished without a FIN (a dead host, a cut network) is noticed by TCP.
      keepAlive: true,
    });
    // An idle client whose server went away emits 'error' on the pool; without a listener it would end the process.
    this.pool.on('error', () => undefined);
    const pidOf = (client: pg.PoolClient): number | undefined => (client as unknown as { processID?: number }).processID;
    this.pool.on('connect', (client) => {
      const pid = pidOf(client);
      if (pid !== undefined) this.backends.add(pid);
    });
    this.pool.on('remove', (client) => {
      const pid = pidOf(client);
      if (pid !== undefined) this.backends.delete(pid);
    });
    this.sql = { dialect: 'postgres', inTransaction: false, ...statements(() => this.pool), transaction: (work, options) => this.begin(work, options) };
  }

  /**
   * One transaction, retried on serialization failures and deadlocks. Keys of `serializeOn` are
   * session advisory locks taken, in a fixed order, before BEGIN (so before the snapshot: a
   * transaction that waited sees what the one before it committed) and released after COMMIT or
   * ROLLBACK; a connection that cannot release them is discarded, which releases them too.
   * `session`: run on that connection (exclusively's) instead of one from the pool.
   */
  private async begin<T>(work: (tx: Sql) => Promise<T>, options: TransactionOptions = {}, session?: pg.PoolClient): Promise<T> {
    let keys = [...new Set(options.serializeOn ?? [])].sort();
    for (let attempt = 1; ; attempt++) {
      let client: pg.PoolClient;
      try {
        client = session ?? (await this.pool.connect());
      } catch (err) {
        throw translate(err);
      }
      let open = true;
      let broken = false;
      let held: string[] = [];
      const advisory = (fn: string, key: string): string => `SELECT ${fn}(hashtextextended(${client.escapeLiteral(key)}, ${SERIALIZE_SEED}))`;
      try {
        // The bridge's own transaction says so in the same message (migration 038: its folder
        // announcements are `local`).
        const begin = options.local ? `BEGIN ISOLATION LEVEL SERIALIZABLE; ${MARK_BRIDGE_WRITE}` : 'BEGIN ISOLATION LEVEL SERIALIZABLE';
        if (keys.length === 0) {
          await client.query(begin);
        } else {
          // ONE round trip for the locks and BEGIN (a small upload's transaction is a few round
          // trips, each as dear as its statements): the locks are taken in a short transaction
          // of their own (session locks outlive its COMMIT) and only then does the real one
          // begin, so its snapshot is taken after the wait. Should that message fail partway,
          // the connection is discarded, which drops whatever it took.
          broken = true;
          await client.query(['BEGIN', ...keys.map((key) => advisory('pg_advisory_lock', key)), 'COMMIT', begin].join('; '));
          broken = false;
          held = keys;
        }
        const result = await work(this.handle(client, () => open));
        if (held.length === 0) {
          await client.query('COMMIT');
        } else {
          // COMMIT and the unlocks in one message; a failed COMMIT skips the unlocks (finally does them).
          await client.query(['COMMIT', ...[...held].reverse().map((key) => advisory('pg_advisory_unlock', key))].join('; '));
          held = [];
        }
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        const code = (err as { code?: unknown; cause?: { code?: unknown } }).code ?? (err as { cause?: { code?: unknown } }).cause?.code;
        if (typeof code === 'string' && RETRYABLE.has(code)) {
          if (attempt < RETRIES) {
            await pause(Math.random() * Math.min(2 ** attempt, MAX_BACKOFF_MS));
            if (!keys.includes(RETRY_LANE)) keys = [RETRY_LANE, ...keys].sort();
            continue;
          }
          throw new StorageUnavailableError('database busy: a transaction kept conflicting with others', { cause: err });
        }
        throw translate(err);
      } finally {
        open = false;
        for (const key of [...held].reverse()) {
          if (broken) break;
          await client.query(advisory('pg_advisory_unlock', key)).catch(() => {
            broken = true;
          });
        }
        // A session's connection goes back with its owner (exclusively), which finds it broken then.
        if (!session) client.release(broken);
      }
    }
  }

  /**
   * Storage.exclusively: one connection out of the pool for the whole of `work`, the session
   * advisory lock `lock` taken on it first (waiting as long as another holder works: the pool's
   * statement bound, when set, ends the wait as unavailable), released after. Every statement and
   * transaction of the handle `work` gets runs on that connection, transactions as `begin` runs
   * them (SERIALIZABLE, retried). A connection that cannot unlock is discarded, which unlocks.
   */
  async exclusively<T>(lock: number, work: (sql: Sql) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw translate(err);
    }
    let open = true;
    let locked = false;
    let broken = false;
    try {
      try {
        await client.query('SELECT pg_advisory_lock($1)', [lock]);
      } catch (err) {
        broken = true;
        throw translate(err);
      }
      locked = true;
      const session = (): pg.PoolClient => {
        if (!open) throw new Error('storage: an exclusive handle used after its work ended');
        return client;
      };
      return await work({ dialect: 'postgres', inTransaction: false, ...statements(session), transaction: (inner, options) => this.begin(inner, options, session()) });
    } finally {
      open = false;
      if (locked) {
        await client.query('SELECT pg_advisory_unlock($1)', [lock]).catch(() => {
          broken = true;
        });
      }
      client.release(broken);
    }
  }

  private handle(client: pg.PoolClient, isOpen: () => boolean): Sql {
    let savepoints = 0;
    const target = (): Queryable => {
      if (!isOpen()) throw new Error('storage: a transaction handle used after its transaction ended');
      return client;
    };
    const handle: Sql = {
      dialect: 'postgres',
      inTransaction: true,
      ...statements(target),
      transaction: async (work) => {
        const name = `sp${++savepoints}`;
        await target().query(`SAVEPOINT ${name}`);
        try {
          const result = await work(handle);
          await client.query(`RELEASE SAVEPOINT ${name}`);
          return result;
        } catch (err) {
          await client.query(`ROLLBACK TO SAVEPOINT ${name}`);
          throw err;
        }
      },
    };
    return handle;
  }

  async schemaVersion(): Promise<number> {
    const row = await this.sql.get<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_migrations');
    return row?.v ?? 0;
  }

  /** What changed in the database, from any instance (listening starts with the first subscriber). */
  get changes(): PostgresChangeFeed {
    this.feed ??= new PostgresChangeFeed(this.url, {
      ownBackends: this.backends,
      onState: (state, err) => {
        if (state === 'lost') {
          this.log?.warn({ cause: err instanceof Error ? err.message : undefined }, "the change feed lost PostgreSQL: other instances' writes reach this one's caches only as they expire, until it listens again");
        } else this.log?.info('the change feed listens again: every cache starts over');
      },
    });
    return this.feed;
  }

  async close(): Promise<void> {
    await this.feed?.close();
    await this.pool.end();
  }
}
