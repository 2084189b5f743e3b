/**
 * The `driveway` command line as an operator runs it: real processes (`node --import tsx
 * src/main.ts`, as startup-postgres.test.ts spawns the server), a real server beside them, and
 * the REST API and WebDAV bridge of that server to see the effect. Usage errors and help first;
 * then, for SQLite + blob folder and for PostgreSQL + S3 (s3rver), accounts changed while the
 * server runs (create, reset-password, disable/enable), `check` finding a removed blob, a damaged
 * blob, a skewed disk_used and an orphan, `check --repair`, `prune` beside the server, and a reset
 * on a stopped instance.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { rmSync, utimesSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentHashOf } from '../../../src/store/blobs/staging.js';
import { freshPostgresDatabase, requirePostgres } from '../../helpers/postgres.js';
import { freshS3Bucket, postgresS3Env, s3rverClient } from '../../helpers/s3-server.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const STARTUP_MS = 30_000;
const ADMIN_PASSWORD = 'Admin-Passw0rd';
const postgres = requirePostgres();

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `driveway <args>` to its end, with `stdin` piped in when given. */
async function driveway(args: string[], env: NodeJS.ProcessEnv, stdin?: string): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { cwd: REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdin.end(stdin ?? '');
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

interface Server {
  child: ChildProcess;
  storeUrl: string;
  davUrl: string;
  stop(): Promise<number | null>;
}

/** `driveway --config FILE`: serve, the default command. */
async function startServer(env: NodeJS.ProcessEnv, configFile: string): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--config', configFile], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const deadline = Date.now() + STARTUP_MS;
  for (;;) {
    const store = /driveway store:\s+(http:\/\/\S+)/.exec(output);
    const dav = /driveway WebDAV:\s+(http:\/\/\S+?)\/?\s/.exec(output);
    if (store && dav) {
      return {
        child,
        storeUrl: store[1] as string,
        davUrl: dav[1] as string,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) {
            child.kill('SIGTERM');
            await once(child, 'exit');
          }
          return child.exitCode;
        },
      };
    }
    if (child.exitCode !== null) throw new Error(`driveway exited early (${child.exitCode}): ${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`driveway did not start within ${STARTUP_MS} ms: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function login(storeUrl: string, username: string, password: string): Promise<{ status: number; token?: string }> {
  const response = await fetch(`${storeUrl}/auth`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) });
  const body = (await response.json()) as { token?: string };
  return { status: response.status, ...(body.token ? { token: body.token } : {}) };
}

async function currentUserStatus(storeUrl: string, token: string): Promise<number> {
  return (await fetch(`${storeUrl}/api/user`, { headers: { authorization: `Bearer ${token}` } })).status;
}

describe('driveway usage', () => {
  const env = { ...process.env, DRIVEWAY_DATA_DIR: '/nonexistent/driveway-cli-test' };

  it('prints help with -h and --help, on the program and on each command, and exits 0', async () => {
    for (const args of [['-h'], ['--help'], ['user', 'reset-password', '--help'], ['check', '-h'], ['serve', '--help'], ['migrate', '--help']]) {
      const run = await driveway(args, env);
      expect(run.code, args.join(' ')).toBe(0);
      expect(run.stdout).toMatch(/^Usage: driveway/);
      expect(run.stderr).toBe('');
    }
    const top = await driveway(['--help'], env);
    for (const command of ['serve', 'migrate', 'user', 'check']) expect(top.stdout).toContain(`  ${command}`);
  });

  it('prints the version of package.json with --version and -V', async () => {
    const { version } = (await import('../../../package.json', { with: { type: 'json' } })).default as { version: string };
    for (const flag of ['--version', '-V']) {
      const run = await driveway([flag], env);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(`${version}\n`);
    }
  });

  it('answers an unknown command or option, or a missing argument, with one line on stderr and exit 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['frobnicate'], /^driveway: unknown command 'frobnicate'\n$/],
      [['--bogus'], /^driveway: unknown option '--bogus'\n$/],
      [['user', 'list', '--nope'], /^driveway: unknown option '--nope'\n$/],
      [['user', 'create', 'Ann'], /^driveway: required option '--email <email>' not specified\n$/],
      [['user', 'reset-password'], /^driveway: missing required argument 'login'\n$/],
      [['--only', 'everything'], /^driveway: option '--only <part>' argument 'everything' is invalid\. Allowed choices are store, bridge\.\n$/],
    ];
    for (const [args, message] of cases) {
      const run = await driveway(args, env);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(message);
      expect(run.stdout).toBe('');
    }
  });

  it('names the database path when the data directory holds none, exit 1 without a stack trace', async () => {
    const run = await driveway(['user', 'list'], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'driveway user list: no database at /nonexistent/driveway-cli-test/driveway.sqlite: start driveway once with this data directory, or name the right one (--config, DRIVEWAY_DATA_DIR)\n',
    );
  });

  it('names the setting of a bad configuration, exit 2', async () => {
    const run = await driveway(['check'], { ...env, DRIVEWAY_STORE_PORT: 'eighty' });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('store.port (from environment DRIVEWAY_STORE_PORT)');
  });
});

