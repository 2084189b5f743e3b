/**
 * Requests to a test bridge, as the bridge suites send them: one request with optional Basic
 * credentials, read to the end (`davRequest`); the helpers the verb suites share, bound to a
 * fixture and a user (`bridgeRequests`); the 207 check in front of the multistatus reader; and
 * requests written byte for byte on a plain socket, for framing no HTTP client produces.
 * Plumbing only: a helper asserts no more than the status it is named for, so every expectation
 * about behaviour stays in the test that makes it.
 */
import net from 'node:net';
import type { Readable } from 'node:stream';
import { request } from 'undici';
import { expect } from 'vitest';
import { encodeHref } from '../../src/bridge/href.js';
import { nodeId, type NodeEntry } from '../../src/store-client/index.js';
import { parseMultistatus, type DavResponse } from './multistatus.js';
import type { BridgeFixture, DavUser } from './start-bridge.js';

export type DavHeaders = Record<string, string>;
export type DavBody = string | Buffer | Readable;

export interface DavAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The body as UTF-8 without a leading BOM, as undici's `body.text()` reads it. */
  readonly text: string;
}

export interface DavRequestOptions {
  /** The Authorization value; none is sent when it is undefined or empty. */
  auth?: string | undefined;
  /** What a client sends on every request (User-Agent, Translate): written before Authorization. */
  clientHeaders?: DavHeaders;
  headers?: DavHeaders;
  body?: DavBody | undefined;
}

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * `method path` on the bridge at `davUrl` (no trailing slash), the answer read to the end. `path`
 * may also be an absolute URL the bridge answered (a tus `Location`): it must be on the bridge.
 */
export async function davRequest(davUrl: string, method: string, path: string, options: DavRequestOptions = {}): Promise<DavAnswer> {
  const { auth, clientHeaders = {}, headers = {}, body } = options;
  if (/^https?:/.test(path) && new URL(path).origin !== new URL(davUrl).origin) throw new Error(`${path} is not on the bridge at ${davUrl}`);
  const res = await request(/^https?:/.test(path) ? path : `${davUrl}${path}`, {
    method,
    headers: { ...clientHeaders, ...(auth ? { authorization: auth } : {}), ...headers },
    ...(body !== undefined ? { body } : {}),
  });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  return {
    status: res.statusCode,
    headers: res.headers,
    body: bytes,
    get text() {
      return bytes.subarray(bytes.length > 2 && bytes.subarray(0, 3).equals(UTF8_BOM) ? 3 : 0).toString('utf8');
    },
  };
}

/**
 * The responses of a multistatus answer; fails the test, showing the body, when the status is
 * not 207 (and, with `contentType`, when the Content-Type does not match).
 */
export function multistatusOf(answer: DavAnswer, options: { contentType?: RegExp } = {}): DavResponse[] {
  expect(answer.status, answer.text).toBe(207);
  if (options.contentType) expect(answer.headers['content-type']).toMatch(options.contentType);
  return parseMultistatus(answer.text);
}

/** The encoded href of a path given as raw segments (`href('home', 'a#b.txt')`). */
export const href = (...segments: string[]): string => encodeHref(segments);

/** An exclusive write lock, as the verb suites take it. */
export const EXCLUSIVE_LOCKINFO =
  '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';

/**
 * The request helpers of a suite. Both arguments are read at call time, so a suite can take the
 * helpers apart in its `describe` body and fill `f` and `u` in `beforeAll`. Helpers that act as
 * "the" user need `user`; the others take a user per call.
 */
