import { describe, expect, it } from 'vitest';
import { livenessAnswer, Readiness, readinessAnswer, type ReadinessCheck } from '../../../src/common/readiness.js';
import { captureLog } from '../../helpers/log-capture.js';

function counted(name: string, outcome: () => Promise<void>): ReadinessCheck & { calls: number } {
  const check = {
    name,
    calls: 0,
    probe: async () => {
      check.calls += 1;
      await outcome();
    },
  };
  return check;
}

describe('Readiness', () => {
  it('is ready when every probe answers, and reuses the result for cacheMs', async () => {
    let now = 1000;
    const db = counted('database', async () => undefined);
    const readiness = new Readiness([db], { cacheMs: 1000, now: () => now });
    expect(await readiness.report()).toEqual({ ready: true, draining: false, checks: { database: 'up' }, degraded: [] });
    now += 999;
    await readiness.report();
    expect(db.calls).toBe(1);
    now += 1;
    await readiness.report();
    expect(db.calls).toBe(2);
  });

  it('runs one probe round for concurrent callers', async () => {
    const db = counted('database', () => new Promise((resolve) => setTimeout(resolve, 20)));
    const readiness = new Readiness([db], { cacheMs: 0 });
    await Promise.all([readiness.report(), readiness.report(), readiness.report()]);
    expect(db.calls).toBe(1);
  });

  it('counts a probe that throws or does not answer within timeoutMs as down', async () => {
    const readiness = new Readiness(
      [counted('database', async () => Promise.reject(new Error('refused'))), counted('blobs', () => new Promise(() => undefined)), counted('state', async () => undefined)],
      { timeoutMs: 50 },
    );
    const began = Date.now();
    expect(await readiness.report()).toEqual({ ready: false, draining: false, checks: { database: 'down', blobs: 'down', state: 'up' }, degraded: [] });
    expect(Date.now() - began).toBeLessThan(1000);
  });

  it('stays ready while only a check that degrades is down, and names it', async () => {
    let s3Up = false;
    const readiness = new Readiness(
      [counted('database', async () => undefined), { ...counted('blobs', async () => (s3Up ? undefined : Promise.reject(new Error('refused')))), whenDown: 'degraded' }],
      { cacheMs: 0 },
    );
    expect(await readiness.report()).toEqual({ ready: true, draining: false, checks: { database: 'up', blobs: 'down' }, degraded: ['blobs'] });
    s3Up = true;
    expect(await readiness.report()).toEqual({ ready: true, draining: false, checks: { database: 'up', blobs: 'up' }, degraded: [] });
  });

  it('logs a check going down once (warn) and coming back once (info), however often it is polled', async () => {
    const log = captureLog('info');
    let up = true;
    const readiness = new Readiness([counted('database', async () => (up ? undefined : Promise.reject(new Error('refused'))))], { cacheMs: 0, log: log.logger });
    await readiness.report();
    up = false;
    for (let i = 0; i < 5; i += 1) await readiness.report();
    up = true;
    for (let i = 0; i < 5; i += 1) await readiness.report();
    expect(log.lines().map((l) => [l.level, l.msg, l.check])).toEqual([
      [40, 'readiness probe failed', 'database'],
      [30, 'readiness probe answers again', 'database'],
    ]);
  });

  it('is not ready once draining, whatever the probes say', async () => {
    const readiness = new Readiness([counted('database', async () => undefined)]);
    readiness.startDraining();
    expect(await readiness.report()).toMatchObject({ ready: false, draining: true, checks: { database: 'up' } });
  });
});

describe('health answers', () => {
  it('answers /healthz 200 and /readyz 200 or 503 with Retry-After naming only what is down', () => {
    expect(livenessAnswer().statusCode).toBe(200);
    expect(readinessAnswer({ ready: true, draining: false, checks: { database: 'up' }, degraded: [] }).statusCode).toBe(200);
    const down = readinessAnswer({ ready: false, draining: true, checks: { database: 'down', blobs: 'up' }, degraded: [] });
    expect(down.statusCode).toBe(503);
    expect(down.headers['Retry-After']).toMatch(/^\d+$/);
    expect(JSON.parse(down.body)).toEqual({
      status: 'error',
      msg: 'not ready (shutting down; down: database)',
      code: 'unavailable',
      draining: true,
      degraded: [],
      checks: { database: 'down', blobs: 'up' },
    });
  });

  it('answers /readyz 200 without Retry-After while degraded, saying what is down in the body', () => {
    const degraded = readinessAnswer({ ready: true, draining: false, checks: { database: 'up', blobs: 'down' }, degraded: ['blobs'] });
    expect(degraded.statusCode).toBe(200);
    expect(degraded.headers['Retry-After']).toBeUndefined();
    expect(JSON.parse(degraded.body)).toEqual({ status: 'success', msg: 'ready, degraded (down: blobs)', degraded: ['blobs'], checks: { database: 'up', blobs: 'down' } });
  });
});
