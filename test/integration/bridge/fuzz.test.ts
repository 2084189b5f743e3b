/**
 * Malformed requests of every kind: bodies, If headers, Destinations, Ranges, paths, header
 * sizes, methods and broken framing. Each must get a deliberate answer below 500 (mostly 4xx),
 * never a crash or a hang: after every case the same bridge still answers OPTIONS, and the
 * user's files are unchanged at the end.
 */
import { connect } from 'node:net';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId } from '../../../src/store-client/index.js';
import { davRequest } from '../../helpers/dav-requests.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { createFolder, uploadFile } from '../../helpers/seed.js';

interface Case {
  name: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Acceptable statuses; below 500 unless a 5xx is listed (502 for another host's Destination). */
  expect: readonly number[];
}

const CONTENT = 'fuzz target content, 40 bytes long......';
const XML = { 'content-type': 'application/xml; charset=utf-8' };
const BAD_BODIES: ReadonlyArray<readonly [string, string | Buffer]> = [
  ['truncated', '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop>'],
  ['not XML', 'this is not xml at all'],
  ['binary', Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80, 0x81, 0x00, 0x3c, 0x3e])],
  ['invalid UTF-8', Buffer.concat([Buffer.from('<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop><x'), Buffer.from([0xc3, 0x28]), Buffer.from('/></D:prop></D:propfind>')])],
  ['empty namespace prefix binding', '<D:propfind xmlns:D="DAV:"><D:prop><bar:foo xmlns:bar=""/></D:prop></D:propfind>'],
  ['undeclared prefix', '<D:propfind xmlns:D="DAV:"><D:prop><x:foo/></D:prop></D:propfind>'],
  ['external entity', '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><D:propfind xmlns:D="DAV:"><D:prop>&e;</D:prop></D:propfind>'],
  ['entity expansion', `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><D:propfind xmlns:D="DAV:">&b;</D:propfind>`],
  ['deep nesting', `<D:propfind xmlns:D="DAV:">${'<x>'.repeat(5000)}${'</x>'.repeat(5000)}</D:propfind>`],
  ['two roots', '<D:propfind xmlns:D="DAV:"/><D:propfind xmlns:D="DAV:"/>'],
  ['wrong root', '<D:multistatus xmlns:D="DAV:"/>'],
  ['no namespace', '<propfind><prop><getetag/></prop></propfind>'],
  ['unknown encoding', '<?xml version="1.0" encoding="x-klingon"?><D:propfind xmlns:D="DAV:"/>'],
  ['unclosed CDATA', '<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x xmlns="urn:x"><![CDATA[oops</x></D:prop></D:set>'],
  ['lockinfo without scope', '<D:lockinfo xmlns:D="DAV:"><D:locktype><D:write/></D:locktype></D:lockinfo>'],
  ['lockinfo with a bogus type', '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:read/></D:locktype></D:lockinfo>'],
  ['propertyupdate without prop', '<D:propertyupdate xmlns:D="DAV:"><D:set/></D:propertyupdate>'],
];

const BAD_IF_HEADERS = [
  '(',
  ')',
  '<',
  '()',
  '(<>)',
  '(Not)',
  '(Not Not <opaquelocktoken:x>)',
  '([)',
  '(["unterminated)',
  '(<opaquelocktoken:x>',
  '<http://x/y>',
  '<http://x/y> <http://x/z> (<a>)',
  '(<a>) <http://x/y> (<b>)',
  'garbage',
  '((<a>))',
  '(<a<b>>)',
  '[W/"x"]',
  `${'('.repeat(10_000)}`,
  `(${'<a>'.repeat(20_000)}`,
];

const BAD_DESTINATIONS = [
  '',
  '::::',
  'http://',
  'http://[::1',
  '//evil.example/x',
  'relative/path.txt',
  '/home/%zz',
  '/home/a%00b',
  '/home/a%2fb',
  '/../../etc/passwd',
  '/home/%2e%2e/%2e%2e/%2e%2e/x',
  `/home/${'x'.repeat(300)}`,
  `/home/${'a/'.repeat(400)}x`,
  `/${'y'.repeat(20_000)}`,
  'mailto:someone@example.com',
];

