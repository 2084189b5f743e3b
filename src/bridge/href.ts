/**
 * Request paths and hrefs for the WebDAV bridge: decoding a request-target or a Destination /
 * If resource tag into path segments, and encoding segments back into hrefs. Pure string work:
 * it knows nothing about nodes, the store or webdav-server, and it never throws anything but
 * HrefError (every malformed input is typed so the verb can answer 400, 404 or 414 itself).
 *
 * Why not webdav-server's Path: it calls `decodeURIComponent` (a malformed `%` escape throws out
 * of the request listener), splits on a decoded `%2F` and on `\`, and its hrefs go through
 * `encodeURI`, which leaves `#` and `?` raw (docs/client-quirks.md §0: rclone lists `a#b.txt` as `a`).
 */

import { isFinderAgent } from '../common/side-files.js';

export type HrefErrorKind =
  | 'not-a-path'        // not origin-form, not an absolute http(s) URL (e.g. `*`, `foo`)
  | 'fragment'          // a raw `#` in a request path: never sent by a well-behaved client
  | 'malformed-escape'  // `%` not followed by two hex digits
  | 'invalid-utf8'      // escapes that do not decode to UTF-8
  | 'nul'               // `%00` in a segment
  | 'encoded-slash'     // `%2F` inside a segment: names cannot contain `/`
  | 'escapes-root'      // `..` above `/`
  | 'path-too-long'     // raw path longer than maxPathLength
  | 'segment-too-long'  // a decoded segment over maxSegmentBytes of UTF-8
  | 'too-deep';         // more than maxDepth segments

export class HrefError extends Error {
  constructor(
    readonly kind: HrefErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'HrefError';
  }
}

export interface PathLimits {
  /** Characters of the raw (still encoded) path; default 16 KiB. */
  maxPathLength: number;
  /** Bytes of UTF-8 per decoded segment; default 255, the store's name rule. */
  maxSegmentBytes: number;
  /** Segments after dot-segment removal; default 256. */
  maxDepth: number;
}

export const DEFAULT_PATH_LIMITS: PathLimits = { maxPathLength: 16 * 1024, maxSegmentBytes: 255, maxDepth: 256 };

export interface DavPathParts {
  /** Decoded, NFC-normalised segments: what path lookups compare against NFC names. */
  readonly segments: readonly string[];
  /** Decoded segments exactly as the client sent them (macOS sends NFD). */
  readonly rawSegments: readonly string[];
  /** The request ended in `/` (a collection was meant; both forms must be accepted, RFC 4918 §8.3). */
  readonly trailingSlash: boolean;
  /** `/` + NFC segments joined by `/`; `/` for the root. Unencoded: a lookup key, not an href. */
  readonly path: string;
}

const HEX = /^[0-9A-Fa-f]{2}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes a request-target (`req.url`: origin-form, or absolute-form as a proxy sends it) into
 * segments. The query is dropped; `.` and `..` are resolved (also when escaped as `%2e`).
 * Characters U+0080..U+00FF are taken as raw bytes, because Node hands header values to us
 * decoded as latin1 (a Destination with raw UTF-8 arrives that way).
 */
export function decodeRequestPath(target: string, limits: Partial<PathLimits> = {}): DavPathParts {
  const lim = { ...DEFAULT_PATH_LIMITS, ...limits };
  let path = target;
  if (!path.startsWith('/')) {
    const absolute = splitAbsoluteUrl(path);
    if (!absolute) throw new HrefError('not-a-path', 'request target is not a path');
    path = absolute.path;
  }
  const query = path.indexOf('?');
  if (query >= 0) path = path.slice(0, query);
  return decodePathOnly(path, lim);
}