interface StorageSetup {
  env: Record<string, string>;
  /** Removes the bytes of the blob from the backend, behind the store's back. */
  removeBlob(hash: string): Promise<void>;
  /** Writes `bytes` as the blob's content, behind the store's back. */
  writeBlob(hash: string, bytes: Buffer, ageMs?: number): Promise<void>;
  /** Runs one SQL statement on the store's database (while the server may run). */
  exec(statement: string): Promise<void>;
  close(): Promise<void>;
}

function sqliteSetup(dataDir: string): StorageSetup {
  const blobPath = (hash: string) => path.join(dataDir, 'blobs', hash.slice(0, 2), hash.slice(2, 4), hash);
  return {
    env: {},
    removeBlob: async (hash) => rmSync(blobPath(hash)),
    writeBlob: async (hash, bytes, ageMs = 0) => {
      mkdirSync(path.dirname(blobPath(hash)), { recursive: true });
      writeFileSync(blobPath(hash), bytes);
      const when = new Date(Date.now() - ageMs);
      utimesSync(blobPath(hash), when, when);
    },
    exec: async (statement) => {
      const db = new Database(path.join(dataDir, 'driveway.sqlite'), { timeout: 5000 });
      try {
        db.exec(statement);
      } finally {
        db.close();
      }
    },
    close: async () => undefined,
  };
}

async function postgresSetup(): Promise<StorageSetup> {
  const [databaseUrl, s3] = await Promise.all([freshPostgresDatabase(), freshS3Bucket()]);
  const client = s3rverClient(s3.endpoint);
  return {
    env: {
      ...postgresS3Env(databaseUrl, s3),
    },
    removeBlob: async (hash) => {
      await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: `blobs/${hash}` }));
    },
    writeBlob: async (hash, bytes) => {
      await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `blobs/${hash}`, Body: bytes }));
    },
    exec: async (statement) => {
      const db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
      try {
        await db.query(statement);
      } finally {
        await db.end();
      }
    },
    close: async () => client.destroy(),
  };
}

