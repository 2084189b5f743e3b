/**
 * HTTP Basic credentials -> store session. Sessions are cached under an HMAC of the
 * credentials (keyed with a per-process random secret, so neither the password nor a plain
 * hash of it is ever held), reused across requests, renewed before the token's end and after
 * any 401 from the store. Wrong credentials are negative-cached briefly so a client's retry
 * storm costs the store one login. Concurrent first requests of one user share one login.
 * First logins of credentials never seen to work are counted by the bridge's own limiter
 * (common/login-limiter.ts) before the store is asked, so parallel guesses through the bridge
 * never reach the store more than the limit, whatever store it fronts (ours counts again).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../common/clock.js';
import type { LoginLimiter } from '../common/login-limiter.js';
import { StoreError, type RelayedClient, type StoreClient, type StoreSession } from '../store-client/contract.js';

/** What the bridge calls itself in the User-Agent of the logins it relays (the store's login history shows it). */
export const BRIDGE_AGENT = 'driveway-webdav';

export interface Credentials {
  username: string;
  password: string;
}

/** A user of the bridge: the name they gave and a way to get a live store session. */
export interface BridgeUser {
  readonly name: string;
  /** Store UUID of the user (known after the first login). */
  readonly userId: string;
  session(): Promise<StoreSession>;
  /** Call after the store answered 401: the next session() logs in again. */
  invalidate(session: StoreSession): void;
  /**
   * This request's client is not Finder: macOS side files (common/side-files.ts) are neither
   * listed nor found by path for it (bridge.hideMacSideFiles; tree/resolver.ts applies it).
   */
  readonly hidesMacSideFiles?: boolean;
  /** This request's client is Finder or Explorer: the root lists `/versions/` (versions-view.ts listsVersionsTo). */
  readonly listsVersions?: boolean;
  /**
   * This request came through `/remote.php/dav/files/<user>/` or `/remote.php/webdav/`: the
   * tree shows the client's view of the drive (tree/client-view.ts), what a sync client syncs.
   */
  readonly clientView?: boolean;
}

type ViewFlags = Pick<BridgeUser, 'hidesMacSideFiles' | 'listsVersions' | 'clientView'>;

/** The view flags `user` carries, only those set. */
function flagsOf(user: BridgeUser): ViewFlags {
  return {
    ...(user.hidesMacSideFiles === true ? { hidesMacSideFiles: true } : {}),
    ...(user.listsVersions === true ? { listsVersions: true } : {}),
    ...(user.clientView === true ? { clientView: true } : {}),
  };
}

/** Each hiding view's user, for the bridge's own work on side files (withMacSideFiles). */
const hidingViews = new WeakMap<BridgeUser, BridgeUser>();

/**
 * `user` as one request's client sees the drive (`flags`): the same account, session and
 * re-login; withMacSideFiles finds the account behind it.
 */
function viewOf(user: BridgeUser, flags: ViewFlags): BridgeUser {
  const view: BridgeUser = {
    get name() {
      return user.name;
    },
    get userId() {
      return user.userId;
    },
    session: () => user.session(),
    invalidate: (session) => user.invalidate(session),
    ...flags,
  };
  hidingViews.set(view, withMacSideFiles(user));
  return view;
}

/** `user` as a request from a client other than Finder sees the drive: without macOS side files. */
export function withoutMacSideFiles(user: BridgeUser): BridgeUser {
  return viewOf(user, { ...flagsOf(user), hidesMacSideFiles: true });
}

/** `user` (or a hiding view of it) with `/versions/` listed in the root, for Finder and Explorer. */
export function withVersionsListed(user: BridgeUser): BridgeUser {
  return viewOf(user, { ...flagsOf(user), listsVersions: true });
}

/** `user` (or a view of it) seeing the client's view of the drive (BridgeUser.clientView). */
export function withClientView(user: BridgeUser): BridgeUser {
  return viewOf(user, { ...flagsOf(user), clientView: true });
}

/** The user behind a hiding view (itself otherwise): a twin the bridge moves must be found whoever asked. */
export function withMacSideFiles(user: BridgeUser): BridgeUser {
  return hidingViews.get(user) ?? user;
}