function decodePathOnly(path: string, lim: PathLimits): DavPathParts {
  if (path.length > lim.maxPathLength) throw new HrefError('path-too-long', `path longer than ${lim.maxPathLength} characters`);
  if (path.includes('#')) throw new HrefError('fragment', 'a path must not contain a raw "#"');
  const segments: string[] = [];
  const rawSegments: string[] = [];
  const parts = path.split('/');
  let trailingSlash = false;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    if (part === '') {
      if (i === parts.length - 1 && i > 0) trailingSlash = true;
      continue;
    }
    const decoded = decodeSegment(part);
    if (decoded === '.') {
      if (i === parts.length - 1) trailingSlash = true;
      continue;
    }
    if (decoded === '..') {
      if (segments.length === 0) throw new HrefError('escapes-root', '".." leads above the root');
      segments.pop();
      rawSegments.pop();
      if (i === parts.length - 1) trailingSlash = true;
      continue;
    }
    if (Buffer.byteLength(decoded, 'utf8') > lim.maxSegmentBytes) {
      throw new HrefError('segment-too-long', `a segment is longer than ${lim.maxSegmentBytes} bytes`);
    }
    rawSegments.push(decoded);
    segments.push(normalizeName(decoded));
    if (segments.length > lim.maxDepth) throw new HrefError('too-deep', `more than ${lim.maxDepth} segments`);
  }
  if (segments.length === 0) trailingSlash = true;
  return { segments, rawSegments, trailingSlash, path: '/' + segments.join('/') };
}

// Most segments are printable ASCII without escapes: no decoding needed.
const PLAIN_SEGMENT = /^[\x21-\x24\x26-\x7E]*$/;

function decodeSegment(raw: string): string {
  if (PLAIN_SEGMENT.test(raw)) return raw;
  const bytes: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const code = raw.charCodeAt(i);
    if (code === 0x25) {
      const hex = raw.slice(i + 1, i + 3);
      if (!HEX.test(hex)) throw new HrefError('malformed-escape', 'a "%" is not followed by two hex digits');
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (code < 0x100) {
      bytes.push(code);
    } else {
      // A real character above latin1 (only possible from a caller's own string): its UTF-8 bytes.
      const end = code >= 0xd800 && code <= 0xdbff && i + 1 < raw.length ? i + 2 : i + 1;
      for (const b of Buffer.from(raw.slice(i, end), 'utf8')) bytes.push(b);
      i = end - 1;
    }
  }
  let decoded: string;
  try {
    decoded = utf8.decode(Uint8Array.from(bytes));
  } catch {
    throw new HrefError('invalid-utf8', 'escapes do not decode to UTF-8');
  }
  if (decoded.includes('\0')) throw new HrefError('nul', 'a segment contains NUL');
  if (decoded.includes('/')) throw new HrefError('encoded-slash', 'a segment contains an encoded "/"');
  return decoded;
}

const ASCII = /^[\x00-\x7F]*$/;

/** NFC, the form lookups compare in (macOS sends and expects NFD: docs/client-quirks.md §1). */
export function normalizeName(name: string): string {
  return ASCII.test(name) ? name : name.normalize('NFC');
}

