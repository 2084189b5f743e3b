/**
 * The one place that turns a failure into a DAV status (docs/bridge-errors.md lists the
 * table). Store errors keep their meaning; the store being unreachable is the gateway's
 * problem (502/503/504), never a 500 with a stack. Per-verb refinements (MKCOL 405 for an
 * existing name, 412 for Overwrite: F) are decided by the verb before it calls here.
 */
import { StoreError } from '../store-client/contract.js';
import { StorageUnavailableError } from '../contracts/storage-unavailable.js';
import { DavXmlError, type DavCondition } from './dav-xml.js';
import { DeadPropertyLimitError } from './dead-properties.js';
import { HrefError } from './href.js';
import { IfHeaderError } from './if-header.js';
import { LockError } from './locks.js';
import { AuthenticationFailed } from './sessions.js';

export interface DavFailure {
  status: number;
  headers: Record<string, string>;
  /** An RFC 4918 §16 precondition/postcondition element name in the DAV: namespace, if any. */
  condition?: DavCondition;
  /** Hrefs inside the condition element (lock-token-submitted, no-conflicting-lock). */
  hrefs?: string[];
  /** Logged, never sent. */
  reason: string;
  /**
   * What a door that answers with words may tell the client (OCS, bulk upload's per-file answer):
   * the store's own message, or the bridge's for a status it decided; never an operation name, an
   * upstream status or, for a failure here, its cause.
   */
  message: string;
  /**
   * A 5xx that is no bug here: the store, its database or a limit refused for now (503/504, or
   * 502 when the store could not be reached). Logged at warn without a stack, as the store logs
   * its own; any other 5xx is logged at error with its stack.
   */
  transient?: boolean;
  /**
   * A 5xx the request itself caused, no failure here: 507 (over the quota, or past a dead
   * property limit) and 502 (a Destination on another server, RFC 4918 §9.8.5). Logged at warn
   * without a stack as a transient one is, so a client repeating it cannot flood the log with
   * stacks (issue 29).
   */
  clientCaused?: boolean;
}

const RETRY_AFTER_SEC = '5';

export function davFailureOf(err: unknown): DavFailure {
  const failure = failureOf(err);
  return { ...failure, message: clientMessageOf(err, failure) };
}

/** What a store refusal says when its store sent no words. */
const STORE_KIND_TEXT: Record<StoreError['kind'], string> = {
  unauthenticated: 'not logged in',
  forbidden: 'permission denied',
  'not-found': 'not found',
  conflict: 'conflict',
  invalid: 'invalid request',
  quota: 'not enough space left',
  'upload-token-expired': 'the upload expired; try again',
  'range-not-satisfiable': 'range not satisfiable',
  unavailable: 'the server could not answer now',
  'bad-response': 'the server could not answer now',
};

function clientMessageOf(err: unknown, failure: Omit<DavFailure, 'message'>): string {
  if (failure.status >= 500 && !failure.clientCaused) return 'The server could not answer now';
  if (err instanceof StoreError) return err.storeMsg ?? STORE_KIND_TEXT[err.kind];
  return failure.reason;
}