/**
 * Parses an `Authorization: Basic` header. Accepts any base64 (webdav-server's own parser
 * rejects `+` and `/`, and cuts passwords at a second `:`), and strips a Windows
 * `DOMAIN\user` prefix (docs/client-quirks.md §2).
 */
export function parseBasic(header: string | undefined): Credentials | undefined {
  if (!header) return undefined;
  const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  const username = decoded.slice(0, colon).replace(/^[^\\]*\\/, '');
  if (!username) return undefined;
  return { username, password: decoded.slice(colon + 1) };
}

interface Entry {
  session?: StoreSession;
  /** On the bridge's clock: when the session is renewed. */
  renewAtMs?: number;
  pending?: Promise<StoreSession>;
  /** The credentials logged in once: later logins (renewals) are not guesses and not limited. */
  proven?: boolean;
  user: BridgeUser;
}

export interface SessionPoolOptions {
  clock: Clock;
  /** Renew this long before the token's end. */
  renewBeforeMs?: number;
  /** How long wrong credentials are answered 401 without asking the store. */
  negativeTtlMs?: number;
  maxUsers?: number;
  /** Counts first logins per username and per client address (none: only the store limits). */
  limiter?: LoginLimiter;
}

class PooledUser implements BridgeUser {
  userId = '';
  constructor(
    readonly name: string,
    readonly session: () => Promise<StoreSession>,
    readonly invalidate: (session: StoreSession) => void,
  ) {}
}

/**
 * The pooled user as one request sees it: a login it causes (the store answered 401 mid-request:
 * password changed, session revoked) is relayed for that request's client, so the store counts
 * and records it against the client's address, not the bridge's.
 */
class RequestUser implements BridgeUser {
  constructor(
    private readonly pooled: PooledUser,
    readonly session: () => Promise<StoreSession>,
  ) {}

  get name(): string {
    return this.pooled.name;
  }

  get userId(): string {
    return this.pooled.userId;
  }

  invalidate(session: StoreSession): void {
    this.pooled.invalidate(session);
  }
}

const DAY_MS = 24 * 60 * 60 * 1000;

export type AuthFailureReason = 'bad-credentials' | 'rate-limited' | 'unavailable';

export class AuthenticationFailed extends Error {
  readonly retryAfterSec?: number;
  /**
   * The reason of the "login failed" log line (common/login-log.ts); undefined when the refusal
   * is not worth one (a repeat answered from the negative cache, no usable credentials, the
   * store unreachable).
   */
  readonly logAs?: string;

  constructor(
    readonly reason: AuthFailureReason,
    options?: ErrorOptions & { retryAfterSec?: number; logAs?: string },
  ) {
    super(
      reason === 'bad-credentials' ? 'wrong username or password' : reason === 'rate-limited' ? 'too many failed logins; try again later' : 'the store could not be reached to log in',
      options,
    );
    this.retryAfterSec = options?.retryAfterSec;
    this.logAs = options?.logAs;
  }
}

export class SessionPool {
  private readonly secret = randomBytes(32);
  private readonly entries: LRUCache<string, Entry>;
  private readonly rejected: LRUCache<string, true>;
  private readonly clock: Clock;
  private readonly renewBeforeMs: number;
  private readonly limiter?: LoginLimiter;

  constructor(
    private readonly client: StoreClient,
    options: SessionPoolOptions,
  ) {
    this.clock = options.clock;
    this.renewBeforeMs = options.renewBeforeMs ?? 10 * 60 * 1000;
    this.entries = new LRUCache({ max: options.maxUsers ?? 10_000 });
    this.rejected = new LRUCache({ max: 10_000, ttl: options.negativeTtlMs ?? 5_000 });
    this.limiter = options.limiter;
  }

  private keyOf(credentials: Credentials): string {
    return createHmac('sha256', this.secret).update(credentials.username).update('\0').update(credentials.password).digest('base64url');
  }

