/**
 * A logger writing into memory, for suites that check what was logged: every line parsed, and a
 * bounded wait for one that is written after the client already has its answer (the access log
 * writes when the server side of the response closes).
 */
import { Writable } from 'node:stream';
import { createLogger, type LogFormat, type Logger } from '../../src/common/logger.js';

export interface LogCapture {
  logger: Logger;
  /** Everything written, as written. */
  text(): string;
  /** The JSON lines written (format json only). */
  lines(): Array<Record<string, unknown>>;
  /** The first line matching, waiting up to `timeoutMs` for it; fails with what was logged. */
  waitFor(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
}

export function captureLog(level = 'info', format: LogFormat = 'json'): LogCapture {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    logger: createLogger(level, sink, format),
    text: () => chunks.join(''),
    lines,
    async waitFor(match, timeoutMs = 3000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = lines().find(match);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no matching log line in:\n${chunks.join('')}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}
