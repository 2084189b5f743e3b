/**
 * WebDAV write locks (RFC 4918 §6, §7, §9.10, §9.11), keyed by resource id: the bridge passes
 * node UUIDs, so a lock taken through one path or by one user is seen through every path and by
 * every user of the same node. Owns the rules (timeouts, token, scope and creator checks, what
 * blocks a write); the state, its conflicts, expiry and budgets live in a LockRepository
 * (lock-repository.ts: in memory, or in the shared database so that every instance agrees).
 * Makes no store calls and knows no paths beyond the root href it is given to echo.
 *
 * Callers describe a resource by its id chain, root first: `[top-level id, ..., resource id]`.
 * Depth-infinity locks of ancestors are found through that chain; locks below a resource are
 * found through the chain each lock recorded when it was taken (a descendant of X is any lock
 * whose chain contains X). A node moved by someone else behind the bridge leaves a stale chain;
 * the bridge's own MOVE and DELETE drop the locks under the moved node (`dropLocksUnder`).
 *
 * webdav-server 2.6.3 ties lock ownership to the user, so the same account may overwrite a
 * locked file without the token (litmus notowner_modify, notowner_lock: docs/client-quirks.md §0). Here a
 * lock is satisfied only by its token (RFC 4918 §6.4, §10.4.1); callers that pass a principal
 * also get §6.4's check that the submitter is the lock's creator.
 */
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../common/clock.js';
import { LockError, MemoryLockRepository, type ActiveLock, type LockBudgets, type LockRepository, type LockRequest } from './lock-repository.js';

export { LockError, type ActiveLock, type LockDepth, type LockErrorKind, type LockRequest, type LockScope } from './lock-repository.js';

export interface LockStoreOptions extends Partial<LockBudgets> {
  clock?: Clock;
  /**
   * Where the locks live; by default in this process's memory (MemoryLockRepository, with the
   * budgets given here). A SqlLockRepository shares them with every instance over one database.
   */
  repository?: LockRepository;
  /**
   * Longest timeout granted; `Infinite` and longer requests become this. Default one hour
   * (config `bridge.lockMaxTimeoutSec`; sabre/dav-based servers cap the same way): a lock
   * whose client went away blocks writers for an hour at most, and clients refresh.
   */
  maxTimeoutSec?: number;
  /** Timeout when the client asks for none or for nothing parseable. Default one hour. */
  defaultTimeoutSec?: number;
  /** Bytes of UTF-8 in a DAV:owner element. Default 16 KiB. */
  maxOwnerXmlBytes?: number;
  /** Token generator; tests may make it deterministic. */
  newToken?: () => string;
}

export interface ModifyCheckOptions {
  /** When given, a presented token counts only if this principal took its lock (RFC 4918 §6.4). */
  principal?: string;
  /** Also require the locks below the resource (DELETE, MOVE of a collection: RFC 4918 §9.6.1, §9.9.2). */
  includeDescendants?: boolean;
}

/**
 * The locks a Depth 0 or 1 PROPFIND shows, read once: those covering the resource and those
 * rooted at its direct children. `covering` answers for the resource and its children only.
 */
export class LockView {
  constructor(
    private readonly chain: readonly string[],
    private readonly coveringSelf: readonly ActiveLock[],
    private readonly rootedAtChildren: readonly ActiveLock[],
  ) {}

  get isEmpty(): boolean {
    return this.coveringSelf.length === 0 && this.rootedAtChildren.length === 0;
  }

  /** Locks covering the resource at the end of `chain`: the viewed resource or one of its children. */
  covering(chain: readonly string[]): ActiveLock[] {
    if (chain.length === this.chain.length) return [...this.coveringSelf];
    const child = chain[chain.length - 1];
    return [...this.coveringSelf.filter((l) => l.depth === 'infinity'), ...this.rootedAtChildren.filter((l) => l.resourceId === child)];
  }
}

const HOUR_SEC = 3600;

/**
 * Parses a Timeout header (RFC 4918 §10.7): `Second-600`, `Infinite`, or a list of them in the
 * client's order of preference. The first understood entry wins; Infinite and anything over
 * `maxSec` become `maxSec`; below 1 s becomes 1 s; no understood entry gives `defaultSec`.
 */
export function parseTimeout(value: string | undefined, defaultSec: number, maxSec: number): number {
  if (value !== undefined) {
    for (const raw of value.split(',')) {
      const entry = raw.trim();
      if (/^infinite$/i.test(entry)) return maxSec;
      const match = /^second-(\d+)$/i.exec(entry);
      if (match) return clamp(Number(match[1] as string), 1, maxSec);
    }
  }
  return clamp(defaultSec, 1, maxSec);
}