  /**
   * The BridgeUser for these credentials, logging in on first use. Throws
   * AuthenticationFailed('bad-credentials') for wrong credentials (401 to the client) and
   * AuthenticationFailed('unavailable') when the store cannot be reached (503).
   */
  async authenticate(credentials: Credentials, client?: RelayedClient): Promise<BridgeUser> {
    const key = this.keyOf(credentials);
    if (this.rejected.has(key)) throw new AuthenticationFailed('bad-credentials');
    const existing = this.entries.get(key);
    if (existing) {
      await this.sessionFor(key, existing, credentials, client);
      return this.forRequest(key, existing, credentials, client);
    }
    const entry = this.newEntry(key, credentials);
    this.entries.set(key, entry);
    try {
      await this.sessionFor(key, entry, credentials, client);
    } catch (err) {
      this.entries.delete(key);
      throw err;
    }
    return this.forRequest(key, entry, credentials, client);
  }

  private forRequest(key: string, entry: Entry, credentials: Credentials, client: RelayedClient | undefined): BridgeUser {
    if (!client) return entry.user;
    return new RequestUser(entry.user as PooledUser, () => this.sessionFor(key, entry, credentials, client));
  }

  private newEntry(key: string, credentials: Credentials): Entry {
    const entry = {} as Entry;
    entry.user = new PooledUser(credentials.username, () => this.sessionFor(key, entry, credentials), (session) => {
      if (entry.session === session) entry.session = undefined;
    });
    return entry;
  }

  /**
   * The entry's session, logging in when there is none or it is due for renewal. `client` is the
   * DAV client whose request caused the login (its address and program go to the store's login
   * history); a renewal outside any request has none.
   */
  private sessionFor(key: string, entry: Entry, credentials: Credentials, client?: RelayedClient): Promise<StoreSession> {
    const current = entry.session;
    if (current && entry.renewAtMs !== undefined && entry.renewAtMs > this.clock.now()) return Promise.resolve(current);
    if (entry.pending) return entry.pending;
    entry.pending = this.login(key, entry, credentials, client).finally(() => {
      entry.pending = undefined;
    });
    return entry.pending;
  }

  /** One store login for the entry; a first one counted by the limiter around it. */
  private async login(key: string, entry: Entry, credentials: Credentials, client?: RelayedClient): Promise<StoreSession> {
    const reservation = entry.proven || !this.limiter ? undefined : await this.limiter.reserve(credentials.username, client?.ip ?? '');
    if (reservation && !reservation.allowed) {
      this.entries.delete(key);
      throw new AuthenticationFailed('rate-limited', { retryAfterSec: reservation.retryAfterSec, logAs: 'rate limited' });
    }
    const attempt = reservation?.attempt;
    let session: StoreSession;
    try {
      session = await this.client.login(credentials.username, credentials.password, { client, via: BRIDGE_AGENT });
    } catch (err) {
      const refused = err instanceof StoreError && ['unauthenticated', 'invalid', 'forbidden', 'not-found'].includes(err.kind);
      if (refused) {
        // A right password of a 2FA account is no guess: not counted, as the store does not.
        const twofa = err.code === 'twofa_required';
        await (twofa ? attempt?.released() : attempt?.failed());
        this.rejected.set(key, true);
        this.entries.delete(key);
        throw new AuthenticationFailed('bad-credentials', { cause: err, logAs: twofa ? 'two-factor code required' : 'wrong username or password' });
      }
      await attempt?.released();
      if (err instanceof StoreError && err.httpStatus === 429) {
        throw new AuthenticationFailed('rate-limited', { cause: err, retryAfterSec: err.retryAfterSec, logAs: 'rate limited' });
      }
      throw new AuthenticationFailed('unavailable', { cause: err });
    }
    await attempt?.succeeded();
    entry.session = session;
    entry.proven = true;
    // The token's end is on the store's clock; measure its lifetime and renew on ours, so a
    // skew between the two machines cannot make every request log in again.
    const lifetimeMs = Math.min(DAY_MS, Math.max(60_000, session.expiresAtMs - Date.now()));
    entry.renewAtMs = this.clock.now() + Math.max(lifetimeMs / 2, lifetimeMs - this.renewBeforeMs);
    (entry.user as PooledUser).userId = session.userId;
    return session;
  }

  /** How many credentials have a session here (for /metrics). */
  get size(): number {
    return this.entries.size;
  }

  /** Forgets every cached session (shutdown, tests). */
  clear(): void {
    this.entries.clear();
    this.rejected.clear();
  }
}
