/**
 * WebDAV write locks (RFC 4918 §6, §7, §9.10, §9.11), in memory, keyed by resource id: the
 * bridge passes node UUIDs, so a lock taken through one path or by one user is seen through
 * every path and by every user of the same node. Owns lock state, conflicts, expiry and token
 * checks; makes no store calls and knows no paths beyond the root href it is given to echo.
 *
 * Callers describe a resource by its id chain, root first: `[top-level id, ..., resource id]`.
 * Depth-infinity locks of ancestors are found through that chain; locks below a resource are
 * found through the chain each lock recorded when it was taken (a descendant of X is any lock
 * whose chain contains X). A node moved by someone else behind the bridge leaves a stale chain;
 * the bridge's own MOVE and DELETE drop the locks under the moved node (`dropLocksUnder`).
 *
 * webdav-server 2.6.3 ties lock ownership to the user, so the same account may overwrite a
 * locked file without the token (litmus notowner_modify, notowner_lock: CLIENT-QUIRKS §0). Here a
 * lock is satisfied only by its token (RFC 4918 §6.4, §10.4.1); callers that pass a principal
 * also get §6.4's check that the submitter is the lock's creator.
 */
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../common/clock.js';

export type LockScope = 'exclusive' | 'shared';
export type LockDepth = '0' | 'infinity';

export interface LockRequest {
  /** Id chain root..resource; the last id is locked. */
  readonly chain: readonly string[];
  /** Encoded href of the lock root as requested, for DAV:lockroot (RFC 4918 §14.12). */
  readonly rootHref: string;
  readonly scope: LockScope;
  readonly depth: LockDepth;
  /** The client's DAV:owner element, serialized verbatim; undefined when it sent none. */
  readonly ownerXml: string | undefined;
  /** Who took the lock (the bridge passes the store user id). */
  readonly principal: string;
  /** Requested timeout in seconds (from `parseTimeout`); capped at maxTimeoutSec. */
  readonly timeoutSec: number;
}

/** A granted lock: the request as granted (timeout capped) plus its token and expiry. */
export interface ActiveLock extends LockRequest {
  /** `opaquelocktoken:<uuid>` (RFC 4918 §20.1 scheme); the only proof of ownership. */
  readonly token: string;
  /** The locked resource (the lock root): the last id of `chain`. */
  readonly resourceId: string;
  readonly expiresAtMs: number;
}

export type LockErrorKind =
  | 'conflict'        // 423 + DAV:no-conflicting-lock (RFC 4918 §9.10.6)
  | 'no-such-lock'    // unknown or expired token: refresh 412, UNLOCK 409 (DAV:lock-token-matches-request-uri)
  | 'not-in-scope'    // the resource is not within the lock: refresh 412, UNLOCK 409 (§9.11.1)
  | 'not-owner'       // another principal's lock: 403 (§6.4)
  | 'too-many-locks'  // memory bound reached: 503
  | 'owner-too-large' // DAV:owner bigger than allowed: 400
  | 'invalid-request';// empty chain, bad root: a bridge bug, 500

export class LockError extends Error {
  constructor(
    readonly kind: LockErrorKind,
    message: string,
    /** For 'conflict': the locks in the way (their rootHref goes into no-conflicting-lock). */
    readonly conflicts: readonly ActiveLock[] = [],
  ) {
    super(message);
    this.name = 'LockError';
  }
}

export interface LockStoreOptions {
  clock?: Clock;
  /**
   * Longest timeout granted; `Infinite` and longer requests become this. Default one hour
   * (config `bridge.lockMaxTimeoutSec`; sabre/dav-based servers cap the same way): a lock
   * whose client went away blocks writers for an hour at most, and clients refresh.
   */
  maxTimeoutSec?: number;
  /** Timeout when the client asks for none or for nothing parseable. Default one hour. */
  defaultTimeoutSec?: number;
  /** Active locks kept at most, over all principals. Default 100 000. */
  maxLocks?: number;
  /** Active locks one principal may hold. Default 20 000 (davfs2 locks every file it writes). */
  maxLocksPerPrincipal?: number;
  /** Bytes of UTF-8 in a DAV:owner element. Default 16 KiB. */
  maxOwnerXmlBytes?: number;
  /**
   * What the active locks may weigh together in memory (lockBytes). Default 32 MiB: counts
   * alone would let 100,000 locks with 16 KiB owners hold 3 GiB.
   */
  maxBytes?: number;
  /**
   * What one principal's locks may weigh. Default a fifth of maxBytes (as 20,000 of 100,000
   * locks), so that nobody alone fills the budget and blocks LOCK for everyone.
   */
  maxBytesPerPrincipal?: number;
  /** Token generator; tests may make it deterministic. */
  newToken?: () => string;
}


