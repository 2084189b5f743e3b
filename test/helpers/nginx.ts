/**
 * nginx in front of several driveway instances, for the multi-instance suites: Debian's nginx
 * as a foreground process of ours (`daemon off`), its config, pid file, logs and temp folders
 * in a temp folder, listening on a free port of 127.0.0.1, round robin over the given backends.
 * Never the system service: stop() and reload() signal the master PID we spawned, nothing else.
 *
 *   const nginx = requireNginx();
 *   nginx.describe('two instances behind nginx', () => {
 *     const balancer = await startNginx([a.url, b.url]);   // balancer.url, balancer.stop()
 *   });
 *
 * davProxyLocation() is the proxy part (what WebDAV needs from a reverse proxy), pushProxyLocation()
 * the push websocket's, and
 * redactingLogFormat() the access log that keeps no token: docs/deploy.md quotes both, and its
 * nginx example for one machine is localNginxConf()'s output as a whole
 * (test/unit/docs/deploy-doc.test.ts compares them), so tests and docs cannot drift.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freeLoopbackPort } from './free-port.js';
import { requireBinary, type RequireBinaryOptions, type RequiredBinary } from './require-binary.js';
import { startWatchdog } from './watchdog.js';

/** Debian puts nginx in /usr/sbin, which is not on a non-root user's PATH. */
export function requireNginx(options: RequireBinaryOptions = {}): RequiredBinary {
  return requireBinary('nginx', { candidates: ['/usr/sbin/nginx'], ...options });
}

/**
 * The `location` block that proxies a WebDAV server through nginx:
 * - every method passes (nginx forwards PROPFIND, LOCK, MOVE, ... as they come; no limit_except);
 * - bodies of any size (client_max_body_size 0), streamed both ways: proxy_request_buffering off
 *   (a 10 GiB PUT is not spooled to nginx's disk first, and the backend sees it as it arrives),
 *   proxy_buffering off (GET streams, and a slow client does not fill nginx's temp files);
 * - HTTP/1.1 with keepalive to the backends (Connection cleared, `keepalive` in the upstream);
 * - Host as the client sent it (Destination of MOVE and COPY names that host), the client's
 *   address in X-Forwarded-For, the scheme in X-Forwarded-Proto;
 * - long timeouts, for slow uploads and downloads of large files;
 * - a request goes to another backend when the connection to the first one fails (nginx's
 *   default `proxy_next_upstream error timeout`), unless nginx cannot send it whole any more: an
 *   upload whose body was flowing, a POST, LOCK or PATCH already sent (docs/deploy.md).
 */
export function davProxyLocation(upstream: string, indent = '    '): string {
  return [
    'location / {',
    `    proxy_pass http://${upstream};`,
    '    proxy_http_version 1.1;',
    '    proxy_set_header Connection "";',
    '    proxy_set_header Host $http_host;',
    '    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    '    proxy_set_header X-Forwarded-Proto $scheme;',
    '    client_max_body_size 0;',
    '    proxy_request_buffering off;',
    '    proxy_buffering off;',
    '    proxy_max_temp_file_size 0;',
    '    proxy_redirect off;',
    '    proxy_connect_timeout 5s;',
    '    proxy_send_timeout 1h;',
    '    proxy_read_timeout 1h;',
    '}',
  ]
    .map((line) => indent + line)
    .join('\n');
}

/**
 * The `location` block that passes the push websocket (`/push/ws`, bridge/nextcloud/push.ts) to
 * the bridge: nginx drops `Upgrade` and `Connection` (hop-by-hop) unless told to send them, and
 * the socket stays open for hours (the bridge pings a silent one every 30 s, so the read timeout
 * never strikes a live one). Beside davProxyLocation() in the bridge's `server`.
 */
export function pushProxyLocation(upstream: string, indent = '    '): string {
  return [
    'location = /push/ws {',
    `    proxy_pass http://${upstream};`,
    '    proxy_http_version 1.1;',
    '    proxy_set_header Upgrade $http_upgrade;',
    '    proxy_set_header Connection "upgrade";',
    '    proxy_set_header Host $http_host;',
    '    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
    '    proxy_set_header X-Forwarded-Proto $scheme;',
    '    proxy_read_timeout 1h;',
    '}',
  ]
    .map((line) => indent + line)
    .join('\n');
}

/**
 * The access log format of docs/deploy.md: nginx's `combined` line without the tokens some URLs
 * carry, as driveway's own log hides them (common/logger.ts redactUrl): the link token of
 * `/public/<token>`, the upload token of `/upload/<token>`, the fileaccesskey of
 * `/resources/auth/{view|download|zip|...}/<key>/...`, and any query naming token, key or password
 * (the whole query goes). No Referer: a browser sends a link's URL there. Lines of `http {}`;
 * a server logs with it by `access_log <file> redacted;`.
 */
