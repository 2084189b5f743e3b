/**
 * The one pino root logger and the redaction rules every part shares. Nothing logged may
 * contain a password, a session token, an upload token, a link token or a fileaccesskey,
 * including the ones that travel inside URL paths.
 */
import { pino, type Logger, type LoggerOptions } from 'pino';

const REDACTED = '[redacted]';

const URL_SECRETS: Array<[RegExp, string]> = [
  [/(\/upload\/)[^/?#]+/g, `$1${REDACTED}`],
  [/(\/resources\/auth\/(?:view|download)\/)[^/?#]+/g, `$1${REDACTED}`],
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

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    base: { pid: process.pid },
  };
  return destination ? pino(options, destination) : pino(options);
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