function operatorSuite(kind: 'sqlite' | 'postgres', describeIt: (name: string, body: () => void) => void): void {
  describeIt(`driveway user and check on ${kind === 'sqlite' ? 'SQLite + blob folder' : 'PostgreSQL + S3'}`, () => {
    let tmp: ReturnType<typeof makeTmpDir>;
    let setup: StorageSetup;
    let env: NodeJS.ProcessEnv;
    let server: Server | undefined;
    let cli: (args: string[], stdin?: string) => Promise<Run>;
    let configFile: string;

    beforeAll(async () => {
      tmp = makeTmpDir('driveway-cli-');
      configFile = path.join(tmp.dir, 'driveway.yaml');
      // A cheap scrypt, and no grace period for orphans (an orphan made by the test counts at once).
      writeFileSync(configFile, `store:\n  scryptCost: 1024\n  blobs:\n    gcGraceSec: 0\n`);
      setup = kind === 'sqlite' ? sqliteSetup(path.join(tmp.dir, 'data')) : await postgresSetup();
      env = {
        ...process.env,
        DRIVEWAY_DATA_DIR: path.join(tmp.dir, 'data'),
        DRIVEWAY_STORE_PORT: '0',
        DRIVEWAY_DAV_PORT: '0',
        DRIVEWAY_HOST: '127.0.0.1',
        DRIVEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
        DRIVEWAY_LOG_LEVEL: 'warn',
        ...setup.env,
      };
      cli = (args, stdin) => driveway([...args, '--config', configFile], env, stdin);
      server = await startServer(env, configFile);
    }, 60_000);

    afterAll(async () => {
      await server?.stop();
      await setup?.close();
      tmp?.remove();
    });

    it('creates a user who can log in at once through the running server, and lists them', async () => {
      const created = await cli(['user', 'create', 'Ann Example', '--email', 'ann@example.com']);
      expect(created.code, created.stderr).toBe(0);
      const password = created.stdout.trim();
      expect(password.length).toBeGreaterThanOrEqual(16);
      const session = await login(server!.storeUrl, 'ann@example.com', password);
      expect(session.status).toBe(200);
      expect(await currentUserStatus(server!.storeUrl, session.token!)).toBe(200);

      const again = await cli(['user', 'create', 'Ann Twice', '--email', 'ann@example.com']);
      expect(again.code).toBe(1);
      expect(again.stderr).toBe('driveway user create: the email ann@example.com is already used by another user\n');

      const list = await cli(['user', 'list']);
      expect(list.code).toBe(0);
      const lines = list.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^LOGIN\s+NAME\s+ADMIN\s+ACTIVE\s+DISK USED \/ QUOTA\s+ORG$/);
      expect(lines.find((l) => l.startsWith('admin '))).toMatch(/^admin\s+Administrator\s+built-in\s+yes\s+0 B \/ unlimited\s+default$/);
      expect(lines.find((l) => l.startsWith('ann@example.com '))).toMatch(/^ann@example\.com\s+Ann Example\s+no\s+yes\s+0 B \/ unlimited\s+default$/);
    });

    it('resets a password on the running server: the old one fails at once, the new one works, old sessions end', async () => {
      const before = await cli(['user', 'create', 'Bob', '--email', 'bob@example.com', '--password-stdin'], 'Old-Passw0rd\n');
      expect(before.code, before.stderr).toBe(0);
      expect(before.stdout).toBe('');
      const old = await login(server!.storeUrl, 'bob@example.com', 'Old-Passw0rd');
      expect(old.status).toBe(200);

      const reset = await cli(['user', 'reset-password', 'bob@example.com', '--password-stdin'], 'New-Passw0rd\n');
      expect(reset.code, reset.stderr).toBe(0);
      expect(reset.stderr).toContain('1 session(s) ended');
      expect(await currentUserStatus(server!.storeUrl, old.token!)).toBe(401);
      expect((await login(server!.storeUrl, 'bob@example.com', 'Old-Passw0rd')).status).toBe(401);
      expect((await login(server!.storeUrl, 'bob@example.com', 'New-Passw0rd')).status).toBe(200);

      const weak = await cli(['user', 'reset-password', 'bob@example.com', '--password-stdin'], 'short\n');
      expect(weak.code).toBe(1);
      expect(weak.stderr).toBe('driveway user reset-password: password must have at least 8 characters\n');
      expect((await login(server!.storeUrl, 'bob@example.com', 'New-Passw0rd')).status).toBe(200);

      const nobody = await cli(['user', 'reset-password', 'nobody@example.com']);
      expect(nobody.code).toBe(1);
      expect(nobody.stderr).toMatch(/^driveway user reset-password: no user "nobody@example.com"/);
    });

    it('disables a user: the running server refuses their token and login at once; enable lets them in again', async () => {
      await cli(['user', 'create', 'Cy', '--email', 'cy@example.com', '--password-stdin'], 'Cy-Passw0rd');
      const session = await login(server!.storeUrl, 'cy@example.com', 'Cy-Passw0rd');
      expect(session.status).toBe(200);
      // The bridge too, over Basic credentials.
      const basic = `Basic ${Buffer.from('cy@example.com:Cy-Passw0rd').toString('base64')}`;
      expect((await fetch(`${server!.davUrl}/home/`, { method: 'PROPFIND', headers: { authorization: basic, depth: '0' } })).status).toBe(207);

      const disabled = await cli(['user', 'disable', 'cy@example.com']);
      expect(disabled.code, disabled.stderr).toBe(0);
      // Two: the REST login's and the one the bridge opened for the Basic credentials.
      expect(disabled.stderr).toBe('cy@example.com disabled; 2 session(s) ended\n');
      expect(await currentUserStatus(server!.storeUrl, session.token!)).toBe(401);
      expect((await login(server!.storeUrl, 'cy@example.com', 'Cy-Passw0rd')).status).toBe(401);
      // A write must reach the store, which refuses the bridge's session and its new login.
      expect((await fetch(`${server!.davUrl}/home/after.txt`, { method: 'PUT', headers: { authorization: basic }, body: 'x' })).status).toBe(401);

      const admin = await cli(['user', 'disable', 'admin']);
      expect(admin.code).toBe(1);
      expect(admin.stderr).toBe('driveway user disable: the built-in admin cannot be disabled\n');

      expect((await cli(['user', 'enable', 'cy@example.com'])).code).toBe(0);
      expect((await login(server!.storeUrl, 'cy@example.com', 'Cy-Passw0rd')).status).toBe(200);
    });

    it('check: clean exits 0; a removed blob, a damaged blob, a skewed disk_used and an orphan are named with exit 1; --repair fixes what is safe', async () => {
      const auth = `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`;
      // Above the 64 KiB kept in a database row: the bytes go to the blob backend.
      const gone = randomBytes(100 * 1024);
      const damaged = randomBytes(90 * 1024);
      for (const [name, body] of [['gone.bin', gone], ['damaged.bin', damaged]] as const) {
        expect((await fetch(`${server!.davUrl}/home/${name}`, { method: 'PUT', headers: { authorization: auth }, body })).status).toBe(201);
      }
      const small = Buffer.from('kept in its row');
      expect((await fetch(`${server!.davUrl}/home/small.txt`, { method: 'PUT', headers: { authorization: auth }, body: small })).status).toBe(201);

      const clean = await cli(['check']);
      expect(clean.code, clean.stdout + clean.stderr).toBe(0);
      expect(clean.stdout).toMatch(/\n3 blob\(s\) verified \(\d+ bytes\), \d+ user\(s\) and group\(s\) checked\nclean\n$/);

      const goneHash = contentHashOf(gone);
      const damagedHash = contentHashOf(damaged);
      const orphan = randomBytes(1000);
      const orphanHash = contentHashOf(orphan);
      await setup.removeBlob(goneHash);
      const flipped = Buffer.from(damaged);
      flipped[1000] = (flipped[1000] as number) ^ 0xff;
      await setup.writeBlob(damagedHash, flipped);
      await setup.writeBlob(orphanHash, orphan, 60_000);
      await setup.exec("UPDATE users SET disk_used = disk_used + 12345 WHERE username = 'admin'");

      const found = await cli(['check']);
      expect(found.code).toBe(1);
      const problems = found.stdout.split('\n').filter((l) => l.startsWith('PROBLEM'));
      expect(problems).toHaveLength(4);
      expect(problems.find((l) => l.includes(goneHash))).toMatch(new RegExp(`^PROBLEM  missing-blob: missing blob ${goneHash} .*user admin: /home/gone\\.bin revision 1$`));
      expect(problems.find((l) => l.includes(damagedHash))).toMatch(new RegExp(`^PROBLEM  damaged-blob: damaged blob ${damagedHash} .*its bytes hash to .*user admin: /home/damaged\\.bin revision 1$`));
      const stored = gone.length + damaged.length + small.length;
      expect(problems.find((l) => l.includes('disk-used'))).toMatch(new RegExp(`^PROBLEM  disk-used: user admin \\(.*\\): disk_used is ${stored + 12345}, its revisions hold ${stored} bytes$`));
      expect(problems.find((l) => l.includes('orphan'))).toMatch(new RegExp(`^PROBLEM  orphan-blob: orphan blob ${orphanHash} \\(1000 bytes at .*\\): no row refers to it$`));
      expect(found.stdout).toMatch(/4 finding\(s\), 0 repaired, 4 remaining\n$/);

      const repaired = await cli(['check', '--repair']);
      expect(repaired.code).toBe(1);
      expect(repaired.stdout).toContain(`REPAIRED disk-used: user admin`);
      expect(repaired.stdout).toContain(`(set to ${stored})`);
      expect(repaired.stdout).toContain(`REPAIRED orphan-blob: orphan blob ${orphanHash}`);
      // What cannot be repaired is left as it is: the files stay listed, with their metadata.
      expect(repaired.stdout).toContain(`PROBLEM  missing-blob: missing blob ${goneHash}`);
      expect(repaired.stdout).toContain(`PROBLEM  damaged-blob: damaged blob ${damagedHash}`);
      expect(repaired.stdout).toMatch(/4 finding\(s\), 2 repaired, 2 remaining\n$/);
      const listing = await fetch(`${server!.davUrl}/home/gone.bin`, { method: 'PROPFIND', headers: { authorization: auth, depth: '0' } });
      expect(listing.status).toBe(207);

      // The bytes restored (from a backup, say), everything is consistent again.
      await setup.writeBlob(goneHash, gone);
      await setup.writeBlob(damagedHash, damaged);
      const again = await cli(['check']);
      expect(again.code, again.stdout).toBe(0);
      expect(again.stdout).toMatch(/\nclean\n$/);
      const get = await fetch(`${server!.davUrl}/home/gone.bin`, { headers: { authorization: auth } });
      expect(Buffer.from(await get.arrayBuffer()).equals(gone)).toBe(true);
    }, 120_000);

    it('check: a stored SHA-1 or MD5 that is not its blob\'s is named with exit 1; --repair sets what the bytes hash to', async () => {
      const auth = `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`;
      const large = randomBytes(80 * 1024);
      const small = Buffer.from('a small one, in its row');
      for (const [name, body] of [['sums-large.bin', large], ['sums-small.txt', small]] as const) {
        expect((await fetch(`${server!.davUrl}/home/${name}`, { method: 'PUT', headers: { authorization: auth }, body })).status).toBe(201);
      }
      expect((await cli(['check'])).code).toBe(0);
      await setup.exec(`UPDATE blobs SET sha1 = '${'0'.repeat(40)}' WHERE hash = '${contentHashOf(large)}'`);
      await setup.exec(`UPDATE blobs SET md5 = '${'f'.repeat(32)}' WHERE hash = '${contentHashOf(small)}'`);

      const found = await cli(['check']);
      expect(found.code).toBe(1);
      const problems = found.stdout.split('\n').filter((l) => l.startsWith('PROBLEM'));
      expect(problems).toEqual(
        expect.arrayContaining([
          `PROBLEM  wrong-checksum: blob ${contentHashOf(large)}: stored SHA-1 ${'0'.repeat(40)}, its bytes hash to ${createHash('sha1').update(large).digest('hex')}`,
          `PROBLEM  wrong-checksum: blob ${contentHashOf(small)}: stored MD5 ${'f'.repeat(32)}, its bytes hash to ${createHash('md5').update(small).digest('hex')}`,
        ]),
      );
      expect(problems).toHaveLength(2);
      const repaired = await cli(['check', '--repair']);
      expect(repaired.stdout).toMatch(/2 finding\(s\), 2 repaired, 0 remaining\n$/);
      const again = await cli(['check']);
      expect(again.code, again.stdout).toBe(0);
      const head = await fetch(`${server!.davUrl}/home/sums-large.bin`, { method: 'HEAD', headers: { authorization: auth } });
      expect(head.headers.get('oc-checksum')).toBe(`SHA1:${createHash('sha1').update(large).digest('hex')}`);
    }, 120_000);

    it('prune beside the running server: old revisions go, their blobs with them, and check stays clean', async () => {
      const auth = `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`;
      const versions = [randomBytes(80 * 1024), randomBytes(70 * 1024), randomBytes(1000)];
      for (const body of versions) {
        expect((await fetch(`${server!.davUrl}/home/versions.bin`, { method: 'PUT', headers: { authorization: auth }, body })).status).toBeLessThan(300);
      }
      const pruneConfig = path.join(tmp.dir, 'prune.yaml');
      writeFileSync(pruneConfig, `store:\n  scryptCost: 1024\n  blobs:\n    gcGraceSec: 0\n  retention:\n    keepRevisions: 1\n`);
      const dry = await driveway(['prune', '--dry-run', '--config', pruneConfig], env);
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout).toMatch(new RegExp(`would remove 2 revision\\(s\\) and 0 trash item\\(s\\) of 1 of \\d+ user\\(s\\) and group\\(s\\); ${80 * 1024 + 70 * 1024} bytes would be freed\n$`));
      const run = await driveway(['prune', '--verbose', '--config', pruneConfig], env);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/\nuser [0-9a-f-]{36} \(Administrator\): 2 revision\(s\), 0 trash item\(s\), 153600 bytes\n/);
      expect(run.stdout).toMatch(/removed 2 revision\(s\)/);
      expect((await driveway(['prune', '--config', pruneConfig], env)).stdout).toMatch(/removed 0 revision\(s\)/);
      // disk_used equals what is stored, and no blob is left without a row (gcGraceSec 0: one would be named at once).
      const check = await cli(['check']);
      expect(check.code, check.stdout).toBe(0);
      const get = await fetch(`${server!.davUrl}/home/versions.bin`, { headers: { authorization: auth } });
      expect(Buffer.from(await get.arrayBuffer()).equals(versions[2] as Buffer)).toBe(true);
    }, 120_000);

    it('resets the admin password on a stopped instance; the restarted server takes the new one only', async () => {
      expect(await server!.stop()).toBe(0);
      server = undefined;
      const reset = await cli(['user', 'reset-password', 'admin']);
      expect(reset.code, reset.stderr).toBe(0);
      const password = reset.stdout.trim();
      expect(password).not.toBe(ADMIN_PASSWORD);
      server = await startServer(env, configFile);
      expect((await login(server.storeUrl, 'admin', password)).status).toBe(200);
      expect((await login(server.storeUrl, 'admin', ADMIN_PASSWORD)).status).toBe(401);
    }, 90_000);
  });
}

operatorSuite('sqlite', describe);
operatorSuite('postgres', postgres.describe);