/** Absolute URLs of another server: 502 (RFC 4918 §9.8.5, §9.9.4). */
const FOREIGN_DESTINATIONS = ['http://other.example:1/home/x.txt', 'ftp://127.0.0.1/home/x.txt', 'https://127.0.0.1:1/home/x.txt'];

const ODD_RANGES = [
  'bytes=999999999-',
  'bytes=-0',
  'bytes=5-1',
  'bytes=abc',
  'bytes=',
  'bytes=-',
  'bytes=1-2-3',
  'items=0-1',
  'bytes=-99999999999999999999999',
  'bytes=99999999999999999999999-',
  `bytes=${Array.from({ length: 500 }, (_, i) => `${i}-${i}`).join(',')}`,
  'bytes=0-0,-1',
  'bytes = 0 - 1',
  'bytes=40-',
];

const BAD_PATHS = [
  '/..',
  '/../..',
  '/%2e%2e/',
  '/home/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
  '/home/..%2f..%2fetc',
  '/home/a%00b',
  '/home/%00',
  '/home/%zz',
  '/home/%',
  '/home/%e9',
  '/home/%ff%fe',
  '/home/%c0%ae%c0%ae/',
  `/home/${'a'.repeat(300)}`,
  `/home/${'%e2%82%ac'.repeat(100)}`,
  `/${'deep/'.repeat(300)}`,
  `/home/${'x'.repeat(20_000)}`,
  '/home/f.txt/../../..',
  '/home/f.txt/child',
];

/** Odd spellings of `/home/f.txt` itself: reads must find the file. */
const EQUIVALENT_PATHS = ['/home//f.txt', '/home/./f.txt', '/home/dir/../f.txt', '/home/%66.txt', '/home/f.txt?query=1&x=%zz'];