export function redactingLogFormat(indent = '    '): string {
  return [
    '# Tokens travel in some URLs: the access log gets them as [redacted].',
    'map $request_uri $driveway_path {',
    '    "~^(?<dw_head>/(?:public|upload|resources/auth/[a-z]+)/)[^/?]+(?<dw_tail>.*)$" "${dw_head}[redacted]${dw_tail}";',
    '    default $request_uri;',
    '}',
    'map $driveway_path $driveway_uri {',
    '    "~*^(?<dw_path>[^?]*)\\?(?:.*&)?(?:token|chat_token|key|password|access_token)=" "${dw_path}?[redacted]";',
    '    default $driveway_path;',
    '}',
    "log_format redacted '$remote_addr - $remote_user [$time_local] \"$request_method $driveway_uri $server_protocol\" '",
    "                    '$status $body_bytes_sent \"$http_user_agent\" $request_time';",
  ]
    .map((line) => indent + line)
    .join('\n');
}

/** The ports and backends of docs/deploy.md's nginx for one machine (README "Scaling out" starts those instances). */
export const LOCAL_NGINX_EXAMPLE = {
  storePort: 8080,
  davPort: 8081,
  store: ['http://127.0.0.1:8180', 'http://127.0.0.1:8280'],
  dav: ['http://127.0.0.1:8181', 'http://127.0.0.1:8281'],
} as const;

/**
 * docs/deploy.md's complete nginx.conf for a trial on one machine: plain HTTP on 127.0.0.1, run
 * by an ordinary user from a folder of theirs (`nginx -c $PWD/nginx.conf -p $PWD`): every path
 * (pid, logs, temp folders) is relative to that folder, so nginx writes nothing outside it.
 */
export function localNginxConf(options: { storePort: number; davPort: number; store: readonly string[]; dav: readonly string[] }): string {
  return [
    '# nginx in front of driveway on one machine: plain HTTP on 127.0.0.1, for a trial.',
    '# Run it as yourself (not root) from the folder holding this file:',
    '#   /usr/sbin/nginx -c "$PWD/nginx.conf" -p "$PWD"        (stop: the same with -s quit)',
    '# Every path below is relative to that folder: nginx writes nothing outside it.',
    'worker_processes 1;',
    'pid nginx.pid;',
    'error_log error.log warn;',
    'events {',
    '    worker_connections 1024;',
    '}',
    'http {',
    '    client_body_temp_path client_body_temp;',
    '    proxy_temp_path proxy_temp;',
    '    fastcgi_temp_path fastcgi_temp;',
    '    uwsgi_temp_path uwsgi_temp;',
    '    scgi_temp_path scgi_temp;',
    redactingLogFormat('    '),
    '    access_log access.log redacted;',
    upstreamBlock('driveway_store', options.store),
    upstreamBlock('driveway_dav', options.dav),
    '    server {',
    `        listen 127.0.0.1:${options.storePort};`,
    davProxyLocation('driveway_store', '        '),
    '    }',
    '    server {',
    `        listen 127.0.0.1:${options.davPort};`,
    '        # davfs2 sends one If header listing every lock token it holds.',
    '        large_client_header_buffers 8 64k;',
    davProxyLocation('driveway_dav', '        '),
    pushProxyLocation('driveway_dav', '        '),
    '    }',
    '}',
    '',
  ].join('\n');
}

/** Round robin over `backends` (http://host:port URLs), with idle keepalive connections to them. */
export function upstreamBlock(name: string, backends: readonly string[], indent = '    '): string {
  if (backends.length === 0) throw new Error('nginx needs at least one backend');
  const servers = backends.map((backend) => {
    const url = new URL(backend);
    if (url.protocol !== 'http:' || url.pathname !== '/' || url.search) throw new Error(`a backend is http://host:port, not ${backend}`);
    return `    server ${url.host};`;
  });
  return [`upstream ${name} {`, ...servers, '    keepalive 16;', '}'].map((line) => indent + line).join('\n');
}

/** The path nginx itself answers (never a backend) with the config generation, so a reload can be awaited. */
export const GENERATION_PATH = '/.driveway-test-nginx-generation';

function renderConfig(dir: string, port: number, backends: readonly string[], generation: number, user: string | undefined, bodyLimit: string | undefined): string {
  const config = [
    'daemon off;',
    'master_process on;',
    'worker_processes 1;',
    ...(user ? [`user ${user};`] : []),
    `pid ${dir}/nginx.pid;`,
    `error_log ${dir}/error.log warn;`,
    'events { worker_connections 1024; }',
    'http {',
    redactingLogFormat('    '),
    `    access_log ${dir}/access.log redacted;`,
    `    client_body_temp_path ${dir}/client_body;`,
    `    proxy_temp_path ${dir}/proxy;`,
    `    fastcgi_temp_path ${dir}/fastcgi;`,
    `    uwsgi_temp_path ${dir}/uwsgi;`,
    `    scgi_temp_path ${dir}/scgi;`,
    // Long paths and If: headers with several lock tokens fit.
    '    large_client_header_buffers 8 64k;',
    upstreamBlock('driveway', backends),
    '    server {',
    `        listen 127.0.0.1:${port};`,
    '        server_name _;',
    `        location = ${GENERATION_PATH} { default_type text/plain; return 200 "${generation}"; }`,
    davProxyLocation('driveway', '        '),
    pushProxyLocation('driveway', '        '),
    '    }',
    '}',
    '',
  ].join('\n');
  // A proxy with a body limit (Cloudflare's 100 MB, a default nginx's 1m), where a big PUT is refused.
  return bodyLimit === undefined ? config : config.replace('client_max_body_size 0;', `client_max_body_size ${bodyLimit};`);
}