function clamp(value: number, min: number, max: number): number {
  if (!Number.isFinite(value)) return max;
  return Math.min(max, Math.max(min, Math.floor(value)));
}

/** Seconds left on a lock, rounded up, for the DAV:timeout of lockdiscovery (never below 0). */
export function remainingSec(lock: ActiveLock, nowMs: number): number {
  return Math.max(0, Math.ceil((lock.expiresAtMs - nowMs) / 1000));
}

export class LockStore {
  private readonly clock: Clock;
  readonly repository: LockRepository;
  readonly maxTimeoutSec: number;
  readonly defaultTimeoutSec: number;
  private readonly maxOwnerXmlBytes: number;
  private readonly newToken: () => string;

  constructor(options: LockStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.repository = options.repository ?? new MemoryLockRepository(options);
    this.maxTimeoutSec = options.maxTimeoutSec ?? HOUR_SEC;
    this.defaultTimeoutSec = Math.min(options.defaultTimeoutSec ?? 3600, this.maxTimeoutSec);
    this.maxOwnerXmlBytes = options.maxOwnerXmlBytes ?? 16 * 1024;
    this.newToken = options.newToken ?? (() => `opaquelocktoken:${randomUUID()}`);
  }

  /** `parseTimeout` with this store's default and cap. */
  parseTimeout(header: string | undefined): number {
    return parseTimeout(header, this.defaultTimeoutSec, this.maxTimeoutSec);
  }

  /** How many locks are active. */
  count(): Promise<number> {
    return this.repository.count(this.clock.now());
  }

  /** The active lock with this token, if any. */
  get(token: string): Promise<ActiveLock | undefined> {
    return this.repository.get(token, this.clock.now());
  }

  /**
   * Locks whose scope includes the resource at the end of `chain`: its own, and depth-infinity
   * locks of its ancestors (RFC 4918 §6.1). What lockdiscovery lists and what If state tokens match.
   */
  locksCovering(chain: readonly string[]): Promise<ActiveLock[]> {
    return this.repository.covering(chain, this.clock.now());
  }

  /** Locks rooted strictly below the resource `id`, found through their recorded chains. */
  locksBelow(id: string): Promise<ActiveLock[]> {
    return this.repository.below(id, this.clock.now());
  }

  /** What lockdiscovery shows for the resource at the end of `chain` and, with `children`, for its members. */
  async view(chain: readonly string[], children: boolean): Promise<LockView> {
    const now = this.clock.now();
    const [covering, below] = await Promise.all([
      this.repository.covering(chain, now),
      children && chain.length > 0 ? this.repository.childrenOf(chain[chain.length - 1] as string, now) : Promise.resolve([]),
    ]);
    return new LockView(chain, covering, below);
  }

  /**
   * Takes a lock (RFC 4918 §9.10). An exclusive lock conflicts with any lock covering the
   * resource; a shared one with an exclusive one; a depth-infinity lock also with locks below.
   * Throws LockError: 'conflict' (with the conflicting locks), 'too-many-locks',
   * 'owner-too-large', 'invalid-request'.
   */
  async lock(request: LockRequest): Promise<ActiveLock> {
    const { chain } = request;
    if (chain.length === 0 || chain.some((id) => id === '')) throw new LockError('invalid-request', 'empty resource chain');
    if (request.principal === '') throw new LockError('invalid-request', 'empty principal');
    if (request.ownerXml !== undefined && Buffer.byteLength(request.ownerXml, 'utf8') > this.maxOwnerXmlBytes) {
      throw new LockError('owner-too-large', `DAV:owner is larger than ${this.maxOwnerXmlBytes} bytes`);
    }
    const now = this.clock.now();
    const timeoutSec = clamp(request.timeoutSec, 1, this.maxTimeoutSec);
    const lock: ActiveLock = {
      token: this.newToken(),
      resourceId: chain[chain.length - 1] as string,
      chain: [...chain],
      rootHref: request.rootHref,
      scope: request.scope,
      depth: request.depth,
      ownerXml: request.ownerXml,
      principal: request.principal,
      timeoutSec,
      expiresAtMs: now + timeoutSec * 1000,
    };
    await this.repository.insert(lock, now);
    return lock;
  }

