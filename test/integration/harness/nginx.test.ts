/**
 * The nginx of test/helpers/nginx.ts in front of two tiny HTTP servers on loopback, held to what
 * driveway instances behind it need: round robin, every WebDAV method with its headers and body,
 * the client's Host and address passed on, a 64 MiB PUT streamed to the backend as it arrives
 * (not spooled by nginx first), a backend's 503 with Retry-After passed through untouched and
 * not retried on the other backend, a reload that swaps the backends, and stop() ending only it.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { davProxyLocation, requireNginx, startNginx, type TestNginx } from '../../helpers/nginx.js';

const nginx = requireNginx();

interface Seen {
  backend: string;
  method: string;
  url: string;
  host?: string;
  forwardedFor?: string;
  depth?: string;
  destination?: string;
  body: string;
}

const MiB = 1024 * 1024;

/** The upload in flight: bytes the backend has received so far, and a hook when the first arrive. */
const upload = { received: 0, onFirstBytes: undefined as (() => void) | undefined };

function startBackend(name: string, seen: Seen[]): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer((req, res) => {
    if (req.method === 'PUT' && req.url === '/big') {
      const hash = createHash('sha256');
      upload.received = 0;
      req.on('data', (chunk: Buffer) => {
        if (upload.received === 0) upload.onFirstBytes?.();
        upload.received += chunk.length;
        hash.update(chunk);
      });
      req.on('end', () => {
        res.writeHead(201, { 'x-backend': name, 'content-type': 'application/json' });
        res.end(JSON.stringify({ bytes: upload.received, sha256: hash.digest('hex') }));
      });
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      seen.push({
        backend: name,
        method: req.method ?? '',
        url: req.url ?? '',
        host: req.headers.host,
        forwardedFor: req.headers['x-forwarded-for'] as string | undefined,
        depth: req.headers.depth as string | undefined,
        destination: req.headers.destination as string | undefined,
        body: Buffer.concat(chunks).toString(),
      });
      if (req.url === '/busy') {
        res.writeHead(503, { 'retry-after': '7', 'x-backend': name, 'content-type': 'text/plain' });
        res.end('database unreachable');
        return;
      }
      const status = req.method === 'PROPFIND' ? 207 : 200;
      res.writeHead(status, { 'x-backend': name, 'content-type': 'text/plain' });
      res.end(`${name} ${req.method} ${req.url}`);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })));
}