export interface TestNginx {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  /** The master process we spawned. */
  pid: number;
  /** Swaps the backends (config rewritten, tested, SIGHUP); resolves once new workers serve it. */
  reload(backends: readonly string[]): Promise<void>;
  /** Graceful stop of our master (SIGQUIT, then SIGTERM, then SIGKILL to it and its workers); removes the folder. */
  stop(): Promise<void>;
  /** nginx's error log so far, for a failing test's message. */
  errorLog(): string;
  /** nginx's access log so far (the `redacted` format of docs/deploy.md). */
  accessLog(): string;
}

async function generationServed(url: string): Promise<string | undefined> {
  try {
    const response = await fetch(url + GENERATION_PATH, { signal: AbortSignal.timeout(1_000) });
    return response.ok ? await response.text() : undefined;
  } catch {
    return undefined;
  }
}

function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

async function exitedWithin(child: ChildProcess, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const done = await Promise.race([exited(child).then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]);
  clearTimeout(timer);
  return done;
}

/** `bodyLimit`: nginx's client_max_body_size (e.g. `20m`) instead of none. */
export async function startNginx(backends: readonly string[], options: { binary?: string; bodyLimit?: string } = {}): Promise<TestNginx> {
  const binary = options.binary ?? requireNginx({ warn: () => undefined }).path;
  if (!binary) throw new Error('nginx is not installed (/usr/sbin/nginx or on PATH)');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-nginx-'));
  // As root, the master drops its workers to an unprivileged user; they must reach the folder
  // (nginx creates and chowns the temp folders in it itself).
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const user = root ? 'nobody nogroup' : undefined;
  chmodSync(dir, root ? 0o711 : 0o700);
  const confFile = path.join(dir, 'nginx.conf');
  const readLog = (name: string) => () => {
    try {
      return readFileSync(path.join(dir, name), 'utf8');
    } catch {
      return '';
    }
  };
  const errorLog = readLog('error.log');
  const accessLog = readLog('access.log');
  const nginxArgs = ['-p', `${dir}/`, '-e', `${dir}/error.log`, '-c', confFile];
  let generation = 1;

  for (let attempt = 1; ; attempt++) {
    const port = await freeLoopbackPort();
    const url = `http://127.0.0.1:${port}`;
    writeFileSync(confFile, renderConfig(dir, port, backends, generation, user, options.bodyLimit));
    let output = '';
    const child = spawn(binary, nginxArgs, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));

    // Ready when it answers its generation; bounded.
    const deadline = Date.now() + 10_000;
    let ready = false;
    while (!ready && Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
      ready = (await generationServed(url)) === String(generation);
      if (!ready) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    if (!ready) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited(child);
      }
      const why = `${output}\n${errorLog()}`;
      if (attempt < 3 && /Address already in use/.test(why)) continue;
      rmSync(dir, { recursive: true, force: true });
      const err = await Promise.race([spawnError, Promise.resolve(undefined)]);
      throw new Error(`nginx did not start on ${url}: ${err?.message ?? ''}\n${why}`);
    }

    const pid = child.pid!;
    // If this worker dies without stop(): the master we spawned, by PID (SIGTERM ends its workers too).
    const watchdog = startWatchdog('kill -TERM "$1" 2>/dev/null; sleep 2; rm -rf "$2"', [String(pid), dir]);
    let stopped = false;

    return {
      url,
      port,
      pid,
      errorLog,
      accessLog,
      async reload(next) {
        const candidate = renderConfig(dir, port, next, generation + 1, user, options.bodyLimit);
        writeFileSync(confFile, candidate);
        const test = spawnSync(binary, [...nginxArgs, '-t', '-q'], { encoding: 'utf8' });
        if (test.status !== 0) throw new Error(`nginx refused the new config:\n${test.stderr}`);
        generation += 1;
        process.kill(pid, 'SIGHUP');
        const until = Date.now() + 10_000;
        while ((await generationServed(url)) !== String(generation)) {
          if (Date.now() > until) throw new Error(`nginx did not take the new config within 10 s:\n${errorLog()}`);
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        const workers = childPids(pid);
        child.kill('SIGQUIT');
        if (!(await exitedWithin(child, 5_000))) {
          child.kill('SIGTERM');
          if (!(await exitedWithin(child, 5_000))) {
            child.kill('SIGKILL');
            for (const worker of workers) {
              try {
                process.kill(worker, 'SIGKILL');
              } catch {
                // Gone with its master.
              }
            }
            await exited(child);
          }
        }
        watchdog.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
}
