/**
 * The client against another server of the interface: a small listening server that answers
 * as the interface defines but makes every choice it leaves open differently from driveway's store
 * (errors as 200 + status "error" without a code, times in seconds, no optional counters,
 * no Range support, upload answers without data). The client must cope with all of it.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStoreClient, nodeId, type HttpStoreClient } from '../../../src/store-client/index.js';

const FILE_BYTES = Buffer.from('0123456789abcdef');

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function foreignServer(): http.Server {
  const uploads: Array<{ name: string; bytes: number }> = [];
  return http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (req.method === 'POST' && url === '/auth') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const { username, password } = JSON.parse(body) as { username: string; password: string };
        if (password !== 'Secret-1') return json(res, 200, { status: 'error', msg: 'Invalid credentials' });
        json(res, 200, { uuid: 'u-1', token: 'not.a.jwt', status: 'success', msg: 'ok', is_admin: 0, fullname: username, fileaccesskey: 'key-1' });
      });
      return;
    }
    if (req.headers.authorization !== 'Bearer not.a.jwt' && url.startsWith('/api/')) return json(res, 401, { status: 'error', msg: 'Not logged in' });
    if (url === '/api/nodes/home/dirlist') {
      return json(res, 200, {
        status: 'success',
        msg: '',
        data: [
          { uuid: 'd-1', name: 'Docs', type: 'Dir', updated: 1_700_000_000 },
          { uuid: 'f-1', name: 'a.txt', type: 'File', size: '16', updated: '1700000001', revision: 3, is_starred: 1 },
          ...uploads.map((u, i) => ({ uuid: `up-${i}`, name: u.name, type: 'File', size: u.bytes, updated: 1_700_000_002, revision: 1 })),
        ],
      });
    }
    if (url === '/api/nodes/missing/dirlist') return json(res, 200, { status: 'error', msg: 'Node not found' });
    if (req.method === 'POST' && url === '/api/nodes/home') return json(res, 200, { status: 'error', msg: 'Folder already exists' });
    if (url === '/api/nodes/home/upload') return json(res, 200, { token: 'up-token', status: 'success', msg: '' });
    if (req.method === 'POST' && url === '/upload/up-token') {
      let bytes = 0;
      let head = '';
      let last = '';
      req.on('data', (c: Buffer) => {
        bytes += c.length;
        if (head.length < 1000) head += c.toString('latin1');
        last = (last + c.toString('latin1')).slice(-64);
      });
      req.on('end', () => {
        const name = /filename="([^"]*)"/.exec(head)?.[1] ?? '?';
        // As the interface says: a file exists only once its body is complete (closing boundary).
        if (!last.endsWith('--\r\n')) return json(res, 400, { status: 'error', msg: 'incomplete upload' });
        uploads.push({ name, bytes });
        json(res, 200, { status: 'success', msg: 'File uploaded' });
      });
      return;
    }
    if (url.startsWith('/resources/auth/download/key-1/f-1/')) {
      // Ignores Range: always the whole file with 200.
      res.writeHead(200, { 'content-length': String(FILE_BYTES.length), 'content-type': 'text/plain' }).end(FILE_BYTES);
      return;
    }
    json(res, 404, { status: 'error', msg: 'no route' });
  });
}

describe('store client against a foreign server of the interface', () => {
  let server: http.Server;
  let client: HttpStoreClient;
  beforeAll(async () => {
    server = foreignServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = createStoreClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { retries: 0 });
  });
  afterAll(async () => {
    await client.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('reads a 200 carrying status "error" as a failure of the right kind', async () => {
    await expect(client.login('x@example.test', 'nope')).rejects.toMatchObject({ kind: 'unauthenticated' });
    const s = await client.login('x@example.test', 'Secret-1');
    await expect(client.listFolder(s, nodeId('missing'))).rejects.toMatchObject({ kind: 'not-found', storeMsg: 'Node not found' });
    await expect(client.createFolder(s, nodeId('home'), 'Docs')).rejects.toMatchObject({ kind: 'conflict' });
  });

  it('normalises listings: times in seconds, numbers as strings, missing counters, 0/1 booleans', async () => {
    const s = await client.login('x@example.test', 'Secret-1');
    expect(s.isAdmin).toBe(false);
    expect(s.expiresAtMs).toBeGreaterThan(Date.now());
    const entries = await client.listFolder(s, nodeId('home'));
    expect(entries.slice(0, 2)).toEqual([
      { id: 'd-1', name: 'Docs', kind: 'folder', sizeBytes: 0, updatedMs: 1_700_000_000_000, isStarred: false },
      { id: 'f-1', name: 'a.txt', kind: 'file', sizeBytes: 16, updatedMs: 1_700_000_001_000, revision: 3, isStarred: true },
    ]);
  });

  it('uploads to a server that answers without data, and learns nothing it did not say', async () => {
    const s = await client.login('x@example.test', 'Secret-1');
    const result = await client.upload(s, { folder: nodeId('home'), name: 'new.bin' }, Readable.from([Buffer.alloc(1000, 7)]), 1000);
    expect(result).toEqual({ id: undefined, revision: undefined, sizeBytes: undefined });
    expect((await client.listFolder(s, nodeId('home'))).find((e) => e.name === 'new.bin')?.sizeBytes).toBeGreaterThan(1000);
  });

  it('checks an OC-Checksum claim itself when the server ignores it: a contradicted body never completes', async () => {
    const s = await client.login('ann', 'Secret-1');
    const bytes = Buffer.alloc(300_000, 9);
    const sha1 = createHash('sha1').update(bytes).digest('hex');
    const wrong = createHash('sha1').update('other').digest('hex');
    for (const body of [() => Readable.from([bytes.subarray(0, 100_000), bytes.subarray(100_000)]), () => bytes]) {
      const refused = client.upload(s, { folder: nodeId('home'), name: 'bad.bin' }, body(), bytes.length, undefined, { checksum: `SHA1:${wrong}` });
      await expect(refused).rejects.toMatchObject({ kind: 'invalid', code: 'checksum_mismatch' });
    }
    expect((await client.listFolder(s, nodeId('home'))).map((e) => e.name)).not.toContain('bad.bin');
    await client.upload(s, { folder: nodeId('home'), name: 'good.bin' }, Readable.from([bytes]), bytes.length, undefined, { checksum: `SHA1:${sha1}` });
    const good = (await client.listFolder(s, nodeId('home'))).find((e) => e.name === 'good.bin');
    expect(good).toBeDefined();
    // A store that publishes no checksums: none are made up.
    expect(good?.checksums).toBeUndefined();
  });

  it('reports a Range the server ignored, so the caller can skip bytes itself', async () => {
    const s = await client.login('x@example.test', 'Secret-1');
    const download = await client.download(s, nodeId('f-1'), 'a.txt', { range: { start: 4, end: 7 } });
    expect(download).toMatchObject({ status: 200, rangeHonoured: false, totalBytes: 16 });
    const chunks: Buffer[] = [];
    for await (const chunk of download.body) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks)).toEqual(FILE_BYTES);
  });
});
