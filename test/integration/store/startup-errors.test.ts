/**
 * What an operator sees when driveway cannot start: the real entry point (src/main.ts) as a child
 * process, and one line on stderr naming the path or setting and what to do, with exit code 1
 * (2 for a configuration the loader refuses). No stack trace.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

let tmp: ReturnType<typeof makeTmpDir>;
beforeAll(() => {
  tmp = makeTmpDir('driveway-startup-');
});
afterAll(() => tmp.remove());

/** Runs `driveway` until it exits (20 s at most) and returns its exit code and stderr. */
function runDriveway(env: Record<string, string>, args: string[] = []): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DRIVEWAY_HOST: '127.0.0.1', DRIVEWAY_LOG_LEVEL: 'silent', DRIVEWAY_STORE_PORT: '0', DRIVEWAY_DAV_PORT: '0', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) => child.on('close', (code) => {
    clearTimeout(timer);
    resolve({ code, stderr });
  }));
}

/** The one stderr line, without the command line's prefix (`driveway serve: failed: `). */
function oneLine(stderr: string): string {
  const lines = stderr.trimEnd().split('\n');
  expect(lines, stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at /);
  const line = lines[0] as string;
  return line.replace(/^driveway( serve)?: (failed: )?/, '');
}

describe('startup errors', () => {
  it('names the data folder when it cannot be created', async () => {
    writeFileSync(path.join(tmp.dir, 'a-file'), '');
    const dataDir = path.join(tmp.dir, 'a-file', 'data');
    const { code, stderr } = await runDriveway({ DRIVEWAY_DATA_DIR: dataDir });
    expect(code).toBe(1);
    expect(oneLine(stderr)).toMatch(new RegExp(`^cannot create the data folder ${dataDir}: .*ENOTDIR.*; check dataDir / DRIVEWAY_DATA_DIR`));
  });

  it('names the database file when SQLite cannot open it', async () => {
    const dataDir = path.join(tmp.dir, 'db-is-a-folder');
    mkdirSync(path.join(dataDir, 'driveway.sqlite'), { recursive: true });
    const { code, stderr } = await runDriveway({ DRIVEWAY_DATA_DIR: dataDir });
    expect(code).toBe(1);
    expect(oneLine(stderr)).toBe(
      `cannot open the database ${path.join(dataDir, 'driveway.sqlite')}: unable to open database file (SQLITE_CANTOPEN); check dataDir / DRIVEWAY_DATA_DIR (or database.url / DRIVEWAY_DATABASE_URL) and that the folder is writable by this user`,
    );
  });

  it('names the port and its setting when the port is in use', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      const { code, stderr } = await runDriveway({ DRIVEWAY_DATA_DIR: path.join(tmp.dir, 'port'), DRIVEWAY_STORE_PORT: String(port) });
      expect(code).toBe(1);
      expect(oneLine(stderr)).toBe(`port ${port} on 127.0.0.1 is in use (store.port / DRIVEWAY_STORE_PORT): stop what holds it or choose another port`);
    } finally {
      holder.close();
    }
  });

  it('names a TLS certificate that cannot be read', async () => {
    const cert = path.join(tmp.dir, 'missing-cert.pem');
    const { code, stderr } = await runDriveway({ DRIVEWAY_DATA_DIR: path.join(tmp.dir, 'tls'), DRIVEWAY_STORE_TLS_CERT: cert, DRIVEWAY_STORE_TLS_KEY: path.join(tmp.dir, 'missing-key.pem') });
    expect(code).toBe(1);
    expect(oneLine(stderr)).toMatch(new RegExp(`^cannot read the TLS certificate ${cert}: ENOENT.*; check store.tlsCert / DRIVEWAY_STORE_TLS_CERT and that this user may read it$`));
  });

  it('refuses a misspelt key of the config file with exit code 2 and the nearest key', async () => {
    const file = path.join(tmp.dir, 'typo.yaml');
    writeFileSync(file, 'store:\n  loginMaxFailure: 3\n');
    const { code, stderr } = await runDriveway({ DRIVEWAY_DATA_DIR: path.join(tmp.dir, 'typo') }, ['--config', file]);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toBe(`invalid configuration: unknown key store.loginMaxFailure; did you mean store.loginMaxFailures? (in ${file})`);
  });
});
