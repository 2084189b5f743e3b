/**
 * The "node floor" of `npm run bench` (bench/drive.ts): the least a Node HTTP server must do to
 * serve the benchmark's requests from a local folder, so the same run shows what Node itself
 * reaches on this machine next to driveway, rclone and Apache (issue 9: a target that looks out
 * of reach is judged against what Node can do here).
 *
 *   node <flags> raw-node.js --root DIR --port N
 *
 * GET and HEAD stream a file (one single `Range: bytes=a-b` honoured) with 1 MiB reads; PUT
 * writes the body to a temp file in the target folder, fsyncs it once and renames it into place
 * (driveway's durability for one file, minus its database commit); MKCOL makes a folder;
 * PROPFIND Depth 0 or 1 answers from readdir and stat with the live properties rclone needs.
 * PATCH with `Upload-Offset` and `Upload-Length` is the floor of a tus upload's parts
 * (bench/chunked-upload.ts): the body written at its offset into one temp file per target, the
 * part that ends at Upload-Length fsyncs it and renames it into place; no session, no database.
 * No authentication, no locks, no dead properties, no XML parsing of request bodies: it is a
 * floor, not a WebDAV server.
 *
 * With --hashes, a PUT also computes the SHA-1 and MD5 of its body, on the receiving thread as
 * the chunks pass (no copy, no messages): the CPU a server publishing clients' checksums must
 * spend at the least (bench/put-hashing.ts sets the floors side by side). With --sha1, SHA-1
 * alone: what driveway's answer to a large PUT waits for (its MD5 comes after the answer).
 *
 * It must import nothing but node's own modules: drive.ts transpiles this one file and runs it
 * with plain node (the product's flags), so no loader's memory or CPU shows in its figures.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, promises as fsp, type Stats } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';

const READ_CHUNK_BYTES = 1024 * 1024;

const { values } = parseArgs({ options: { root: { type: 'string' }, port: { type: 'string' }, hashes: { type: 'boolean', default: false }, sha1: { type: 'boolean', default: false } }, strict: true });
if (!values.root || !values.port) {
  process.stderr.write('usage: raw-node --root DIR --port N [--hashes | --sha1]\n');
  process.exit(2);
}
const root = path.resolve(values.root);
let tempCounter = 0;

/** A pass-through that feeds the body to SHA-1 and, unless `sha1Only`, MD5 (--hashes, --sha1); `digest()` after the end. */
function hashingTap(sha1Only: boolean): { tap: Transform; digest: () => string } {
  const sha1 = createHash('sha1');
  const md5 = sha1Only ? undefined : createHash('md5');
  const tap = new Transform({
    transform(chunk: Buffer, _enc, callback) {
      sha1.update(chunk);
      md5?.update(chunk);
      callback(null, chunk);
    },
  });
  return { tap, digest: () => [sha1.digest('hex'), ...(md5 ? [md5.digest('hex')] : [])].join(' ') };
}

/** The file under root a request path names, or undefined when it would leave root. */
function localPath(urlPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath.split('?')[0] ?? '/');
  } catch {
    return undefined;
  }
  const resolved = path.resolve(root, `.${path.posix.normalize(`/${decoded}`)}`);
  return resolved === root || resolved.startsWith(`${root}${path.sep}`) ? resolved : undefined;
}

function finish(res: http.ServerResponse, status: number, headers: http.OutgoingHttpHeaders = {}): void {
  res.writeHead(status, { 'content-length': 0, ...headers });
  res.end();
}

async function serveFile(req: http.IncomingMessage, res: http.ServerResponse, file: string): Promise<void> {
  const stats = await fsp.stat(file);
  if (stats.isDirectory()) return finish(res, 405);
  let start = 0;
  let end = stats.size - 1;
  let status = 200;
  const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
  if (range) {
    start = Number(range[1]);
    end = range[2] === '' ? end : Math.min(end, Number(range[2]));
    if (start > end) return finish(res, 416, { 'content-range': `bytes */${stats.size}` });
    status = 206;
  }
  res.writeHead(status, {
    'content-length': end - start + 1,
    'content-type': 'application/octet-stream',
    'accept-ranges': 'bytes',
    ...(status === 206 ? { 'content-range': `bytes ${start}-${end}/${stats.size}` } : {}),
  });
  if (req.method === 'HEAD' || end < start) {
    res.end();
    return;
  }
  await pipeline(createReadStream(file, { start, end, highWaterMark: READ_CHUNK_BYTES }), res);
}