function failureOf(err: unknown): Omit<DavFailure, 'message'> {
  if (err instanceof AuthenticationFailed) {
    // Rate-limited logins answer 503 like the store's 429 below: DAV clients retry it after Retry-After.
    return err.reason === 'bad-credentials'
      ? { status: 401, headers: { 'WWW-Authenticate': 'Basic realm="driveway", charset="UTF-8"' }, reason: err.message }
      : { status: 503, headers: { 'Retry-After': String(err.retryAfterSec ?? RETRY_AFTER_SEC) }, reason: err.message };
  }
  // The locks' and dead properties' database (shared with the store over PostgreSQL) unreachable.
  if (err instanceof StorageUnavailableError) return { status: 503, headers: { 'Retry-After': RETRY_AFTER_SEC }, reason: err.message, transient: true };
  if (err instanceof DavStatusError) {
    const failure: Omit<DavFailure, 'message'> = { status: err.status, headers: err.headers, condition: err.condition, hrefs: err.hrefs, reason: err.message };
    return err.status === 507 || err.status === 502 ? { ...failure, clientCaused: true } : failure;
  }
  if (err instanceof HrefError) {
    return { status: err.kind === 'path-too-long' || err.kind === 'too-deep' ? 414 : 400, headers: {}, reason: err.message };
  }
  if (err instanceof DavXmlError) return { status: err.kind === 'too-large' ? 413 : 400, headers: {}, reason: err.message };
  if (err instanceof IfHeaderError) return { status: 400, headers: {}, reason: err.message };
  if (err instanceof DeadPropertyLimitError) return { status: 507, headers: {}, reason: err.message, clientCaused: true };
  if (err instanceof LockError) {
    switch (err.kind) {
      case 'conflict':
        return { status: 423, headers: {}, condition: 'no-conflicting-lock', hrefs: err.conflicts.map((l) => l.rootHref), reason: err.message };
      case 'no-such-lock':
      case 'not-in-scope':
        return { status: 412, headers: {}, condition: 'lock-token-matches-request-uri', reason: err.message };
      case 'not-owner':
        return { status: 403, headers: {}, reason: err.message };
      case 'too-many-locks':
        return { status: 503, headers: { 'Retry-After': RETRY_AFTER_SEC }, reason: err.message, transient: true };
      case 'owner-too-large':
        return { status: 400, headers: {}, reason: err.message };
      default:
        return { status: 500, headers: {}, reason: err.message };
    }
  }
  if (!(err instanceof StoreError)) {
    return { status: 500, headers: {}, reason: err instanceof Error ? err.message : String(err) };
  }
  switch (err.kind) {
    case 'not-found':
      return { status: 404, headers: {}, reason: err.message };
    case 'forbidden':
      // Never 401 for a missing privilege: clients would prompt for a password again.
      return { status: 403, headers: {}, reason: err.message };
    case 'unauthenticated':
      return { status: 401, headers: { 'WWW-Authenticate': 'Basic realm="driveway", charset="UTF-8"' }, reason: err.message };
    case 'conflict':
      return { status: err.httpStatus === 412 ? 412 : err.httpStatus === 405 ? 405 : 409, headers: {}, reason: err.message };
    case 'invalid':
      return { status: 400, headers: {}, reason: err.message };
    case 'quota':
      return { status: 507, headers: {}, condition: 'quota-not-exceeded', reason: err.message, clientCaused: true };
    case 'upload-token-expired':
      return { status: 503, headers: { 'Retry-After': RETRY_AFTER_SEC }, reason: err.message, transient: true };
    case 'range-not-satisfiable':
      return { status: 416, headers: {}, reason: err.message };
    case 'unavailable': {
      if (err.code === 'timeout') return { status: 504, headers: {}, reason: err.message, transient: true };
      if (err.httpStatus === 429 || err.httpStatus === 503) {
        return { status: 503, headers: { 'Retry-After': String(err.retryAfterSec ?? RETRY_AFTER_SEC) }, reason: err.message, transient: true };
      }
      // Not reached (refused, reset) or a gateway's 502/504 in front of it: transient. A 500 is
      // the store's own failure, worth an error and its stack.
      const transient = err.httpStatus === undefined || err.httpStatus === 502 || err.httpStatus === 504 || err.httpStatus === 408;
      return { status: 502, headers: { 'Retry-After': RETRY_AFTER_SEC }, reason: err.message, transient };
    }
    case 'bad-response':
      return { status: 502, headers: {}, reason: err.message };
  }
}

/** A status a verb decides itself (400 for a malformed body, 423 for a lock, 415, ...). */
export class DavStatusError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly condition?: DavCondition,
    readonly headers: Record<string, string> = {},
    readonly hrefs: string[] = [],
  ) {
    super(message);
    this.name = 'DavStatusError';
  }
}
