/**
 * The body rate and the connection cap of common/http-limits.ts on a plain Node http server on
 * 127.0.0.1, where the handler's behaviour is the test's to choose (the listeners' own suite is
 * test/security/slow-body.test.ts): time in which the handler holds the body back is not counted
 * against the client; a client still trickling its body after its answer was sent is cut
 * without a second status line; peers in `uncappedAddresses` are not counted.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { applyHttpLimits, checkingIntervalOf, type HttpLimits } from '../../../src/common/http-limits.js';
import { createLogger } from '../../../src/common/logger.js';
import { exchange, pieces } from '../../helpers/slow-socket.js';

const LIMITS: HttpLimits = {
  headersTimeoutMs: 60_000,
  requestTimeoutMs: 0,
  idleTimeoutMs: 60_000,
  minBodyRateBytesPerSec: 1024,
  bodyRateWindowMs: 1_000,
  maxConnectionsPerAddress: 0,
};

const servers: http.Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function serve(limits: Partial<HttpLimits>, handler: (req: IncomingMessage, res: ServerResponse) => void, uncappedAddresses: string[] = []): Promise<string> {
  const server = http.createServer(handler);
  applyHttpLimits(server, { ...LIMITS, ...limits }, { log: createLogger('silent'), uncappedAddresses });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Reads the whole body and answers 200 with its length. */
function answerLength(req: IncomingMessage, res: ServerResponse): void {
  let length = 0;
  req.on('data', (chunk: Buffer) => {
    length += chunk.length;
  });
  req.on('end', () => res.end(String(length)));
}

const head = (length: number): string => `PUT /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`;

it('does not count against the client the time in which the handler does not read its body', async () => {
  // The handler starts reading after three windows; the client sent everything at once.
  const url = await serve({}, (req, res) => {
    setTimeout(() => answerLength(req, res), 3 * LIMITS.bodyRateWindowMs);
  });
  const size = 8 * 1024 * 1024;
  const result = await exchange(url, head(size), [Buffer.alloc(size, 1)], 10);
  expect(result.response).toMatch(/^HTTP\/1\.1 200[\s\S]*\r\n\r\n8388608$/);
});

it('cuts a client trickling its body after its answer was sent, without a second status line', async () => {
  const url = await serve({}, (_req, res) => {
    res.writeHead(401, { 'Content-Length': '0' }).end();
  });
  const body = Buffer.alloc(100, 2);
  const result = await exchange(url, head(body.length).replace('Connection: close\r\n', ''), pieces(body, 100), 500);
  expect(result.closedByServer).toBe(true);
  expect(result.elapsedMs).toBeLessThan(LIMITS.bodyRateWindowMs + 2_000);
  expect(result.response.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 401']);
});

it('does not count connections from an uncapped address (a trusted proxy), in any spelling', async () => {
  const url = await serve({ maxConnectionsPerAddress: 1 }, answerLength, ['::ffff:127.0.0.1']);
  const results = await Promise.all(Array.from({ length: 4 }, () => exchange(url, head(3), [Buffer.from('abc')], 200)));
  expect(results.map((r) => r.response.slice(0, 12))).toEqual(Array.from({ length: 4 }, () => 'HTTP/1.1 200'));
});

it('checks the headers and whole-request bounds once a second, more often for bounds under 20 s', () => {
  expect(checkingIntervalOf({ headersTimeoutMs: 60_000, requestTimeoutMs: 4 * 60 * 60 * 1000 })).toBe(1_000);
  expect(checkingIntervalOf({ headersTimeoutMs: 8_000, requestTimeoutMs: 0 })).toBe(400);
  expect(checkingIntervalOf({ headersTimeoutMs: 100, requestTimeoutMs: 0 })).toBe(50);
});
