/**
 * `Authorization: Bearer <store session token>` -> a bridge user: the web app (served by the
 * store on another origin, src/web) holds a session token, not a password, and uploads through
 * the bridge with it (tus, a POST to a folder: docs/bridge-design.md "Bearer tokens and CORS").
 *
 * A token is checked with the store through the StoreClient contract only (`currentUser`, GET
 * /api/user, which every server of the interface has), so it works against a foreign store; the
 * answer is remembered for TOKEN_TTL_MS under an HMAC of the token (keyed with a per-process
 * random secret, as sessions.ts keeps Basic credentials: the token itself is never a key). Every
 * store call is then made with the token itself, so the store keeps deciding what it may do
 * (an app-password session's limits, an expired password) exactly as for a Basic login, and a
 * revoked token is refused at its next store call: the bridge forgets it and checks it again.
 *
 * Refused tokens are negative-cached briefly. They are never counted by the login limiter: a
 * token is a signed, random 24-hour secret nobody guesses, and counting a stale browser tab's
 * retries would lock its address (or, per account, its user) out of Basic logins for nothing.
 *
 * Must not: log in, renew, or keep a token past the store's refusal.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../common/clock.js';
import { StoreError, type StoreClient, type StoreSession } from '../store-client/contract.js';
import { AuthenticationFailed, type BridgeUser } from './sessions.js';

/**
 * How long a token the store accepted is believed without asking again: short, because an answer
 * served from the bridge's caches (a listing) makes no store call that would see a sign-out; one
 * GET /api/user per 5 s of a tab's uploads costs nothing.
 */
export const TOKEN_TTL_MS = 5_000;

/** RFC 6750 §2.1's b64token. */
const BEARER = /^Bearer\s+([A-Za-z0-9\-._~+/]+=*)\s*$/i;

/** Longer than any session token (a JWT of a few hundred characters): refused without asking the store, whose header limit it could pass. */
export const MAX_TOKEN_CHARS = 4096;

/** The token of an `Authorization: Bearer` header; undefined for anything else. */
export function parseBearer(header: string | undefined): string | undefined {
  return header === undefined ? undefined : BEARER.exec(header)?.[1];
}

interface TokenEntry {
  session?: StoreSession;
  /** On the bridge's clock: until when the store's last yes is believed. */
  checkedUntilMs: number;
  pending?: Promise<StoreSession>;
  user?: TokenUser;
}

/** The user of a token: named by the email the store answers (the login name of the interface), else by UUID. */
class TokenUser implements BridgeUser {
  constructor(
    readonly name: string,
    readonly userId: string,
    readonly session: () => Promise<StoreSession>,
    readonly invalidate: (session: StoreSession) => void,
  ) {}
}

export interface TokenSessionsOptions {
  clock: Clock;
  ttlMs?: number;
  /** How long a refused token is answered 401 without asking the store. */
  negativeTtlMs?: number;
  maxTokens?: number;
}

export class TokenSessions {
  private readonly secret = randomBytes(32);
  private readonly entries: LRUCache<string, TokenEntry>;
  private readonly rejected: LRUCache<string, true>;
  private readonly clock: Clock;
  private readonly ttlMs: number;

  constructor(
    private readonly client: StoreClient,
    options: TokenSessionsOptions,
  ) {
    this.clock = options.clock;
    this.ttlMs = options.ttlMs ?? TOKEN_TTL_MS;
    this.entries = new LRUCache({ max: options.maxTokens ?? 10_000 });
    this.rejected = new LRUCache({ max: 10_000, ttl: options.negativeTtlMs ?? 5_000 });
  }

  private keyOf(token: string): string {
    return createHmac('sha256', this.secret).update(token).digest('base64url');
  }

  /**
   * The user whose session `token` is. Throws AuthenticationFailed('bad-credentials') when the
   * store refuses the token (401 to the client) and AuthenticationFailed('unavailable') when it
   * cannot be asked (503).
   */
  async authenticate(token: string): Promise<BridgeUser> {
    if (token.length > MAX_TOKEN_CHARS) throw new AuthenticationFailed('bad-credentials', { logAs: 'session token refused' });
    const key = this.keyOf(token);
    if (this.rejected.has(key)) throw new AuthenticationFailed('bad-credentials');
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { checkedUntilMs: 0 };
      this.entries.set(key, entry);
    }
    await this.sessionFor(key, entry, token);
    return entry.user as TokenUser;
  }

  private sessionFor(key: string, entry: TokenEntry, token: string): Promise<StoreSession> {
    if (entry.session && entry.checkedUntilMs > this.clock.now()) return Promise.resolve(entry.session);
    entry.pending ??= this.check(key, entry, token).finally(() => {
      entry.pending = undefined;
    });
    return entry.pending;
  }

  /** One question to the store: whose token is this? */
  private async check(key: string, entry: TokenEntry, token: string): Promise<StoreSession> {
    // The interface's download URLs need the file access key, which only a login answers: a
    // session from a token has none (store-client/download.ts refuses those with 403).
    const probe: StoreSession = { userId: '', token, fileAccessKey: '', isAdmin: false, fullname: '', expiresAtMs: 0 };
    let profile: Awaited<ReturnType<StoreClient['currentUser']>>;
    try {
      profile = await this.client.currentUser(probe);
    } catch (err) {
      if (err instanceof StoreError && ['unauthenticated', 'forbidden', 'not-found', 'invalid'].includes(err.kind)) {
        this.entries.delete(key);
        this.rejected.set(key, true);
        throw new AuthenticationFailed('bad-credentials', { cause: err, logAs: 'session token refused' });
      }
      throw new AuthenticationFailed('unavailable', { cause: err });
    }
    const session: StoreSession = { ...probe, userId: profile.id, isAdmin: profile.isAdmin, fullname: profile.fullname, expiresAtMs: Date.now() + this.ttlMs };
    entry.session = session;
    entry.checkedUntilMs = this.clock.now() + this.ttlMs;
    entry.user ??= new TokenUser(profile.email || profile.id, profile.id, () => this.sessionFor(key, entry, token), (stale) => {
      // The store answered 401 with it: the next session() asks the store again (and is refused).
      if (entry.session === stale) entry.checkedUntilMs = 0;
    });
    return session;
  }

  /** Forgets every token (shutdown). */
  clear(): void {
    this.entries.clear();
    this.rejected.clear();
  }
}
