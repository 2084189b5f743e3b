/**
 * Conditional and range requests for serving one stored representation (RFC 9110 §13 and
 * §14): decides from the method, the request headers and the entity whether the answer is
 * 200 (whole), 206 (one byte range), 304, 412 or 416, and which headers go with it.
 * Pure: no I/O, no framework types; the store's view/download and the bridge's GET share it.
 *
 * Choices within the RFC:
 * - One range only. Several ranges that overlap or touch are merged into one; otherwise the
 *   whole representation is sent (200), which RFC 9110 §14.2 allows ("MAY ignore").
 * - A syntactically invalid Range, another unit than `bytes`, or a Range on anything but GET
 *   is ignored (200), as RFC 9110 §14.2 requires for the method and allows for the rest.
 * - An empty representation is sent whole (200) whatever the Range: no client is helped by a
 *   416 for a file that has no bytes to ask for.
 * - A suffix range longer than the representation selects all of it (RFC 9110 §14.1.3).
 */
import parseRange from 'range-parser';

export interface RepresentationInfo {
  /** Strong entity-tag including its quotes, e.g. `"3f0c-2"`. */
  etag: string;
  lastModifiedMs: number;
  sizeBytes: number;
}

/** Request headers as Node delivers them (lower-case names). */
export type RequestHeaders = Record<string, string | string[] | undefined>;

/** Inclusive byte positions, as in Content-Range. */
export interface ByteSpan {
  start: number;
  end: number;
}

export type ConditionalDecision =
  | { status: 200; headers: Record<string, string> }
  | { status: 206; range: ByteSpan; headers: Record<string, string> }
  | { status: 304; headers: Record<string, string> }
  | { status: 412; headers: Record<string, string> }
  | { status: 416; headers: Record<string, string> };

function header(headers: RequestHeaders, name: string): string | undefined {
  const value = headers[name];
  if (Array.isArray(value)) return value.join(', ');
  return value === undefined ? undefined : value;
}

interface EntityTag {
  weak: boolean;
  opaque: string;
}

/** Parses `*` or a list of entity-tags; parsing stops at the first malformed element. */
function parseEntityTags(value: string): EntityTag[] | '*' {
  if (value.trim() === '*') return '*';
  const tags: EntityTag[] = [];
  const re = /\s*(W\/)?"([^"]*)"\s*(?:,|$)/gy;
  let match: RegExpExecArray | null;
  while ((match = re.exec(value)) !== null) {
    tags.push({ weak: match[1] !== undefined, opaque: match[2] ?? '' });
    if (re.lastIndex >= value.length) break;
  }
  return tags;
}

function parseOwnTag(etag: string): EntityTag {
  const parsed = parseEntityTags(etag);
  if (parsed === '*' || parsed.length !== 1) return { weak: false, opaque: etag };
  return parsed[0] as EntityTag;
}

/** RFC 9110 §8.8.3.2: strong comparison needs both tags strong; weak ignores the W/. */
function tagMatches(list: EntityTag[] | '*', own: EntityTag, strong: boolean): boolean {
  if (list === '*') return true;
  return list.some((tag) => tag.opaque === own.opaque && (!strong || (!tag.weak && !own.weak)));
}