export function bridgeRequests(fixture: () => BridgeFixture, user?: () => DavUser) {
  const me = (): DavUser => {
    if (!user) throw new Error('these bridge requests have no default user');
    return user();
  };

  /** A request as `as`; anonymous when `as` is undefined. */
  function davAs(as: DavUser | undefined, method: string, path: string, headers: DavHeaders = {}, body?: DavBody): Promise<DavAnswer> {
    return davRequest(fixture().davUrl, method, path, { auth: as?.auth, headers, body });
  }

  function dav(method: string, path: string, headers: DavHeaders = {}, body?: DavBody, as: DavUser = me()): Promise<DavAnswer> {
    return davAs(as, method, path, headers, body);
  }

  /** COPY with an absolute Destination on this bridge (as rclone sends it). */
  function copy(from: string, to: string, headers: DavHeaders = {}): Promise<DavAnswer> {
    return dav('COPY', from, { destination: `${fixture().davUrl}${to}`, ...headers });
  }

  /** MOVE with an absolute Destination on this bridge (as rclone sends it). */
  function move(from: string, to: string, headers: DavHeaders = {}): Promise<DavAnswer> {
    return dav('MOVE', from, { destination: `${fixture().davUrl}${to}`, ...headers });
  }

  /** What the store lists in `folder` (a node id or a top-level name), asked as `as`. */
  function storeEntries(folder = 'home', as: DavUser = me()): Promise<NodeEntry[]> {
    return fixture().client.listFolder(as.session, nodeId(folder));
  }

  async function entryIn(folder: string, name: string, as: DavUser = me()): Promise<NodeEntry | undefined> {
    return (await storeEntries(folder, as)).find((e) => e.name === name);
  }

  async function mustFind(folder: string, name: string): Promise<NodeEntry> {
    const entry = await entryIn(folder, name);
    if (!entry) throw new Error(`no ${name} in ${folder}`);
    return entry;
  }

  /** A resource's oc:id as PROPFIND answers it: the form OC-FileId headers carry (Nextcloud's FilesPlugin). */
  async function ocId(path: string, as: DavUser = me()): Promise<string> {
    const body = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:id/></d:prop></d:propfind>';
    const answer = await dav('PROPFIND', path, { depth: '0' }, body, as);
    const id = parseMultistatus(answer.text)[0]?.props.get('{http://owncloud.org/ns}id');
    if (id?.status !== 200) throw new Error(`no oc:id for ${path}: ${answer.status}`);
    return id.text;
  }

  /** PUT of a text body, created (201) or replaced (204). */
  async function put(path: string, body: string, as: DavUser = me()): Promise<void> {
    const res = await dav('PUT', path, {}, body, as);
    expect([201, 204]).toContain(res.status);
  }

  /** MKCOL (201); returns the store id of the new folder, found by walking down from home. */
  async function mkcol(path: string): Promise<string> {
    expect((await dav('MKCOL', path)).status).toBe(201);
    const segments = path.split('/').filter(Boolean).map(decodeURIComponent);
    let folder = 'home';
    for (const name of segments.slice(1)) folder = (await mustFind(folder, name)).id;
    return folder;
  }

  async function get(path: string): Promise<{ status: number; text: string }> {
    const res = await dav('GET', path);
    return { status: res.status, text: res.text };
  }

  /** Names a Depth 1 PROPFIND lists below `path` (decoded). */
  async function davNames(path: string): Promise<string[]> {
    const res = await dav('PROPFIND', path, { depth: '1' });
    expect(res.status).toBe(207);
    const hrefs = [...res.text.matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => m[1] as string).slice(1);
    return hrefs.map((h) => decodeURIComponent(h.replace(/\/$/, '').split('/').pop() as string));
  }

  /** Sets the dead property `{urn:test}color` (207). */
  async function setColor(path: string, color: string): Promise<void> {
    const res = await dav(
      'PROPPATCH',
      path,
      { 'content-type': 'application/xml' },
      `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:test"><D:set><D:prop><Z:color>${color}</Z:color></D:prop></D:set></D:propertyupdate>`,
    );
    expect(res.status).toBe(207);
  }

  /** An exclusive lock for 600 s (200 or 201); returns its token without the angle brackets. */
  async function lock(path: string, depth = '0'): Promise<string> {
    const res = await dav('LOCK', path, { depth, 'content-type': 'application/xml', timeout: 'Second-600' }, EXCLUSIVE_LOCKINFO);
    expect([200, 201]).toContain(res.status);
    const token = /<(opaquelocktoken:[^>]+)>/.exec(String(res.headers['lock-token']))?.[1];
    if (!token) throw new Error('LOCK gave no token');
    return token;
  }

  return { dav, davAs, copy, move, storeEntries, entryIn, mustFind, ocId, put, mkcol, get, davNames, setColor, lock };
}

export interface RawAnswer {
  /** Status codes of the interim (1xx) answers, in order. */
  interim: number[];
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends `head` (request line and headers, without the blank line) and `body` over a plain
 * socket and reads until one final answer is complete. The socket stays open until then, so a
 * server that waits for body bytes never sent makes this time out rather than pass.
 */
export function rawRequest(davUrl: string, head: string, body: Buffer | string = '', timeoutMs = 10_000): Promise<RawAnswer> {
  const url = new URL(davUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    let buffer = Buffer.alloc(0);
    const interim: number[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no final answer within ${timeoutMs} ms; got so far: ${buffer.toString('latin1')}`));
    }, timeoutMs);
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) return;
        const lines = buffer.subarray(0, end).toString('latin1').split('\r\n');
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? '')?.[1]);
        const headers: Record<string, string> = {};
        for (const line of lines.slice(1)) {
          const colon = line.indexOf(':');
          headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        if (status >= 100 && status < 200) {
          interim.push(status);
          buffer = buffer.subarray(end + 4);
          continue;
        }
        const length = Number(headers['content-length'] ?? 0);
        if (buffer.length < end + 4 + length) return;
        clearTimeout(timer);
        socket.destroy();
        resolve({ interim, status, headers, body: buffer.subarray(end + 4, end + 4 + length).toString('utf8') });
        return;
      }
    });
    socket.write(`${head}\r\n\r\n`);
    if (body.length > 0) socket.write(body);
  });
}

/** Request line, Host and `headers` in the given order, for `rawRequest`. */
export function requestHead(method: string, path: string, host: string, headers: Record<string, string>): string {
  return [`${method} ${path} HTTP/1.1`, `Host: ${host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)].join('\r\n');
}

/** Chunked transfer encoding of `parts`, with or without the terminating 0-chunk. */
export function chunked(parts: Buffer[], withLastChunk: boolean): Buffer {
  const pieces: Buffer[] = [];
  for (const part of parts) pieces.push(Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n'));
  if (withLastChunk) pieces.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(pieces);
}