function request(
  url: string,
  options: { method: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method, headers: options.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

nginx.describe('nginx in front of two backends', () => {
  const seen: Seen[] = [];
  let a: { url: string; server: http.Server };
  let b: { url: string; server: http.Server };
  let balancer: TestNginx;

  beforeAll(async () => {
    [a, b] = await Promise.all([startBackend('a', seen), startBackend('b', seen)]);
    balancer = await startNginx([a.url, b.url]);
  });
  afterAll(async () => {
    await balancer?.stop();
    a?.server.close();
    b?.server.close();
  });

  it('alternates between the backends, round robin', async () => {
    const served: string[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await request(`${balancer.url}/rr/${i}`, { method: 'GET' });
      expect(response.status).toBe(200);
      served.push(String(response.headers['x-backend']));
    }
    expect(served.slice(0, 2).sort()).toEqual(['a', 'b']);
    for (let i = 2; i < served.length; i++) expect(served[i]).toBe(served[i - 2]);
  });

  it('passes PROPFIND, LOCK, MOVE and PROPPATCH with their headers, body, the Host and the client address', async () => {
    seen.length = 0;
    const body = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>';
    const propfind = await request(`${balancer.url}/dav/folder/`, { method: 'PROPFIND', headers: { Depth: '1', 'Content-Type': 'application/xml' }, body });
    expect(propfind.status).toBe(207);
    expect(propfind.body).toMatch(/^[ab] PROPFIND \/dav\/folder\/$/);

    const destination = `${balancer.url}/dav/renamed.txt`;
    for (const method of ['LOCK', 'MOVE', 'PROPPATCH', 'MKCOL', 'UNLOCK']) {
      const response = await request(`${balancer.url}/dav/file.txt`, { method, headers: { Destination: destination, Depth: '0' }, body: method === 'LOCK' ? '<lockinfo/>' : '' });
      expect(response.status, method).toBe(200);
      expect(response.body).toMatch(new RegExp(`^[ab] ${method} /dav/file.txt$`));
    }
    expect(seen.map((s) => s.method)).toEqual(['PROPFIND', 'LOCK', 'MOVE', 'PROPPATCH', 'MKCOL', 'UNLOCK']);
    expect(seen[0]).toMatchObject({ depth: '1', body, host: `127.0.0.1:${balancer.port}`, forwardedFor: '127.0.0.1' });
    expect(seen[1]?.body).toBe('<lockinfo/>');
    expect(seen[2]?.destination).toBe(destination);
  });

  it('streams a 64 MiB PUT to the backend as it arrives, unbuffered, byte for byte', async () => {
    const total = 64 * MiB;
    const chunk = Buffer.alloc(MiB);
    const expected = createHash('sha256');
    const firstBytes = new Promise<void>((resolve) => (upload.onFirstBytes = resolve));
    let sentWhenBackendSawBytes = -1;

    const result = await new Promise<{ status: number; backend: string; body: string }>((resolve, reject) => {
      const req = http.request(`${balancer.url}/big`, { method: 'PUT', headers: { 'content-length': String(total), 'content-type': 'application/octet-stream' } }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (part: Buffer) => parts.push(part));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, backend: String(res.headers['x-backend']), body: Buffer.concat(parts).toString() }));
      });
      req.on('error', reject);
      void (async () => {
        let sent = 0;
        for (let i = 0; i < total / MiB; i++) {
          chunk.fill(i % 251);
          expected.update(chunk);
          if (!req.write(Buffer.from(chunk))) await new Promise((resolve) => req.once('drain', resolve));
          sent += MiB;
          if (sent === 4 * MiB) {
            // Hold the rest back until the backend has seen bytes: with a buffering proxy the
            // backend would see nothing before the whole body arrived, and this would time out.
            const timeout = new Promise<never>((_, fail) => setTimeout(() => fail(new Error('the backend saw no bytes after 4 MiB sent: nginx buffers the request body')), 10_000).unref());
            await Promise.race([firstBytes, timeout]);
            sentWhenBackendSawBytes = sent;
          }
        }
        req.end();
      })().catch((err: unknown) => {
        req.destroy(err as Error);
        reject(err as Error);
      });
    });

    expect(result.status).toBe(201);
    expect(sentWhenBackendSawBytes).toBe(4 * MiB);
    expect(JSON.parse(result.body)).toEqual({ bytes: total, sha256: expected.digest('hex') });
  });

  it("passes a backend's 503 and Retry-After through, without retrying it on the other backend", async () => {
    seen.length = 0;
    const response = await request(`${balancer.url}/busy`, { method: 'PUT', body: 'x' });
    expect(response.status).toBe(503);
    expect(response.headers['retry-after']).toBe('7');
    expect(response.body).toBe('database unreachable');
    expect(seen.filter((s) => s.url === '/busy')).toHaveLength(1);
  });

  it('swaps its backends on reload, and serves during it', async () => {
    await balancer.reload([b.url]);
    const served = new Set<string>();
    for (let i = 0; i < 4; i++) served.add(String((await request(`${balancer.url}/after-reload`, { method: 'GET' })).headers['x-backend']));
    expect([...served]).toEqual(['b']);
    await balancer.reload([a.url, b.url]);
    await expect(balancer.reload(['https://example.invalid/'])).rejects.toThrow(/a backend is http:\/\/host:port/);
  });

  it('generates one location block holding the settings WebDAV needs', () => {
    const block = davProxyLocation('driveway', '');
    for (const setting of [
      'proxy_pass http://driveway;',
      'client_max_body_size 0;',
      'proxy_request_buffering off;',
      'proxy_buffering off;',
      'proxy_http_version 1.1;',
      'proxy_set_header Connection "";',
      'proxy_set_header Host $http_host;',
      'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    ]) {
      expect(block).toContain(setting);
    }
    expect(block).not.toMatch(/limit_except/);
  });
});

nginx.describe('stopping nginx', () => {
  it('ends the master it started and frees its port; the backend stays up', async () => {
    const backend = await startBackend('solo', []);
    const own = await startNginx([backend.url]);
    expect((await request(`${own.url}/x`, { method: 'GET' })).status).toBe(200);
    await own.stop();
    expect(() => process.kill(own.pid, 0)).toThrow();
    await expect(request(`${own.url}/x`, { method: 'GET' })).rejects.toThrow(/ECONNREFUSED/);
    expect((await request(`${backend.url}/x`, { method: 'GET' })).status).toBe(200);
    await own.stop(); // idempotent
    backend.server.close();
  });
});