export interface ModifyCheckOptions {
  /** When given, a presented token counts only if this principal took its lock (RFC 4918 §6.4). */
  principal?: string;
  /** Also require the locks below the resource (DELETE, MOVE of a collection: RFC 4918 §9.6.1, §9.9.2). */
  includeDescendants?: boolean;
}

const HOUR_SEC = 3600;
const SWEEP_EVERY_LOCKS = 256;

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
  readonly maxTimeoutSec: number;
  readonly defaultTimeoutSec: number;
  private readonly maxLocks: number;
  private readonly maxLocksPerPrincipal: number;
  private readonly maxOwnerXmlBytes: number;
  private readonly maxBytes: number;
  private readonly maxBytesPerPrincipal: number;
  private readonly newToken: () => string;
  /** lockBytes() of the active locks. */
  private bytes = 0;

  private readonly byToken = new Map<string, ActiveLock>();
  /** resource id -> tokens of locks rooted there */
  private readonly byRoot = new Map<string, Set<string>>();
  /** id -> tokens of locks whose recorded chain contains it (the lock root included) */
  private readonly byChainMember = new Map<string, Set<string>>();
  /** principal -> how many active locks it holds, and their lockBytes() */
  private readonly perPrincipal = new Map<string, { count: number; bytes: number }>();
  private locksSinceSweep = 0;

  constructor(options: LockStoreOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.maxTimeoutSec = options.maxTimeoutSec ?? HOUR_SEC;
    this.defaultTimeoutSec = Math.min(options.defaultTimeoutSec ?? 3600, this.maxTimeoutSec);
    this.maxLocks = options.maxLocks ?? 100_000;
    this.maxLocksPerPrincipal = options.maxLocksPerPrincipal ?? 20_000;
    this.maxOwnerXmlBytes = options.maxOwnerXmlBytes ?? 16 * 1024;
    this.maxBytes = options.maxBytes ?? 32 * 1024 * 1024;
    this.maxBytesPerPrincipal = options.maxBytesPerPrincipal ?? Math.floor(this.maxBytes / 5);
    this.newToken = options.newToken ?? (() => `opaquelocktoken:${randomUUID()}`);
  }

  /** `parseTimeout` with this store's default and cap. */
  parseTimeout(header: string | undefined): number {
    return parseTimeout(header, this.defaultTimeoutSec, this.maxTimeoutSec);
  }

  /** Active (unexpired) locks. */
  get size(): number {
    return this.byToken.size;
  }

  /** The active lock with this token, if any. */
  get(token: string): ActiveLock | undefined {
    const lock = this.byToken.get(token);
    if (lock === undefined) return undefined;
    if (this.isExpired(lock)) {
      this.remove(lock);
      return undefined;
    }
    return lock;
  }

  /**
   * Locks whose scope includes the resource at the end of `chain`: its own, and depth-infinity
   * locks of its ancestors (RFC 4918 §6.1). What lockdiscovery lists and what If state tokens match.
   */
  locksCovering(chain: readonly string[]): ActiveLock[] {
    const out: ActiveLock[] = [];
    const last = chain.length - 1;
    for (let i = 0; i <= last; i++) {
      for (const lock of this.rootedAt(chain[i] as string)) {
        if (i === last || lock.depth === 'infinity') out.push(lock);
      }
    }
    return out;
  }

  /** Locks rooted strictly below the resource `id`, found through their recorded chains. */
  locksBelow(id: string): ActiveLock[] {
    const out: ActiveLock[] = [];
    for (const lock of this.withChainMember(id)) if (lock.resourceId !== id) out.push(lock);
    return out;
  }

  /**
   * Takes a lock (RFC 4918 §9.10). An exclusive lock conflicts with any lock covering the
   * resource; a shared one with an exclusive one; a depth-infinity lock also with locks below.
   * Throws LockError: 'conflict' (with the conflicting locks), 'too-many-locks',
   * 'owner-too-large', 'invalid-request'.
   */
  lock(request: LockRequest): ActiveLock {
    const { chain } = request;
    if (chain.length === 0 || chain.some((id) => id === '')) throw new LockError('invalid-request', 'empty resource chain');
    if (request.principal === '') throw new LockError('invalid-request', 'empty principal');
    if (request.ownerXml !== undefined && Buffer.byteLength(request.ownerXml, 'utf8') > this.maxOwnerXmlBytes) {
      throw new LockError('owner-too-large', `DAV:owner is larger than ${this.maxOwnerXmlBytes} bytes`);
    }
    const resourceId = chain[chain.length - 1] as string;
    const inTheWay = this.locksCovering(chain);
    if (request.depth === 'infinity') inTheWay.push(...this.locksBelow(resourceId));
    const conflicts = request.scope === 'exclusive' ? inTheWay : inTheWay.filter((l) => l.scope === 'exclusive');
    if (conflicts.length > 0) throw new LockError('conflict', 'the resource is locked', conflicts);

    const weight = lockBytes(request);
    const full = (): boolean => this.byToken.size >= this.maxLocks || this.bytes + weight > this.maxBytes;
    if (++this.locksSinceSweep >= SWEEP_EVERY_LOCKS || full()) this.sweepExpired();
    if (full()) throw new LockError('too-many-locks', 'too many active locks');
    const held = this.perPrincipal.get(request.principal) ?? { count: 0, bytes: 0 };
    if (held.count >= this.maxLocksPerPrincipal || held.bytes + weight > this.maxBytesPerPrincipal) {
      throw new LockError('too-many-locks', 'too many active locks for this user');
    }

    const timeoutSec = clamp(request.timeoutSec, 1, this.maxTimeoutSec);
    const lock: ActiveLock = {
      token: this.newToken(),
      resourceId,
      chain: [...chain],
      rootHref: request.rootHref,
      scope: request.scope,
      depth: request.depth,
      ownerXml: request.ownerXml,
      principal: request.principal,
      timeoutSec,
      expiresAtMs: this.clock.now() + timeoutSec * 1000,
    };
    this.insert(lock);
    return lock;
  }

  /**
   * Refreshes a lock (RFC 4918 §9.10.2): restarts its timeout. With `chain`, the resource the
   * request names must be within the lock's scope (litmus indirect_refresh refreshes a collection
   * lock through a member); refreshing at the lock root also updates the recorded chain.
   * Throws LockError 'no-such-lock', 'not-in-scope', 'not-owner'.
   */
  refresh(token: string, chain: readonly string[] | undefined, timeoutSec: number, principal?: string): ActiveLock {
    const lock = this.requireLock(token, chain, principal);
    const granted = clamp(timeoutSec, 1, this.maxTimeoutSec);
    const refreshed: ActiveLock = {
      ...lock,
      chain: chain !== undefined && chain[chain.length - 1] === lock.resourceId ? [...chain] : lock.chain,
      timeoutSec: granted,
      expiresAtMs: this.clock.now() + granted * 1000,
    };
    this.remove(lock);
    this.insert(refreshed);
    return refreshed;
  }

  /**
   * Removes a lock (RFC 4918 §9.11): the resource at the end of `chain` must be within its scope.
   * Throws LockError 'no-such-lock', 'not-in-scope', 'not-owner'.
   */
  unlock(token: string, chain: readonly string[], principal?: string): ActiveLock {
    const lock = this.requireLock(token, chain, principal);
    this.remove(lock);
    return lock;
  }

  /**
   * Locks that stop a write to the resource at the end of `chain` by a request presenting
   * `presentedTokens` (the If header's lock tokens): empty when it may proceed. A resource is
   * writable when no lock covers it or one covering lock is satisfied (RFC 4918 §6.2: any holder
   * of a shared lock may write; an exclusive lock is always the only lock covering a resource).
   * With includeDescendants, every locked resource below must be writable the same way.
   */
  blockingLocks(chain: readonly string[], presentedTokens: Iterable<string>, options: ModifyCheckOptions = {}): ActiveLock[] {
    const presented = presentedTokens instanceof Set ? (presentedTokens as ReadonlySet<string>) : new Set(presentedTokens);
    const satisfied = (lock: ActiveLock): boolean =>
      presented.has(lock.token) && (options.principal === undefined || lock.principal === options.principal);
    const blocking: ActiveLock[] = [];
    const covering = this.locksCovering(chain);
    if (covering.length > 0 && !covering.some(satisfied)) blocking.push(...covering);
    if (options.includeDescendants && chain.length > 0) {
      const checked = new Set<string>();
      for (const below of this.locksBelow(chain[chain.length - 1] as string)) {
        if (checked.has(below.resourceId)) continue;
        checked.add(below.resourceId);
        const coveringBelow = this.locksCovering(below.chain);
        if (!coveringBelow.some(satisfied)) {
          for (const lock of coveringBelow) if (!blocking.includes(lock)) blocking.push(lock);
        }
      }
    }
    return blocking;
  }

  /** True when `blockingLocks` is empty. */
  canModify(chain: readonly string[], presentedTokens: Iterable<string>, options: ModifyCheckOptions = {}): boolean {
    return this.blockingLocks(chain, presentedTokens, options).length === 0;
  }

  /**
   * Drops the locks rooted at `id` and below it (after DELETE, or on the source of a MOVE: locks
   * do not move with a resource, RFC 4918 §9.9.1). Returns what was dropped.
   */
  dropLocksUnder(id: string): ActiveLock[] {
    const dropped = [...this.withChainMember(id)];
    for (const lock of dropped) this.remove(lock);
    return dropped;
  }

  /** Removes expired locks; O(active locks). Runs by itself every few hundred LOCKs and at the cap. */
  sweepExpired(): number {
    this.locksSinceSweep = 0;
    let removed = 0;
    for (const lock of [...this.byToken.values()]) {
      if (this.isExpired(lock)) {
        this.remove(lock);
        removed++;
      }
    }
    return removed;
  }

  private requireLock(token: string, chain: readonly string[] | undefined, principal: string | undefined): ActiveLock {
    const lock = this.get(token);
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

  private isExpired(lock: ActiveLock): boolean {
    return lock.expiresAtMs <= this.clock.now();
  }

  private rootedAt(id: string): ActiveLock[] {
    return this.liveLocks(this.byRoot.get(id));
  }

  private withChainMember(id: string): ActiveLock[] {
    return this.liveLocks(this.byChainMember.get(id));
  }

  private liveLocks(tokens: Set<string> | undefined): ActiveLock[] {
    if (tokens === undefined) return [];
    const out: ActiveLock[] = [];
    const expired: ActiveLock[] = [];
    for (const token of tokens) {
      const lock = this.byToken.get(token);
      if (lock === undefined) continue;
      if (this.isExpired(lock)) expired.push(lock);
      else out.push(lock);
    }
    for (const lock of expired) this.remove(lock);
    return out;
  }

  private insert(lock: ActiveLock): void {
    const weight = lockBytes(lock);
    this.byToken.set(lock.token, lock);
    this.bytes += weight;
    addToIndex(this.byRoot, lock.resourceId, lock.token);
    for (const id of new Set(lock.chain)) addToIndex(this.byChainMember, id, lock.token);
    const held = this.perPrincipal.get(lock.principal);
    if (held) {
      held.count += 1;
      held.bytes += weight;
    } else {
      this.perPrincipal.set(lock.principal, { count: 1, bytes: weight });
    }
  }

  private remove(lock: ActiveLock): void {
    if (this.byToken.get(lock.token) !== lock) return;
    const weight = lockBytes(lock);
    this.byToken.delete(lock.token);
    this.bytes -= weight;
    removeFromIndex(this.byRoot, lock.resourceId, lock.token);
    for (const id of new Set(lock.chain)) removeFromIndex(this.byChainMember, id, lock.token);
    const held = this.perPrincipal.get(lock.principal);
    if (held && held.count > 1) {
      held.count -= 1;
      held.bytes -= weight;
    } else {
      this.perPrincipal.delete(lock.principal);
    }
  }
}

/**
 * What a lock holds in memory, estimated: its strings (two bytes a character at most), the
 * token, and the object and index slots around them.
 */
function lockBytes(lock: Pick<ActiveLock, 'chain' | 'rootHref' | 'ownerXml'>): number {
  let chars = lock.rootHref.length + (lock.ownerXml?.length ?? 0);
  for (const id of lock.chain) chars += id.length;
  return 512 + 2 * chars + 160 * lock.chain.length;
}

function addToIndex(index: Map<string, Set<string>>, key: string, token: string): void {
  let tokens = index.get(key);
  if (tokens === undefined) {
    tokens = new Set();
    index.set(key, tokens);
  }
  tokens.add(token);
}

function removeFromIndex(index: Map<string, Set<string>>, key: string, token: string): void {
  const tokens = index.get(key);
  if (tokens === undefined) return;
  tokens.delete(token);
  if (tokens.size === 0) index.delete(key);
}