const SUB_DELIMS_LEFT_BY_ENCODE_URI_COMPONENT = /[!'()*]/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Percent-encodes one segment: everything but `A-Z a-z 0-9 - . _ ~`, so space # % + ? & ; ' ( ) * !
 * and every non-ASCII byte are escaped and no client can split a name on them.
 */
export function encodeSegment(name: string): string {
  let encoded: string;
  try {
    encoded = encodeURIComponent(name);
  } catch {
    // A lone surrogate (possible in a foreign store's JSON) cannot be UTF-8; show U+FFFD.
    encoded = encodeURIComponent(name.replace(LONE_SURROGATE, '\uFFFD'));
  }
  return encoded.replace(SUB_DELIMS_LEFT_BY_ENCODE_URI_COMPONENT, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

export interface HrefOptions {
  /** A collection: the href ends in `/` (RFC 4918 §8.3). */
  collection?: boolean;
  /** Answer names in NFD (for `wantsNfd` user agents). */
  nfd?: boolean;
}

/** A path-only href (`/a%20b/c/`) for segments; `/` for the root. */
export function encodeHref(segments: readonly string[], options: HrefOptions = {}): string {
  if (segments.length === 0) return '/';
  let out = '';
  for (const segment of segments) out += '/' + encodeSegment(options.nfd ? segment.normalize('NFD') : segment);
  return options.collection ? out + '/' : out;
}

/** The href of a child from its parent's href (which must end in `/`): the fast path for listings. */
export function childHref(parentHref: string, name: string, options: HrefOptions = {}): string {
  const segment = encodeSegment(options.nfd ? name.normalize('NFD') : name);
  return options.collection ? parentHref + segment + '/' : parentHref + segment;
}

/** macOS WebDAVFS (Finder) sends NFD and matches entries by bytes: answer it in NFD (docs/client-quirks.md §1). */
export function wantsNfd(userAgent: string | undefined): boolean {
  return isFinderAgent(userAgent);
}

export type HrefTarget = { kind: 'local'; path: DavPathParts } | { kind: 'other-host' };

/**
 * Parses a Destination header (RFC 4918 §10.3) or an If resource tag (§10.4.2): a path, or an
 * absolute http(s) URL. A URL whose authority is none of `requestHosts` (the request's Host, and
 * X-Forwarded-Host when trusted) is 'other-host' (the verb answers 502, §9.8.5). With no
 * request host known, any authority counts as local. Throws HrefError when malformed.
 */
export function parseHrefTarget(
  value: string,
  requestHosts: string | readonly string[],
  limits: Partial<PathLimits> = {},
): HrefTarget {
  const lim = { ...DEFAULT_PATH_LIMITS, ...limits };
  const trimmed = value.trim();
  if (trimmed.startsWith('/')) {
    if (trimmed.startsWith('//')) throw new HrefError('not-a-path', 'a network-path reference is not a path');
    return { kind: 'local', path: decodePathAndQuery(trimmed, lim) };
  }
  const absolute = splitAbsoluteUrl(trimmed);
  if (!absolute) throw new HrefError('not-a-path', 'not a path or an absolute URL');
  const hosts = (typeof requestHosts === 'string' ? [requestHosts] : requestHosts).filter((h) => h.trim() !== '');
  if (absolute.scheme !== 'http' && absolute.scheme !== 'https') return { kind: 'other-host' };
  const path = decodePathAndQuery(absolute.path, lim);
  if (hosts.length === 0) return { kind: 'local', path };
  const target = parseAuthority(absolute.authority, absolute.scheme);
  if (!target) throw new HrefError('not-a-path', 'malformed authority');
  const matches = hosts.some((h) => {
    const host = parseAuthority(h.trim(), absolute.scheme);
    return host !== undefined && host.host === target.host && host.port === target.port;
  });
  return matches ? { kind: 'local', path } : { kind: 'other-host' };
}

/** The Destination header is an href target (RFC 4918 §10.3). */
export const parseDestination = parseHrefTarget;

function decodePathAndQuery(path: string, lim: PathLimits): DavPathParts {
  const query = path.indexOf('?');
  return decodePathOnly(query >= 0 ? path.slice(0, query) : path, lim);
}

function splitAbsoluteUrl(value: string): { scheme: string; authority: string; path: string } | undefined {
  const match = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)(.*)$/s.exec(value);
  if (!match) return undefined;
  const rest = match[3] as string;
  const path = rest === '' || rest.startsWith('?') ? '/' + rest : rest;
  if (!path.startsWith('/')) return undefined;
  return { scheme: (match[1] as string).toLowerCase(), authority: match[2] as string, path };
}

function parseAuthority(authority: string, scheme: string): { host: string; port: string } | undefined {
  const at = authority.lastIndexOf('@');
  const hostPort = at >= 0 ? authority.slice(at + 1) : authority;
  let host: string;
  let port: string | undefined;
  if (hostPort.startsWith('[')) {
    const close = hostPort.indexOf(']');
    if (close < 0) return undefined;
    host = hostPort.slice(0, close + 1);
    const after = hostPort.slice(close + 1);
    if (after !== '' && !after.startsWith(':')) return undefined;
    port = after === '' ? undefined : after.slice(1);
  } else {
    const colon = hostPort.lastIndexOf(':');
    host = colon >= 0 ? hostPort.slice(0, colon) : hostPort;
    port = colon >= 0 ? hostPort.slice(colon + 1) : undefined;
  }
  if (host === '') return undefined;
  if (port === undefined || port === '') port = scheme === 'https' ? '443' : '80';
  if (!/^\d{1,5}$/.test(port)) return undefined;
  return { host: host.toLowerCase().replace(/\.$/, ''), port: String(Number(port)) };
}
