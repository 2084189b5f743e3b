/**
 * The nginx of test/helpers/nginx.ts in front of two tiny HTTP servers on loopback, held to what
 * driveway instances behind it need: round robin, every WebDAV method with its headers and body,
 * the client's Host and address passed on, a 64 MiB PUT streamed to the backend as it arrives
 * (not spooled by nginx first), a backend's 503 with Retry-After passed through untouched and
 * not retried on the other backend, a reload that swaps the backends, stop() ending only it, and
 * an access log without the tokens URLs carry. Then docs/deploy.md's nginx.conf for one machine
 * (localNginxConf), run as the doc says, from a folder with -c and -p, and stopped with -s quit.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freeLoopbackPort } from '../../helpers/free-port.js';
import { davProxyLocation, LOCAL_NGINX_EXAMPLE, localNginxConf, requireNginx, startNginx, type TestNginx } from '../../helpers/nginx.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

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

/** The log as `read` gives it once it holds every one of `wanted` (nginx writes a line after its answer went out); at most 5 s. */
async function logHolding(read: () => string, wanted: readonly string[]): Promise<string> {
  const deadline = Date.now() + 5_000;
  let log = read();
  while (!wanted.every((line) => log.includes(line)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    log = read();
  }
  return log;
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

  it('logs each request with the tokens of its URL replaced by [redacted]', async () => {
    const paths = {
      '/public/LINKSECRET1/sub/file.txt?inline=1': '/public/[redacted]/sub/file.txt?inline=1',
      '/public/LINKSECRET2': '/public/[redacted]',
      '/upload/UPLOADSECRET': '/upload/[redacted]',
      '/resources/auth/view/KEYSECRET1/7d0c/3/name.txt': '/resources/auth/view/[redacted]/7d0c/3/name.txt',
      '/resources/auth/download/KEYSECRET2/7d0c/3/': '/resources/auth/download/[redacted]/7d0c/3/',
      '/api/user/logout?Token=QUERYSECRET&all=1': '/api/user/logout?[redacted]',
      '/dav/home/public/upload/kept.txt?key=QUERYSECRET2': '/dav/home/public/upload/kept.txt?[redacted]',
      '/dav/home/public/kept.txt': '/dav/home/public/kept.txt',
    };
    for (const url of Object.keys(paths)) expect((await request(balancer.url + url, { method: 'GET' })).status).toBe(200);
    const wanted = Object.values(paths).map((logged) => `"GET ${logged} HTTP/1.1" 200 `);
    const log = await logHolding(() => balancer.accessLog(), wanted);
    expect(log).not.toMatch(/SECRET/);
    for (const line of wanted) expect(log).toContain(line);
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

nginx.describe("docs/deploy.md's nginx.conf for one machine", () => {
  it('passes nginx -t as written, from a folder of its own', () => {
    const folder = makeTmpDir('dw-nginx-example-');
    try {
      writeFileSync(path.join(folder.dir, 'nginx.conf'), localNginxConf(LOCAL_NGINX_EXAMPLE));
      const test = spawnSync(nginx.path, ['-t', '-c', `${folder.dir}/nginx.conf`, '-p', folder.dir], { cwd: folder.dir, encoding: 'utf8' });
      expect(test.status, test.stderr).toBe(0);
    } finally {
      folder.remove();
    }
  });

  it('serves both upstreams round robin, logs with tokens redacted, writes only in its folder, and stops with -s quit', async () => {
    const seen: Seen[] = [];
    const backends = await Promise.all(['store-a', 'store-b', 'dav-a', 'dav-b'].map((name) => startBackend(name, seen)));
    const folder = makeTmpDir('dw-nginx-example-');
    // As root nginx hands its workers to an unprivileged user, who must reach the folder (an
    // operator runs it as themselves, where none of this applies).
    const root = process.getuid?.() === 0;
    if (root) chmodSync(folder.dir, 0o711);
    const [storeA, storeB, davA, davB] = backends.map((b) => b.url) as [string, string, string, string];
    const args = ['-c', `${folder.dir}/nginx.conf`, '-p', folder.dir];
    const errorLog = (): string => (existsSync(path.join(folder.dir, 'error.log')) ? readFileSync(path.join(folder.dir, 'error.log'), 'utf8') : '');
    /** nginx in the foreground (the test holds its PID; the doc's command daemonises): its process, its exit, whether it answered within 10 s. */
    const start = async (storePort: number, davPort: number) => {
      writeFileSync(path.join(folder.dir, 'nginx.conf'), localNginxConf({ storePort, davPort, store: [storeA, storeB], dav: [davA, davB] }));
      const child = spawn(nginx.path, [...args, '-g', root ? 'daemon off; user nobody nogroup;' : 'daemon off;'], { cwd: folder.dir, stdio: 'ignore' });
      const done = new Promise<number | null>((resolve) => child.once('exit', resolve));
      const deadline = Date.now() + 10_000;
      let up = false;
      while (!up && Date.now() < deadline && child.exitCode === null) {
        up = await request(`http://127.0.0.1:${storePort}/ready`, { method: 'GET' }).then(
          () => true,
          () => false,
        );
        if (!up) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return { child, done, up };
    };
    let storePort = 0;
    let davPort = 0;
    let started: Awaited<ReturnType<typeof start>> | undefined;
    // A free port may be taken by another process before nginx binds it: up to three pairs.
    for (let attempt = 1; attempt <= 3 && !started?.up; attempt++) {
      if (started && !/Address already in use/.test(errorLog())) break;
      [storePort, davPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
      started = await start(storePort, davPort);
    }
    const { child: master, done: exited } = started as Awaited<ReturnType<typeof start>>;
    try {
      expect(started?.up, errorLog()).toBe(true);
      const served = new Set<string>();
      for (let i = 0; i < 4; i++) served.add(String((await request(`http://127.0.0.1:${storePort}/public/LINKSECRET/x`, { method: 'GET' })).headers['x-backend']));
      for (let i = 0; i < 4; i++) served.add(String((await request(`http://127.0.0.1:${davPort}/home/`, { method: 'PROPFIND', headers: { depth: '1' } })).headers['x-backend']));
      expect([...served].sort()).toEqual(['dav-a', 'dav-b', 'store-a', 'store-b']);
      const wanted = ['"GET /public/[redacted]/x HTTP/1.1" 200 ', '"PROPFIND /home/ HTTP/1.1" 207 '];
      const log = await logHolding(() => readFileSync(path.join(folder.dir, 'access.log'), 'utf8'), wanted);
      for (const line of wanted) expect(log).toContain(line);
      expect(log).not.toMatch(/SECRET/);
      expect(readdirSync(folder.dir).sort()).toEqual(['access.log', 'client_body_temp', 'error.log', 'fastcgi_temp', 'nginx.conf', 'nginx.pid', 'proxy_temp', 'scgi_temp', 'uwsgi_temp']);

      const quit = spawnSync(nginx.path, [...args, '-s', 'quit'], { cwd: folder.dir, encoding: 'utf8' });
      expect(quit.status, quit.stderr).toBe(0);
      const timer = setTimeout(() => master.kill('SIGKILL'), 10_000);
      expect(await exited).toBe(0);
      clearTimeout(timer);
    } finally {
      if (master.exitCode === null && master.signalCode === null) master.kill('SIGKILL');
      await exited;
      for (const backend of backends) backend.server.close();
      folder.remove();
    }
  });
});
