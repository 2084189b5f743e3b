/**
 * The pre-auth tokens of the push door (bridge/nextcloud/push.ts): a client that holds a session
 * asks `POST /index.php/apps/notify_push/pre_auth` for a token, then opens the websocket with an
 * empty username and the token as its password (notify_push's protocol). Kept where every
 * instance over the store sees them (store/storage/push-tokens.ts), so a token made through one
 * instance opens a socket on another. The contract only; no state and no I/O here.
 *
 * No token is kept: a token is found by its SHA-256 (`key`). What it opens (the caller's
 * credentials) is sealed under the token itself: a reader of the table learns no password.
 */

export interface PushToken {
  /** SHA-256 of the token (hex). */
  readonly key: string;
  /** What the token stands for, sealed under the token (the bridge seals and opens it). */
  readonly sealed: string;
  readonly expiresMs: number;
}

/** Where the tokens live; methods throw a storage error only (5xx for the request). */
export interface PushTokenRepository {
  /** Keeps `token`; tokens expired by `nowMs` are dropped first. */
  put(token: PushToken, nowMs: number): Promise<void>;
  /** Takes (removes and returns) the token of that key, unexpired at `nowMs`: of racing takers on any instance, one gets it. */
  take(key: string, nowMs: number): Promise<PushToken | undefined>;
}
