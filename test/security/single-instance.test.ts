/**
 * Issue 14, item 10: two `driveway` on one data directory ran side by side without a word, and a
 * file locked through one was overwritten through the other. The real entry point is started as
 * a child process: a second instance on the same data directory exits non-zero naming the
 * directory and the first one's PID (store and bridge alike), and once the first is killed
 * (SIGKILL: no clean-up of its own) a new one starts at once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeTmpDir } from '../helpers/tmp-dir.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const STARTUP_MS = 30_000;

interface Started {
  child: ChildProcess;
  storeUrl?: string;
  output: () => string;
}

let tmp: ReturnType<typeof makeTmpDir>;
const children: ChildProcess[] = [];

beforeAll(() => {
  tmp = makeTmpDir('driveway-single-');
});

afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  tmp.remove();
});

function run(args: string[], env: Record<string, string> = {}): Started {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DRIVEWAY_DATA_DIR: tmp.dir,
      DRIVEWAY_STORE_PORT: '0',
      DRIVEWAY_DAV_PORT: '0',
      DRIVEWAY_HOST: '127.0.0.1',
      DRIVEWAY_ADMIN_PASSWORD: 'Admin-Passw0rd',
      DRIVEWAY_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  return { child, output: () => output };
}

/** Waits for the "driveway <part>:" line(s) of a starting instance; fails if it exits first. */
async function started(instance: Started, lines: RegExp): Promise<string> {
  const deadline = Date.now() + STARTUP_MS;
  while (Date.now() < deadline) {
    const match = lines.exec(instance.output());
    if (match) return match[1] ?? '';
    if (instance.child.exitCode !== null) throw new Error(`exited early (${instance.child.exitCode}): ${instance.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`did not start within ${STARTUP_MS} ms: ${instance.output()}`);
}

/** Waits for an instance that must refuse to start; returns its exit code and output. */
async function refused(instance: Started): Promise<{ code: number | null; output: string }> {
  const timer = setTimeout(() => instance.child.kill('SIGKILL'), STARTUP_MS);
  try {
    if (instance.child.exitCode === null) await once(instance.child, 'exit');
  } finally {
    clearTimeout(timer);
  }
  return { code: instance.child.exitCode, output: instance.output() };
}

it('refuses a second instance on the same data directory, naming it and the holder, and starts once the holder is killed', async () => {
  const first = run([]);
  const storeUrl = await started(first, /driveway store:\s+(http:\/\/\S+)[\s\S]*driveway WebDAV:/);
  const firstPid = first.child.pid as number;
  expect(storeUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

  const secondStore = await refused(run(['--only', 'store']));
  expect(secondStore.code).not.toBe(0);
  expect(secondStore.output).toContain(`the data directory ${tmp.dir} is in use by process ${firstPid} (its store)`);
  expect(secondStore.output).not.toContain('driveway store:');

  // A bridge alone (talking to the first one's store over HTTP) would share bridge.sqlite.
  const secondBridge = await refused(run(['--only', 'bridge'], { DRIVEWAY_STORE_URL: storeUrl }));
  expect(secondBridge.code).not.toBe(0);
  expect(secondBridge.output).toContain(`the data directory ${tmp.dir} is in use by process ${firstPid} (its bridge)`);

  first.child.kill('SIGKILL');
  await once(first.child, 'exit');
  const third = run([]);
  await started(third, /driveway store:[\s\S]*driveway WebDAV:()/);
  expect(third.output()).not.toContain('in use');
  third.child.kill('SIGTERM');
  await once(third.child, 'exit');
  expect(third.child.exitCode).toBe(0);
}, 120_000);