  /**
   * Refreshes a lock (RFC 4918 §9.10.2): restarts its timeout. With `chain`, the resource the
   * request names must be within the lock's scope (litmus indirect_refresh refreshes a collection
   * lock through a member); refreshing at the lock root also updates the recorded chain.
   * Throws LockError 'no-such-lock', 'not-in-scope', 'not-owner'.
   */
  async refresh(token: string, chain: readonly string[] | undefined, timeoutSec: number, principal?: string): Promise<ActiveLock> {
    const lock = await this.requireLock(token, chain, principal);
    const granted = clamp(timeoutSec, 1, this.maxTimeoutSec);
    const now = this.clock.now();
    const refreshed = await this.repository.refresh(
      token,
      {
        chain: chain !== undefined && chain[chain.length - 1] === lock.resourceId ? [...chain] : lock.chain,
        timeoutSec: granted,
        expiresAtMs: now + granted * 1000,
      },
      now,
    );
    if (refreshed === undefined) throw new LockError('no-such-lock', 'no active lock has this token');
    return refreshed;
  }

  /**
   * Removes a lock (RFC 4918 §9.11): the resource at the end of `chain` must be within its scope.
   * Throws LockError 'no-such-lock', 'not-in-scope', 'not-owner'.
   */
  async unlock(token: string, chain: readonly string[], principal?: string): Promise<ActiveLock> {
    await this.requireLock(token, chain, principal);
    const removed = await this.repository.remove(token, this.clock.now());
    if (removed === undefined) throw new LockError('no-such-lock', 'no active lock has this token');
    return removed;
  }

  /**
   * Locks that stop a write to the resource at the end of `chain` by a request presenting
   * `presentedTokens` (the If header's lock tokens): empty when it may proceed. A resource is
   * writable when no lock covers it or one covering lock is satisfied (RFC 4918 §6.2: any holder
   * of a shared lock may write; an exclusive lock is always the only lock covering a resource).
   * With includeDescendants, every locked resource below must be writable the same way.
   */
  async blockingLocks(chain: readonly string[], presentedTokens: Iterable<string>, options: ModifyCheckOptions = {}): Promise<ActiveLock[]> {
    const presented = presentedTokens instanceof Set ? (presentedTokens as ReadonlySet<string>) : new Set(presentedTokens);
    const satisfied = (lock: ActiveLock): boolean =>
      presented.has(lock.token) && (options.principal === undefined || lock.principal === options.principal);
    const now = this.clock.now();
    const blocking: ActiveLock[] = [];
    const covering = await this.repository.covering(chain, now);
    if (covering.length > 0 && !covering.some(satisfied)) blocking.push(...covering);
    if (options.includeDescendants && chain.length > 0) {
      const checked = new Set<string>();
      for (const below of await this.repository.below(chain[chain.length - 1] as string, now)) {
        if (checked.has(below.resourceId)) continue;
        checked.add(below.resourceId);
        const coveringBelow = await this.repository.covering(below.chain, now);
        if (!coveringBelow.some(satisfied)) {
          for (const lock of coveringBelow) if (!blocking.some((b) => b.token === lock.token)) blocking.push(lock);
        }
      }
    }
    return blocking;
  }

  /** True when `blockingLocks` is empty. */
  async canModify(chain: readonly string[], presentedTokens: Iterable<string>, options: ModifyCheckOptions = {}): Promise<boolean> {
    return (await this.blockingLocks(chain, presentedTokens, options)).length === 0;
  }

  /**
   * Drops the locks rooted at `id` and below it (after DELETE, or on the source of a MOVE: locks
   * do not move with a resource, RFC 4918 §9.9.1). Returns what was dropped.
   */
  dropLocksUnder(id: string): Promise<ActiveLock[]> {
    return this.repository.removeWithin(id, this.clock.now());
  }

  /** Removes expired locks. The repository also does so by itself every few hundred LOCKs and when a budget looks full. */
  sweepExpired(): Promise<number> {
    return this.repository.sweep(this.clock.now());
  }

  private async requireLock(token: string, chain: readonly string[] | undefined, principal: string | undefined): Promise<ActiveLock> {
    const lock = await this.get(token);
    if (lock === undefined) throw new LockError('no-such-lock', 'no active lock has this token');
    if (chain !== undefined) {
      const at = chain.lastIndexOf(lock.resourceId);
      const inScope = at === chain.length - 1 || (at >= 0 && lock.depth === 'infinity');
      if (!inScope) throw new LockError('not-in-scope', 'the resource is not within the scope of this lock');
    }
    if (principal !== undefined && lock.principal !== principal) {
      throw new LockError('not-owner', 'the lock belongs to another user');
    }
    return lock;
  }
}