async function receiveFile(req: http.IncomingMessage, res: http.ServerResponse, file: string): Promise<void> {
  const existed = await fsp.stat(file).then(() => true, () => false);
  const temp = path.join(path.dirname(file), `.raw-node-${process.pid}-${tempCounter++}.part`);
  let checksums: string | undefined;
  try {
    const out = createWriteStream(temp);
    const hashing = values.hashes || values.sha1 ? hashingTap(!values.hashes) : undefined;
    if (hashing) await pipeline(req, hashing.tap, out);
    else await pipeline(req, out);
    if (hashing) checksums = hashing.digest();
    const handle = await fsp.open(temp, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsp.rename(temp, file);
  } catch (err) {
    await fsp.rm(temp, { force: true });
    throw err;
  }
  finish(res, existed ? 204 : 201, checksums ? { 'x-checksums': checksums } : {});
}

async function receivePart(req: http.IncomingMessage, res: http.ServerResponse, file: string): Promise<void> {
  const offset = Number(req.headers['upload-offset']);
  const length = Number(req.headers['upload-length']);
  if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || offset > length) {
    req.resume();
    return finish(res, 400);
  }
  const temp = path.join(path.dirname(file), `.raw-node-tus-${path.basename(file)}.part`);
  const handle = await fsp.open(temp, offset === 0 ? 'w' : 'r+');
  let at = offset;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      await handle.write(chunk, 0, chunk.length, at);
      at += chunk.length;
    }
    if (at === length) await handle.sync();
  } finally {
    await handle.close();
  }
  if (at === length) await fsp.rename(temp, file);
  finish(res, 204, { 'upload-offset': String(at) });
}

function xmlEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function propResponse(href: string, stats: Stats): string {
  const isDir = stats.isDirectory();
  return (
    `<D:response><D:href>${xmlEscape(href)}</D:href><D:propstat><D:prop>` +
    `<D:resourcetype>${isDir ? '<D:collection/>' : ''}</D:resourcetype>` +
    (isDir ? '' : `<D:getcontentlength>${stats.size}</D:getcontentlength>`) +
    `<D:getlastmodified>${stats.mtime.toUTCString()}</D:getlastmodified>` +
    `<D:getetag>"${stats.mtimeMs.toString(16)}-${stats.size.toString(16)}"</D:getetag>` +
    '</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>'
  );
}

async function propfind(req: http.IncomingMessage, res: http.ServerResponse, target: string, urlPath: string): Promise<void> {
  // The request body (allprop or a prop list) gets the same answer: drain it.
  req.resume();
  const stats = await fsp.stat(target);
  const selfHref = urlPath.split('?')[0] ?? '/';
  const parts = [propResponse(selfHref, stats)];
  if (stats.isDirectory() && req.headers.depth !== '0') {
    const base = selfHref.endsWith('/') ? selfHref : `${selfHref}/`;
    const names = (await fsp.readdir(target)).filter((name) => !name.startsWith('.raw-node-'));
    const children = await Promise.all(names.map(async (name) => [name, await fsp.stat(path.join(target, name))] as const));
    for (const [name, child] of children) parts.push(propResponse(`${base}${encodeURIComponent(name)}${child.isDirectory() ? '/' : ''}`, child));
  }
  const body = Buffer.from(`<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:">${parts.join('')}</D:multistatus>`);
  res.writeHead(207, { 'content-type': 'application/xml; charset=utf-8', 'content-length': body.length });
  res.end(body);
}

async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const urlPath = req.url ?? '/';
  const target = localPath(urlPath);
  if (!target) return finish(res, 400);
  switch (req.method) {
    case 'GET':
    case 'HEAD':
      return serveFile(req, res, target);
    case 'PUT':
      return receiveFile(req, res, target);
    case 'PATCH':
      return receivePart(req, res, target);
    case 'MKCOL':
      req.resume();
      await fsp.mkdir(target);
      return finish(res, 201);
    case 'PROPFIND':
      return propfind(req, res, target, urlPath);
    case 'OPTIONS':
      req.resume();
      return finish(res, 200, { dav: '1', allow: 'OPTIONS, GET, HEAD, PUT, PATCH, MKCOL, PROPFIND' });
    default:
      req.resume();
      return finish(res, 405);
  }
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code;
    const status = code === 'ENOENT' ? (req.method === 'PUT' || req.method === 'MKCOL' ? 409 : 404) : code === 'EEXIST' ? 405 : 500;
    if (status === 500) process.stderr.write(`raw-node: ${req.method} ${req.url}: ${err instanceof Error ? err.message : String(err)}\n`);
    if (!res.headersSent) finish(res, status);
    else res.destroy();
  });
});
// A 1 GiB PUT or GET takes longer than node's default request timeout would allow on a busy machine.
server.requestTimeout = 0;
server.listen(Number(values.port), '127.0.0.1', () => {
  process.stdout.write(`raw-node: http://127.0.0.1:${values.port}/ serving ${root}\n`);
});
const stop = (): void => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