describe('fuzz: malformed requests never crash the bridge', () => {
  let f: BridgeFixture;
  let u: DavUser;
  let fileId: string;
  let dirId: string;
  /** Sends paths exactly as written: undici's request() would resolve `..` and `%2e%2e` first. */
  let raw: Client;

  beforeAll(async () => {
    f = await bridgeFixture();
    raw = new Client(f.davUrl);
    u = await f.newDavUser();
    fileId = await uploadFile(f.client, u.session, 'home', 'f.txt', CONTENT);
    dirId = await createFolder(f.client, u.session, 'home', 'dir');
  });
  afterAll(async () => {
    await raw.close();
    await f.close();
  });

  async function stillAlive(after: string): Promise<void> {
    const res = await davRequest(f.davUrl, 'OPTIONS', '/');
    expect(res.status, `OPTIONS after ${after}`).toBe(200);
  }

  async function run(c: Case): Promise<number> {
    const res = await raw.request({
      path: c.path,
      method: c.method,
      headers: { authorization: u.auth, ...c.headers },
      ...(c.body !== undefined ? { body: c.body } : {}),
    });
    await res.body.dump();
    const label = `${c.method} ${c.path.slice(0, 80)}: ${c.name.slice(0, 120)}`;
    if (!c.expect.some((s) => s >= 500)) expect(res.statusCode, label).toBeLessThan(500);
    expect(c.expect, `${label} answered ${res.statusCode}`).toContain(res.statusCode);
    await stillAlive(label);
    return res.statusCode;
  }

  /** Writes raw bytes on a socket and returns the status of the first answer (0 if none came). */
  function rawExchange(payload: string | Buffer, options: { end?: boolean } = {}): Promise<number> {
    const { port, hostname } = new URL(f.davUrl);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname);
      let received = '';
      const timer = setTimeout(() => {
        socket.destroy();
        resolve(statusOf(received));
      }, 3_000);
      socket.on('connect', () => {
        socket.write(payload);
        if (options.end ?? false) socket.end();
      });
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('latin1');
        if (/\r\n\r\n/.test(received) && !/content-length:\s*[1-9]/i.test(received)) {
          clearTimeout(timer);
          socket.destroy();
          resolve(statusOf(received));
        }
      });
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(statusOf(received));
      });
      socket.on('error', (err) => {
        clearTimeout(timer);
        if (received) resolve(statusOf(received));
        else reject(err);
      });
    });
  }

  function statusOf(text: string): number {
    const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
    return match ? Number(match[1]) : 0;
  }

  it('answers 400/415 to malformed XML bodies of PROPFIND, PROPPATCH and LOCK', async () => {
    for (const [name, body] of BAD_BODIES) {
      for (const [method, path] of [['PROPFIND', '/home/f.txt'], ['PROPPATCH', '/home/f.txt'], ['LOCK', '/home/f.txt'], ['LOCK', '/home/dir/new-lock.txt']] as const) {
        await run({ name, method, path, headers: { ...XML, depth: '0' }, body, expect: [400, 403, 415, 422] });
      }
    }
    expect((await f.client.listFolder(u.session, nodeId(dirId))).map((e) => e.name)).toEqual([]);
  });

  it('answers 413 or 400 to an oversized XML body and keeps the connection usable', async () => {
    const big = `<D:propfind xmlns:D="DAV:"><D:prop>${'<D:getetag/>'.repeat(300_000)}</D:prop></D:propfind>`;
    for (const method of ['PROPFIND', 'PROPPATCH', 'LOCK']) {
      await run({ name: `${big.length} bytes`, method, path: '/home/f.txt', headers: { ...XML, depth: '0' }, body: big, expect: [400, 413] });
    }
  });

  it('answers 400 or 412 to garbage If headers on every write verb', async () => {
    for (const header of BAD_IF_HEADERS) {
      for (const [method, path, body] of [
        ['PUT', '/home/f.txt', 'never written'],
        ['DELETE', '/home/f.txt', undefined],
        ['MKCOL', '/home/dir/sub', undefined],
        ['PROPPATCH', '/home/f.txt', '<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x:a xmlns:x="urn:x">1</x:a></D:prop></D:set></D:propertyupdate>'],
        ['MOVE', '/home/f.txt', undefined],
        ['COPY', '/home/f.txt', undefined],
        ['LOCK', '/home/f.txt', undefined],
      ] as const) {
        await run({
          name: `If: ${header}`,
          method,
          path,
          headers: { if: header, destination: '/home/dir/moved.txt' },
          ...(body !== undefined ? { body } : {}),
          expect: [400, 412],
        });
      }
    }
  });

  it('refuses bad Destinations on MOVE and COPY without touching the source', async () => {
    for (const destination of BAD_DESTINATIONS) {
      for (const method of ['MOVE', 'COPY']) {
        await run({ name: `Destination: ${destination.slice(0, 100)}`, method, path: '/home/f.txt', headers: { destination }, expect: [400, 403, 409, 414] });
      }
    }
    for (const destination of FOREIGN_DESTINATIONS) {
      for (const method of ['MOVE', 'COPY']) {
        await run({ name: `Destination: ${destination}`, method, path: '/home/f.txt', headers: { destination }, expect: [502] });
      }
    }
    await run({ name: 'no Destination', method: 'MOVE', path: '/home/f.txt', expect: [400] });
    await run({ name: 'Overwrite: maybe', method: 'COPY', path: '/home/f.txt', headers: { destination: '/home/dir/c.txt', overwrite: 'maybe' }, expect: [400] });
    await run({ name: 'Depth: banana', method: 'COPY', path: '/home/f.txt', headers: { destination: '/home/dir/c.txt', depth: 'banana' }, expect: [400] });
  });

  it('answers odd Ranges with 206, 200 (ignored) or 416, never more bytes than the file', async () => {
    for (const range of ODD_RANGES) {
      const res = await davRequest(f.davUrl, 'GET', '/home/f.txt', { auth: u.auth, headers: { range } });
      expect([200, 206, 416], `Range: ${range.slice(0, 60)} answered ${res.status}`).toContain(res.status);
      expect(res.body.byteLength).toBeLessThanOrEqual(CONTENT.length);
      if (res.status === 200) expect(res.body.toString()).toBe(CONTENT);
      await stillAlive(`Range: ${range.slice(0, 60)}`);
    }
  });

  it('answers 400, 404, 409 or 414 to odd paths on every verb', async () => {
    const lockBody = '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
    for (const path of BAD_PATHS) {
      for (const method of ['GET', 'PROPFIND', 'PUT', 'DELETE', 'MKCOL', 'LOCK', 'UNLOCK', 'PROPPATCH', 'MOVE', 'COPY']) {
        await run({
          name: path,
          method,
          path,
          headers: { depth: '0', destination: '/home/dir/elsewhere.txt', 'lock-token': '<opaquelocktoken:nope>' },
          ...(method === 'LOCK' ? { body: lockBody } : {}),
          expect: [400, 403, 404, 405, 409, 412, 414],
        });
      }
    }
    for (const path of EQUIVALENT_PATHS) {
      await run({ name: 'same file', method: 'GET', path, expect: [200] });
      await run({ name: 'same file', method: 'PROPFIND', path, headers: { depth: '0' }, expect: [207] });
    }
  });

  it('refuses request targets and framing that no client sends, at the socket level', async () => {
    const auth = `Authorization: ${u.auth}\r\n`;
    // `true`: the client half-closes after sending (a truncated request); otherwise it waits.
    const cases: Array<[string, string | Buffer, boolean?]> = [
      ['asterisk target', `PROPFIND * HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`],
      ['raw fragment', `GET /home/f.txt#frag HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`],
      ['relative target', `GET home/f.txt HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`],
      ['absolute-form target of a missing file', `GET ftp://x/home/nothing.txt HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`],
      ['raw space in path', `GET /home/f .txt HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`],
      ['raw UTF-8 in path', Buffer.concat([Buffer.from('GET /home/caf'), Buffer.from([0xc3, 0xa9]), Buffer.from(`.txt HTTP/1.1\r\nHost: x\r\n${auth}Connection: close\r\n\r\n`)])],
      ['NUL in header', `GET /home/f.txt HTTP/1.1\r\nHost: x\r\nX-Bad: a\0b\r\n${auth}Connection: close\r\n\r\n`],
      ['garbage request line', 'HELLO THERE\r\n\r\n'],
      ['HTTP/0.9', 'GET /\r\n', true],
      ['bad chunk size', `PUT /home/dir/chunk.txt HTTP/1.1\r\nHost: x\r\n${auth}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\nabc\r\n0\r\n\r\n`],
      ['both Content-Length and chunked', `PUT /home/dir/both.txt HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: 3\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n`],
      ['short body', `PROPFIND /home/ HTTP/1.1\r\nHost: x\r\n${auth}Depth: 1\r\nContent-Length: 500\r\nConnection: close\r\n\r\n<D:propfind`, true],
      ['short PUT body', `PUT /home/dir/short.txt HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: 1000\r\nConnection: close\r\n\r\nonly a few bytes`, true],
      ['negative Content-Length', `PUT /home/dir/neg.txt HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: -5\r\nConnection: close\r\n\r\n`],
    ];
    for (const [name, payload, halfClose] of cases) {
      const status = await rawExchange(payload, { end: halfClose ?? false });
      // 0: the server closed the connection without an answer, which is fine for a truncated request.
      if (halfClose) expect(status === 0 || (status >= 400 && status < 500), `${name} answered ${status}`).toBe(true);
      else expect(status >= 400 && status < 500, `${name} answered ${status}`).toBe(true);
      await stillAlive(name);
    }
    const names = (await f.client.listFolder(u.session, nodeId(dirId))).map((e) => e.name);
    // A body that ended early or could not be framed is never stored.
    expect(names).toEqual([]);
  });

  it('accepts headers up to 512 KiB and answers 431 above, without dying', async () => {
    const fine = await davRequest(f.davUrl, 'PROPFIND', '/home/f.txt', { auth: u.auth, headers: { depth: '0', 'x-padding': 'p'.repeat(400 * 1024) } });
    expect(fine.status).toBe(207);
    await stillAlive('400 KiB header');
    const status = await rawExchange(`PROPFIND /home/f.txt HTTP/1.1\r\nHost: x\r\nX-Padding: ${'p'.repeat(600 * 1024)}\r\nConnection: close\r\n\r\n`);
    expect([0, 431]).toContain(status);
    await stillAlive('600 KiB header');
    const many = Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`x-h-${i}`, String(i)]));
    const manyRes = await davRequest(f.davUrl, 'PROPFIND', '/home/f.txt', { auth: u.auth, headers: { depth: '0', ...many } });
    expect(manyRes.status).toBeLessThan(500);
    await stillAlive('1500 headers');
  });

  it('answers unknown methods with 405 or 501 and a bad method token with 400', async () => {
    // 501 is RFC 9110's answer for a method the server does not recognise (§15.6.2); never a 500.
    // REPORT is served (the favorites report, verbs/report.ts): favorites.test.ts has its refusals.
    for (const method of ['FOO', 'PATCH', 'SEARCH', 'BREW', 'MKCALENDAR', 'ACL', 'BIND', 'VERSION-CONTROL', 'TRACE']) {
      await run({ name: 'unknown method', method, path: '/home/f.txt', expect: [400, 405, 501] });
    }
    const status = await rawExchange(`X-NOT-A-TOKEN@ /home/f.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect(status).toBe(400);
    await stillAlive('invalid method token');
  });

  it('never lets POST write anywhere, with or without credentials', async () => {
    // webdav-server maps POST to its own PUT on its in-memory file system unless the bridge
    // replaces it: an anonymous client could fill the bridge's memory.
    for (const auth of [undefined, u.auth]) {
      for (const path of ['/planted.txt', '/home/planted.txt', '/home/dir/planted.txt']) {
        const res = await raw.request({ path, method: 'POST', headers: auth ? { authorization: auth } : {}, body: 'p'.repeat(1000) });
        await res.body.dump();
        expect([401, 405], `POST ${path} ${auth ? 'as the user' : 'anonymously'} answered ${res.statusCode}`).toContain(res.statusCode);
      }
    }
    expect((await f.client.listFolder(u.session, nodeId('home'))).map((e) => e.name).sort()).toEqual(['dir', 'f.txt']);
  });

  it('answers garbage in Depth, Timeout, Overwrite, Lock-Token and Authorization headers with a 4xx', async () => {
    await run({ name: 'Depth: banana', method: 'PROPFIND', path: '/home/', headers: { depth: 'banana' }, expect: [400] });
    await run({ name: 'Depth: infinity', method: 'PROPFIND', path: '/home/', headers: { depth: 'infinity' }, expect: [403] });
    await run({ name: 'Depth: 2', method: 'LOCK', path: '/home/f.txt', headers: { depth: '2' }, body: '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>', expect: [400] });
    for (const token of ['', '<', '>', '<a b>', '<<x>>', 'x y']) {
      await run({ name: `Lock-Token: ${token}`, method: 'UNLOCK', path: '/home/f.txt', headers: { 'lock-token': token }, expect: [400, 409] });
    }
    for (const authorization of ['Basic', 'Basic !!!!', 'Basic Og==', 'Bearer abc', `Basic ${'A'.repeat(100_000)}`, 'Digest username="x"']) {
      const res = await davRequest(f.davUrl, 'PROPFIND', '/home/', { auth: authorization, headers: { depth: '0' } });
      expect(res.status, authorization.slice(0, 40)).toBe(401);
      await stillAlive(`Authorization: ${authorization.slice(0, 40)}`);
    }
  });

  it('leaves the user files intact after all of it', async () => {
    const home = await f.client.listFolder(u.session, nodeId('home'));
    expect(home.map((e) => e.name).sort()).toEqual(['dir', 'f.txt']);
    const file = await f.client.download(u.session, nodeId(fileId), 'f.txt');
    const chunks: Buffer[] = [];
    for await (const chunk of file.body) chunks.push(Buffer.from(chunk as Buffer));
    expect(Buffer.concat(chunks).toString()).toBe(CONTENT);
  });
});