/** An HTTP-date in milliseconds, or undefined when it is not one (the header is then ignored). */
function parseHttpDate(value: string): number | undefined {
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** HTTP dates carry whole seconds; compare the entity's time at that precision. */
function wholeSeconds(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}

const RANGE_SYNTAX = /^bytes=\s*(?:\d*-\d*)(?:\s*,\s*(?:\d*-\d*))*\s*$/i;

type RangeOutcome = { kind: 'ignore' } | { kind: 'unsatisfiable' } | { kind: 'span'; span: ByteSpan };

/** Interprets a Range value against a representation of `size` bytes. */
export function interpretRange(value: string, size: number): RangeOutcome {
  if (!RANGE_SYNTAX.test(value)) return { kind: 'ignore' };
  const specs = value
    .slice(value.indexOf('=') + 1)
    .split(',')
    .map((spec) => spec.trim());
  for (const spec of specs) {
    const [first = '', last = ''] = spec.split('-');
    if (first === '' && last === '') return { kind: 'ignore' };
    if (first !== '' && last !== '' && Number(last) < Number(first)) return { kind: 'ignore' };
  }
  if (size === 0) return { kind: 'ignore' };
  // range-parser drops a suffix longer than the representation; RFC 9110 §14.1.3 says it
  // selects the whole representation.
  const clamped = specs.map((spec) => (spec.startsWith('-') && Number(spec.slice(1)) > size ? `-${size}` : spec)).join(',');
  const parsed = parseRange(size, `bytes=${clamped}`, { combine: true });
  if (parsed === -2) return { kind: 'ignore' };
  if (parsed === -1) return { kind: 'unsatisfiable' };
  if (parsed.length !== 1) return { kind: 'ignore' };
  const span = parsed[0] as ByteSpan;
  return { kind: 'span', span: { start: span.start, end: span.end } };
}

/** Whether an If-Range validator still describes the representation (RFC 9110 §13.1.5). */
function ifRangeHolds(value: string, entity: RepresentationInfo): boolean {
  const trimmed = value.trim();
  if (trimmed.startsWith('"') || trimmed.startsWith('W/')) {
    const tags = parseEntityTags(trimmed);
    return tags !== '*' && tags.length === 1 && tagMatches(tags, parseOwnTag(entity.etag), true);
  }
  const date = parseHttpDate(trimmed);
  return date !== undefined && date === wholeSeconds(entity.lastModifiedMs);
}

/**
 * Evaluates the preconditions in the order of RFC 9110 §13.2.2, then the Range. The returned
 * headers are complete for the status except Content-Type, Content-Disposition and
 * Cache-Control, which belong to the caller.
 */
export function evaluateConditionalRequest(method: string, headers: RequestHeaders, entity: RepresentationInfo): ConditionalDecision {
  const isGetOrHead = method === 'GET' || method === 'HEAD';
  const own = parseOwnTag(entity.etag);
  const validators: Record<string, string> = {
    etag: entity.etag,
    'last-modified': new Date(entity.lastModifiedMs).toUTCString(),
  };
  const modified = wholeSeconds(entity.lastModifiedMs);

  const ifMatch = header(headers, 'if-match');
  if (ifMatch !== undefined) {
    if (!tagMatches(parseEntityTags(ifMatch), own, true)) return { status: 412, headers: {} };
  } else {
    const ifUnmodifiedSince = header(headers, 'if-unmodified-since');
    const date = ifUnmodifiedSince === undefined ? undefined : parseHttpDate(ifUnmodifiedSince);
    if (date !== undefined && modified > date) return { status: 412, headers: {} };
  }

  const ifNoneMatch = header(headers, 'if-none-match');
  if (ifNoneMatch !== undefined) {
    if (tagMatches(parseEntityTags(ifNoneMatch), own, false)) {
      return isGetOrHead ? { status: 304, headers: validators } : { status: 412, headers: {} };
    }
  } else if (isGetOrHead) {
    const ifModifiedSince = header(headers, 'if-modified-since');
    const date = ifModifiedSince === undefined ? undefined : parseHttpDate(ifModifiedSince);
    if (date !== undefined && modified <= date) return { status: 304, headers: validators };
  }

  const whole = {
    status: 200 as const,
    headers: { ...validators, 'accept-ranges': 'bytes', 'content-length': String(entity.sizeBytes) },
  };
  const range = header(headers, 'range');
  if (method !== 'GET' || range === undefined) return whole;
  const ifRange = header(headers, 'if-range');
  if (ifRange !== undefined && !ifRangeHolds(ifRange, entity)) return whole;

  const outcome = interpretRange(range, entity.sizeBytes);
  if (outcome.kind === 'ignore') return whole;
  if (outcome.kind === 'unsatisfiable') {
    return { status: 416, headers: { ...validators, 'accept-ranges': 'bytes', 'content-range': `bytes */${entity.sizeBytes}` } };
  }
  const { start, end } = outcome.span;
  return {
    status: 206,
    range: { start, end },
    headers: {
      ...validators,
      'accept-ranges': 'bytes',
      'content-range': `bytes ${start}-${end}/${entity.sizeBytes}`,
      'content-length': String(end - start + 1),
    },
  };
}
