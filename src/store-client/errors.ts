/**
 * The one error type that crosses from the store client into its callers, and the one
 * decoder that produces it. `classify` reads the HTTP status first; a server that answers 2xx
 * with `status:"error"` is classified from its `code` (our extension) or `msg`, else `invalid`.
 */

export type StoreErrorKind =
  | 'unauthenticated'
  | 'forbidden'
  | 'not-found'
  | 'conflict'
  | 'invalid'
  | 'quota'
  | 'upload-token-expired'
  | 'range-not-satisfiable'
  | 'unavailable'
  | 'bad-response';

/** The code of a thumbnail refused by the HTTP client itself, before any request, for a session without a file access key (a bearer token's): no word on the store's routes. */
export const NO_FILE_ACCESS_KEY = 'no_file_access_key';

export class StoreError extends Error {
  constructor(
    readonly kind: StoreErrorKind,
    /** The client operation, e.g. "nodes.moveInto". */
    readonly operation: string,
    readonly httpStatus?: number,
    /** The server's `msg`, when it sent one. */
    readonly storeMsg?: string,
    options?: ErrorOptions & { code?: string; retryAfterSec?: number },
  ) {
    super(`${operation} failed: ${kind}${httpStatus ? ` (HTTP ${httpStatus})` : ''}${storeMsg ? `: ${storeMsg}` : ''}`, options);
    this.name = 'StoreError';
    this.code = options?.code;
    this.retryAfterSec = options?.retryAfterSec;
  }
  /** Machine-readable code, when the server sends one (driveway's store does). */
  readonly code?: string;
  readonly retryAfterSec?: number;
}

const CODE_KINDS: Record<string, StoreErrorKind> = {
  unauthenticated: 'unauthenticated',
  twofa_required: 'unauthenticated',
  twofa_invalid: 'unauthenticated',
  forbidden: 'forbidden',
  password_expired: 'forbidden',
  top_level_immutable: 'forbidden',
  virtual_folder: 'forbidden',
  not_found: 'not-found',
  not_implemented: 'not-found',
  name_conflict: 'conflict',
  move_into_self: 'conflict',
  not_a_folder: 'conflict',
  email_taken: 'conflict',
  endpoint_taken: 'conflict',
  invalid_request: 'invalid',
  invalid_name: 'invalid',
  checksum_mismatch: 'invalid',
  invalid_password: 'invalid',
  upload_token_expired: 'upload-token-expired',
  upload_token_used: 'upload-token-expired',
  range_not_satisfiable: 'range-not-satisfiable',
  rate_limited: 'unavailable',
  quota_exceeded: 'quota',
};

/** Message patterns for servers that send no code (and for 2xx error envelopes). */
const MSG_KINDS: Array<[RegExp, StoreErrorKind]> = [
  [/quota|insufficient (storage|space)|disk (is )?full|no space/i, 'quota'],
  [/upload token|token (has )?expired|expired token/i, 'upload-token-expired'],
  [/not (logged in|authenticated|authorized)|unauthori[sz]ed|invalid (token|session|credentials)|login/i, 'unauthenticated'],
  [/permission|forbidden|not allowed|access denied/i, 'forbidden'],
  [/not found|no such|does not exist|unknown (node|file|folder)/i, 'not-found'],
  [/already exists|exists already|conflict|duplicate/i, 'conflict'],
];

function kindFromStatus(status: number): StoreErrorKind | undefined {
  if (status === 401) return 'unauthenticated';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not-found';
  if (status === 409 || status === 412) return 'conflict';
  if (status === 410) return 'upload-token-expired';
  if (status === 413 || status === 507) return 'quota';
  if (status === 416) return 'range-not-satisfiable';
  if (status === 408 || status === 429 || status >= 500) return 'unavailable';
  if (status >= 400) return 'invalid';
  return undefined;
}

function envelopeOf(body: unknown): { status?: unknown; msg?: unknown; code?: unknown } | undefined {
  return typeof body === 'object' && body !== null ? (body as { status?: unknown; msg?: unknown; code?: unknown }) : undefined;
}

/** Turns a response that is not a success into a StoreError; undefined when it is a success. */
export function classify(
  operation: string,
  status: number,
  body: unknown,
  headers: Record<string, string | string[] | undefined> = {},
): StoreError | undefined {
  const envelope = envelopeOf(body);
  const isErrorEnvelope = envelope?.status === 'error';
  if (status >= 200 && status < 300 && !isErrorEnvelope) return undefined;
  const msg = typeof envelope?.msg === 'string' ? envelope.msg : undefined;
  const code = typeof envelope?.code === 'string' ? envelope.code : undefined;
  const retryAfterRaw = headers['retry-after'];
  const retryAfterSec = typeof retryAfterRaw === 'string' && /^\d+$/.test(retryAfterRaw) ? Number(retryAfterRaw) : undefined;
  let kind = kindFromStatus(status);
  // A code refines a 4xx (e.g. 403 virtual_folder stays forbidden, 400 over quota becomes quota).
  if (code && CODE_KINDS[code] && (kind === undefined || kind === 'invalid' || status < 500)) kind = CODE_KINDS[code];
  if (kind === undefined || kind === 'invalid') {
    const fromMsg = msg ? MSG_KINDS.find(([re]) => re.test(msg))?.[1] : undefined;
    kind = fromMsg ?? kind ?? 'invalid';
  }
  return new StoreError(kind, operation, status, msg, { code, retryAfterSec });
}
