/**
 * Prometheus metrics (common/metrics.ts): a store and a bridge counting into one registry, served
 * on a listener of their own; a scrape is valid exposition text (strict reader) and its values
 * move with the requests made: requests by part, method and status class, latency, bytes, active
 * locks, bridge sessions, cache hits and misses, event-loop lag. The store and WebDAV ports do
 * not serve /metrics.
 */
import { spawnSync } from 'node:child_process';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Metrics, startMetricsServer, type MetricsServer } from '../../../src/common/metrics.js';
import { createLogger } from '../../../src/common/logger.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { davRequest, EXCLUSIVE_LOCKINFO } from '../../helpers/dav-requests.js';
import { parsePrometheusText, sampleSum, type Sample } from '../../helpers/prometheus-text.js';
import { requireBinary } from '../../helpers/require-binary.js';
import { runProgram } from '../../clients/run-program.js';

/** Debian's python3 with the Prometheus project's own client library (python3-prometheus-client), whose text parser a scrape must pass. */
const python = requireBinary('python3', { candidates: ['/usr/bin/python3'] });
const hasParser = python.path !== '' && spawnSync(python.path, ['-c', 'import prometheus_client.parser']).status === 0;
if (python.path && !hasParser) {
  const message = `${python.path} has no prometheus_client (apt-get install python3-prometheus-client): the Prometheus parser test cannot run`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`SKIPPED: ${message}`);
}
const withParser = hasParser ? describe : describe.skip;
const PROMETHEUS_PARSE = [
  'import json, sys',
  'from prometheus_client.parser import text_string_to_metric_families',
  'families = {f.name: {"type": f.type, "samples": len(f.samples)} for f in text_string_to_metric_families(sys.stdin.read())}',
  'print(json.dumps(families))',
].join('\n');

