/**
 * The one pino root logger and the redaction rules every part shares. Nothing logged may
 * contain a password, a session token, an upload token, a link token or a fileaccesskey,
 * including the ones that travel inside URL paths.
 */
import { pino, type Logger, type LoggerOptions } from 'pino';

const REDACTED = '[redacted]';

const URL_SECRETS: Array<[RegExp, string]> = [
  [/(\/upload\/)[^/?#]+/g, `$1${REDACTED}`],
  // Every /resources/auth/<kind>/<fileaccesskey>/... route (view, download, zip, thumbnail).
  [/(\/resources\/auth\/[a-z]+\/)[^/?#]+/g, `$1${REDACTED}`],
  // Public and upload links: `/public/<token>...` as a URL's first path segment (a DAV path
  // like /webdrive/x/public/y is a folder name, not a link).
  [/((?:^|\/\/[^/\s]+|\s)\/public\/)[^/?#\s]+/g, `$1${REDACTED}`],
  [/([?&](?:token|chat_token|key|password|access_token)=)[^&#]*/gi, `$1${REDACTED}`],
];

/** Hides tokens and keys carried in a URL or path; safe on any string. */
export function redactUrl(url: string): string {
  let out = url;
  for (const [pattern, replacement] of URL_SECRETS) out = out.replace(pattern, replacement);
  return out;
}

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
  // Libraries log their own copies at trace level (@fastify/multipart: busboyOptions.headers).
  '*.headers.authorization',
  '*.headers.cookie',
  'password',
  'token',
  'fileaccesskey',
  '*.password',
  '*.token',
  '*.fileaccesskey',
];

export type LogFormat = 'json' | 'pretty';

/**
 * The root logger. `pretty` turns each JSON line into one readable line (prettyLine) on the way
 * to `destination` (stdout by default); redaction has happened before, so it sees what JSON would.
 */
export function createLogger(level: string, destination?: pino.DestinationStream, format: LogFormat = 'json'): Logger {
  const options: LoggerOptions = {
    level,
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    base: { pid: process.pid },
  };
  if (format === 'pretty') return pino(options, prettyStream(destination ?? pino.destination(1)));
  return destination ? pino(options, destination) : pino(options);
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
/** Keys a pretty line shows in its own place (or, for pid and hostname, not at all). */
const PLACED_KEYS = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'part', 'err']);

function prettyValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

/**
 * One pino JSON line as a person reads it:
 * `07:12:22.123 INFO  bridge: request method=PUT path=/a.txt status=201 ms=4`, an error's stack
 * indented below. Anything that is not a JSON object passes through unchanged.
 */
export function prettyLine(line: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return line;
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 23) : '';
  const level = LEVEL_NAMES[entry.level as number] ?? String(entry.level);
  // Control characters in the message (a file name, a header) cannot start a made-up line.
  const msg = typeof entry.msg === 'string' ? entry.msg.replace(/[\u0000-\u001f\u007f]/g, ' ') : '';
  let out = `${time} ${level}${typeof entry.part === 'string' ? ` ${entry.part}:` : ''} ${msg}`;
  for (const key of Object.keys(entry)) if (!PLACED_KEYS.has(key)) out += ` ${key}=${prettyValue(entry[key])}`;
  const err = entry.err as { message?: unknown; stack?: unknown } | undefined;
  if (err && typeof err === 'object') {
    const text = typeof err.stack === 'string' ? err.stack : prettyValue(err.message ?? err);
    out += `\n    ${text.split('\n').join('\n    ')}`;
  }
  return `${out}\n`;
}

/** A pino destination that writes each line through prettyLine (pino writes one line per call). */
function prettyStream(destination: pino.DestinationStream): pino.DestinationStream {
  return { write: (line: string) => destination.write(prettyLine(line)) };
}

/** Serializers for fastify's request/response logs: method, redacted URL, no headers. */
export const requestSerializers = {
  req(request: { method: string; url: string; ip?: string; id?: string }) {
    return { id: request.id, method: request.method, url: redactUrl(request.url), ip: request.ip };
  },
  res(reply: { statusCode: number }) {
    return { statusCode: reply.statusCode };
  },
};

export type { Logger };
