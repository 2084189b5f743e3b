/**
 * The push bench of issue 32 (bridge/nextcloud/push.ts): `npm run bench:push`
 * (`npx tsx bench/push.ts`). One embedded instance (`npm start`'s shape: store and bridge in one
 * process, SQLite, local blobs) run from this checkout's sources through tsx, in a temp folder,
 * with a configuration that lifts the per-address bounds (every socket comes from 127.0.0.1).
 *
 *   1. BENCH_PUSH_USERS (20) users, each holding BENCH_PUSH_SOCKETS / users idle sockets
 *      (1,000 in all), authenticated as the Nextcloud desktop does (user, then app password...
 *      here the account password) and listening for file ids.
 *   2. Memory: the instance's RSS with one socket open, then with all of them open and idle (after
 *      a pause): the difference, in all and per socket. Target: 1,000 idle sockets <= 50 MiB.
 *   3. Latency: one PUT per user, one after another; for each, the time from sending the PUT to
 *      each of that user's sockets receiving notify_file_id (every socket one sample). Target:
 *      p99 <= 1 s with the 1,000 sockets open. Each user is written once, so no sample waits for
 *      a debounce (with 1,000 sockets a socket gets at most one notify_file per 7.5 to 22.5 s).
 *
 * Prints the figures as a table. Only our own child is stopped, by its PID.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Agent, request } from 'undici';
import { freePort, json, median, positiveIntEnv, printTable, procStatusKiB, sleep, startChild, stopChild, storeLogin, withBenchRun } from './lib.js';
import { connectPush, type PushClient } from '../test/helpers/push-client.js';

const LABEL = 'push bench';
const SOCKETS = positiveIntEnv('BENCH_PUSH_SOCKETS', 1000);
const USERS = positiveIntEnv('BENCH_PUSH_USERS', 20);
const ADMIN_PASSWORD = 'Bench-Admin-Passw0rd1';
const PASSWORD = 'Bench-Passw0rd1';

const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
};

await withBenchRun(LABEL, 15 * 60_000, async (run) => {
  const [storePort, davPort] = [await freePort(), await freePort()];
  const configFile = path.join(run.tmp, 'config.yaml');
  writeFileSync(
    configFile,
    [
      'http:',
      '  maxConnectionsPerAddress: 0',
      'bridge:',
      `  pushMaxSocketsPerAddress: ${SOCKETS + 100}`,
      `  pushMaxSocketsPerUser: ${Math.ceil(SOCKETS / USERS) + 1}`,
      '',
    ].join('\n'),
  );
  const driveway = await startChild({
    name: 'driveway',
    command: process.execPath,
    args: ['--import', 'tsx', 'src/main.ts', '--config', configFile],
    env: {
      PATH: process.env.PATH,
      DRIVEWAY_HOST: '127.0.0.1',
      DRIVEWAY_STORE_PORT: String(storePort),
      DRIVEWAY_DAV_PORT: String(davPort),
      DRIVEWAY_DATA_DIR: path.join(run.tmp, 'data'),
      DRIVEWAY_LOG_LEVEL: 'warn',
      DRIVEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
    },
    logFile: path.join(run.tmp, 'driveway.log'),
    readyLine: /driveway WebDAV:\s+(http:\/\/\S+?)\/?\s/,
    timeoutMs: 120_000,
  });
  run.onCleanup(() => stopChild(driveway.child));
  const store = `http://127.0.0.1:${storePort}`;
  const dav = `http://127.0.0.1:${davPort}`;
  const wsUrl = `ws://127.0.0.1:${davPort}/push/ws`;
  const dispatcher = new Agent({ connections: 8 });
  run.onCleanup(() => dispatcher.close());

  const admin = await storeLogin(dispatcher, store, 'admin', ADMIN_PASSWORD);
  const users: string[] = [];
  for (let i = 0; i < USERS; i += 1) {
    const email = `push-${i}@example.test`;
    await json(dispatcher, `${store}/api/admin/users`, { method: 'POST', token: admin.token, body: { fullname: `Push User ${String.fromCharCode(65 + (i % 26))}`, email, password: PASSWORD, disk_quota: 0, is_active: true, is_admin: false } });
    users.push(email);
  }
  const rssMiB = (): number => (procStatusKiB(driveway.pid, 'VmRSS') ?? 0) / 1024;

  const sockets: PushClient[][] = users.map(() => []);
  run.onCleanup(() => {
    for (const list of sockets) for (const socket of list) socket.close();
  });
  // One socket first: what the door costs before the many.
  const first = await connectPush(wsUrl, users[0] as string, PASSWORD);
  if (first.answer !== 'authenticated') throw new Error(`the first socket was answered ${first.answer}`);
  first.listen();
  (sockets[0] as PushClient[]).push(first);
  await sleep(3000);
  const before = rssMiB();

  const opening = Date.now();
  for (let i = 1; i < SOCKETS; i += 1) {
    const u = i % USERS;
    const socket = await connectPush(wsUrl, users[u] as string, PASSWORD);
    if (socket.answer !== 'authenticated') throw new Error(`socket ${i} was answered ${socket.answer}`);
    socket.listen();
    (sockets[u] as PushClient[]).push(socket);
  }
  const openedMs = Date.now() - opening;
  await sleep(5000);
  const after = rssMiB();

  const samples: number[] = [];
  for (let u = 0; u < USERS; u += 1) {
    const mine = sockets[u] as PushClient[];
    const from = mine.map((s) => s.messages.length);
    const started = performance.now();
    const put = await request(`${dav}/home/bench-${u}.txt`, { dispatcher, method: 'PUT', headers: { authorization: basic(users[u] as string, PASSWORD) }, body: `change ${u}` });
    await put.body.dump();
    if (put.statusCode !== 201) throw new Error(`PUT answered ${put.statusCode}`);
    const arrived = await Promise.all(mine.map((s, i) => s.next((m) => m.startsWith('notify_file'), 10_000, from[i]).then(() => performance.now() - started)));
    samples.push(...arrived);
  }
  const open = sockets.reduce((n, list) => n + list.length, 0);
  const delta = after - before;
  printTable(
    ['figure', 'value', 'target'],
    [
      ['idle sockets open', String(open), String(SOCKETS)],
      ['time to open and authenticate them', `${(openedMs / 1000).toFixed(1)} s`, ''],
      ['RSS with 1 socket', `${before.toFixed(1)} MiB`, ''],
      [`RSS with ${open} idle sockets`, `${after.toFixed(1)} MiB`, ''],
      [`cost of ${open} idle sockets`, `${delta.toFixed(1)} MiB (${((delta * 1024) / open).toFixed(1)} KiB each)`, '<= 50 MiB'],
      ['change -> socket, samples', String(samples.length), ''],
      ['change -> socket, median', `${median(samples).toFixed(0)} ms`, ''],
      ['change -> socket, p99', `${percentile(samples, 99).toFixed(0)} ms`, '<= 1000 ms'],
      ['change -> socket, max', `${Math.max(...samples).toFixed(0)} ms`, ''],
    ],
  );
});