describe('metrics', () => {
  let f: BridgeFixture;
  let u: DavUser;
  let server: MetricsServer;

  beforeAll(async () => {
    const metrics = new Metrics();
    f = await bridgeFixture({ metrics });
    server = await startMetricsServer(metrics, '127.0.0.1', 0, createLogger('silent'));
    u = await f.newDavUser();
  });
  afterAll(async () => {
    await server.close();
    await f.close();
  });

  async function scrape(): Promise<Sample[]> {
    const res = await request(server.url);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return parsePrometheusText(await res.body.text()).samples;
  }

  it('counts requests, bytes, latency, locks, sessions and cache use, in valid exposition text', async () => {
    const before = await scrape();
    const body = Buffer.alloc(100_000, 1);
    expect((await davRequest(f.davUrl, 'PUT', '/home/m.bin', { auth: u.auth, body })).status).toBe(201);
    expect((await davRequest(f.davUrl, 'PROPFIND', '/home/', { auth: u.auth, headers: { depth: '1' } })).status).toBe(207);
    expect((await davRequest(f.davUrl, 'PROPFIND', '/home/', { auth: u.auth, headers: { depth: '1' } })).status).toBe(207);
    expect((await davRequest(f.davUrl, 'GET', '/home/missing.txt', { auth: u.auth })).status).toBe(404);
    const lock = await davRequest(f.davUrl, 'LOCK', '/home/m.bin', { auth: u.auth, headers: { timeout: 'Second-600' }, body: EXCLUSIVE_LOCKINFO });
    expect(lock.status).toBe(200);
    // The access log writes (and counts) when the server side closes, just after the client read the answer.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const after = await scrape();

    const moved = (name: string, labels: Record<string, string> = {}) => sampleSum(after, name, labels) - sampleSum(before, name, labels);
    expect(moved('driveway_http_requests_total', { part: 'bridge', method: 'PUT', status: '2xx' })).toBe(1);
    expect(moved('driveway_http_requests_total', { part: 'bridge', method: 'PROPFIND', status: '2xx' })).toBe(2);
    expect(moved('driveway_http_requests_total', { part: 'bridge', method: 'GET', status: '4xx' })).toBe(1);
    expect(moved('driveway_http_requests_total', { part: 'bridge', method: 'LOCK', status: '2xx' })).toBe(1);
    expect(moved('driveway_http_request_duration_seconds_count', { part: 'bridge', method: 'PROPFIND' })).toBe(2);
    expect(moved('driveway_http_request_duration_seconds_bucket', { part: 'bridge', method: 'PROPFIND', le: '+Inf' })).toBe(2);
    expect(moved('driveway_http_request_duration_seconds_sum', { part: 'bridge', method: 'PROPFIND' })).toBeGreaterThan(0);
    expect(moved('driveway_http_received_bytes_total', { part: 'bridge' })).toBeGreaterThanOrEqual(body.length);
    expect(moved('driveway_http_sent_bytes_total', { part: 'bridge' })).toBeGreaterThan(0);
    // The user was made through the store's REST API: its requests are counted too (part store).
    expect(sampleSum(after, 'driveway_http_requests_total', { part: 'store', method: 'POST', status: '2xx' })).toBeGreaterThan(0);
    expect(sampleSum(after, 'driveway_dav_locks_active')).toBe(1);
    expect(sampleSum(after, 'driveway_bridge_sessions')).toBe(1);
    // The second PROPFIND of /home/ was answered from the cache.
    expect(moved('driveway_bridge_cache_hits_total')).toBeGreaterThanOrEqual(1);
    expect(sampleSum(after, 'driveway_bridge_cache_misses_total')).toBeGreaterThanOrEqual(1);
    expect(after.some((s) => s.name === 'nodejs_eventloop_lag_seconds' && Number.isFinite(s.value))).toBe(true);
  });

  withParser('read by the Prometheus client library\'s own parser', () => {
    it('parses every family of a scrape, with the types driveway declares', async () => {
      expect((await davRequest(f.davUrl, 'PROPFIND', '/home/', { auth: u.auth, headers: { depth: '1' } })).status).toBe(207);
      await new Promise((resolve) => setTimeout(resolve, 100));
      const text = await (await request(server.url)).body.text();
      const parsed = await runProgram(python.path, ['-c', PROMETHEUS_PARSE], { input: text, timeoutMs: 30_000 });
      expect(parsed.code, parsed.stderr).toBe(0);
      const families = JSON.parse(parsed.stdout) as Record<string, { type: string; samples: number }>;
      // The parser names counters without their _total suffix.
      expect(families.driveway_http_requests).toMatchObject({ type: 'counter' });
      expect(families.driveway_http_requests!.samples).toBeGreaterThan(0);
      expect(families.driveway_http_request_duration_seconds).toMatchObject({ type: 'histogram' });
      expect(families.driveway_dav_locks_active).toMatchObject({ type: 'gauge' });
      expect(families.nodejs_eventloop_lag_seconds).toMatchObject({ type: 'gauge' });
    });
  });

  it('is read by a reader that refuses what a scraper would refuse', () => {
    expect(() => parsePrometheusText('# TYPE a counter\na{x="1"} 1\n')).not.toThrow();
    expect(() => parsePrometheusText('a 1\n')).toThrow(/without a TYPE/);
    expect(() => parsePrometheusText('# TYPE a counter\na{x=1} 1\n')).toThrow(/not a valid/);
    expect(() => parsePrometheusText('# TYPE a counter\na one\n')).toThrow(/not a valid/);
  });

  it('is served only on its own listener', async () => {
    expect((await davRequest(f.davUrl, 'GET', '/metrics', { auth: u.auth })).status).toBe(404);
    const store = await request(`${f.store.url}/metrics`);
    await store.body.dump();
    expect(store.statusCode).toBe(404);
    const other = await request(server.url.replace('/metrics', '/other'));
    await other.body.dump();
    expect(other.statusCode).toBe(404);
  });
});
