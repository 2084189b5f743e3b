/**
 * SIGTERM drains the real process (src/main.ts, embedded store + in-process bridge): an upload
 * trickled over a few seconds, under way when the signal comes, finishes 201 and its file is in
 * the database; meanwhile no new connection is accepted, a request arriving on a connection
 * opened before answers 503 with Retry-After and Connection: close (the store's in the SPEC
 * envelope), /readyz answers 503 naming the drain, and /healthz still 200. The process logs
 * "stopped" and exits 0. A second signal stops at once.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_BASIC, spawnDriveway, type DrivewayProcess } from '../../helpers/driveway-process.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A request whose head is sent but for its final CRLF: the connection is busy, not idle, until finish(). */
function heldRequest(baseUrl: string, head: string): { finish(): Promise<string> } {
  const url = new URL(baseUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.write(`${head}\r\nHost: ${url.host}\r\n`);
  return {
    async finish() {
      socket.write('\r\n');
      // The server closes the connection after its answer (Connection: close); bounded anyway.
      await Promise.race([ended, sleep(5_000)]);
      socket.destroy();
      return answer;
    },
  };
}

function connects(baseUrl: string): Promise<boolean> {
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port), url.hostname);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** PUT of `body` in `pieces` chunks spread over `spreadMs`; resolves with the status. */
function trickledPut(url: string, body: Buffer, pieces: number, spreadMs: number): { started: Promise<void>; status: Promise<number> } {
  let markStarted: () => void = () => undefined;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const status = new Promise<number>((resolve, reject) => {
    const request = http.request(url, { method: 'PUT', headers: { authorization: ADMIN_BASIC, 'content-length': String(body.length) }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    request.on('error', reject);
    void (async () => {
      const size = Math.ceil(body.length / pieces);
      for (let i = 0; i < pieces; i++) {
        request.write(body.subarray(i * size, (i + 1) * size));
        if (i === 0) markStarted();
        await sleep(spreadMs / pieces);
      }
      request.end();
    })();
  });
  return { started, status };
}

describe('driveway stopped by a signal', () => {
  let tmp: ReturnType<typeof makeTmpDir>;
  let instance: DrivewayProcess | undefined;

  beforeAll(() => {
    tmp = makeTmpDir('driveway-drain-');
  });
  afterAll(() => {
    instance?.kill();
    tmp.remove();
  });

  it('lets an upload under way finish, refuses what comes after with 503, logs "stopped" and exits 0', async () => {
    instance = await spawnDriveway({ dataDir: tmp.dir });
    const { storeUrl, davUrl } = instance;
    expect((await fetch(`${davUrl}/readyz`)).status).toBe(200);

    const body = randomBytes(300 * 1024);
    const upload = trickledPut(`${davUrl}/home/slow.bin`, body, 12, 3_000);
    await upload.started;
    await sleep(300);
    // Opened before the signal: requests that arrive on them during the drain.
    const davReady = heldRequest(davUrl, 'GET /readyz HTTP/1.1');
    const davHealth = heldRequest(davUrl, 'GET /healthz HTTP/1.1');
    const davPropfind = heldRequest(davUrl, `PROPFIND /home/ HTTP/1.1\r\nAuthorization: ${ADMIN_BASIC}\r\nDepth: 1`);
    const storeReady = heldRequest(storeUrl, 'GET /readyz HTTP/1.1');
    const storeApi = heldRequest(storeUrl, 'GET /api/user HTTP/1.1\r\nAuthorization: Bearer x');
    await sleep(200);

    instance.child.kill('SIGTERM');
    await sleep(300);
    expect(await connects(davUrl)).toBe(false);
    expect(await connects(storeUrl)).toBe(false);

    const readyAnswer = await davReady.finish();
    expect(readyAnswer).toMatch(/^HTTP\/1\.1 503/);
    expect(readyAnswer).toMatch(/\r\nRetry-After: \d+\r\n/i);
    expect(readyAnswer).toContain('"draining":true');
    expect(await davHealth.finish()).toMatch(/^HTTP\/1\.1 200/);
    const propfind = await davPropfind.finish();
    expect(propfind).toMatch(/^HTTP\/1\.1 503/);
    expect(propfind).toMatch(/\r\nConnection: close\r\n/i);
    expect(propfind).toMatch(/\r\nRetry-After: \d+\r\n/i);
    const storeReadyAnswer = await storeReady.finish();
    expect(storeReadyAnswer).toMatch(/^HTTP\/1\.1 503/);
    expect(storeReadyAnswer).toContain('"draining":true');
    const api = await storeApi.finish();
    expect(api).toMatch(/^HTTP\/1\.1 503/);
    expect(api).toMatch(/\r\nconnection: close\r\n/i);
    expect(api).toMatch(/\r\nretry-after: \d+\r\n/i);
    expect(api).toContain('"status":"error"');
    expect(api).toContain('"code":"unavailable"');

    expect(await upload.status).toBe(201);
    expect(await instance.exited).toBe(0);
    expect(instance.output()).toMatch(/"msg":"stopped"/);

    const db = new Database(path.join(tmp.dir, 'driveway.sqlite'), { readonly: true });
    try {
      const rows = db.prepare("SELECT r.size FROM nodes n JOIN revisions r ON r.node_uuid = n.uuid WHERE n.name = 'slow.bin'").all() as Array<{ size: number }>;
      expect(rows).toEqual([{ size: body.length }]);
    } finally {
      db.close();
    }
  }, 60_000);

  it('stops at once on a second signal, while an upload is still under way', async () => {
    const second = makeTmpDir('driveway-drain2-');
    try {
      instance = await spawnDriveway({ dataDir: second.dir });
      const upload = trickledPut(`${instance.davUrl}/home/never.bin`, randomBytes(64 * 1024), 40, 20_000);
      upload.status.catch(() => undefined);
      await upload.started;
      await sleep(200);
      const began = Date.now();
      instance.child.kill('SIGTERM');
      await sleep(300);
      expect(instance.child.exitCode).toBeNull();
      instance.child.kill('SIGINT');
      expect(await instance.exited).toBe(1);
      expect(Date.now() - began).toBeLessThan(5_000);
      expect(instance.output()).toMatch(/second signal: stopping at once/);
    } finally {
      second.remove();
    }
  }, 60_000);
});
