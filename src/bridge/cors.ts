/**
 * CORS for the web app (src/web, served by the store on its own origin), which uploads through
 * the bridge with tus and a bearer token (token-sessions.ts): which origins may read the
 * bridge's answers, the preflight answer, and the headers of an actual answer
 * (docs/bridge-design.md "Bearer tokens and CORS").
 *
 * The origins: `bridge.corsOrigins` when set, else the web app's own origin when the bridge knows
 * it (WebAppLocation: `store.publicUrl`, or the store of this process at the host the request
 * reached the bridge by). Never `*` and never credentials mode: the web app sends its token in
 * Authorization, and no cookie of the bridge exists to be sent.
 *
 * A preflight is an OPTIONS with Origin and Access-Control-Request-Method (Fetch §3.2.2); a DAV
 * or tus OPTIONS has neither and is answered by verbs/options.ts, unchanged. Owns no
 * authentication: a preflight carries no credentials and is answered before any.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connectPageUrl } from './verbs/index-page.js';
import type { WebAppLocation } from './request/context.js';
import { DAV_METHODS } from './verbs/options.js';
import { headerValue } from './request/headers.js';

/** tus (POST creates, PATCH appends) and every DAV verb. */
export const CORS_METHODS = [...DAV_METHODS, 'POST', 'PATCH'];

export const CORS_ALLOW_HEADERS = [
  'Authorization',
  'Tus-Resumable',
  'Upload-Length',
  'Upload-Metadata',
  'Upload-Offset',
  'Upload-Checksum',
  'Upload-Concat',
  'Upload-Defer-Length',
  'Content-Type',
  'X-HTTP-Method-Override',
  'Depth',
  'Destination',
  'Overwrite',
];

export const CORS_EXPOSE_HEADERS = ['Location', 'Upload-Offset', 'Upload-Length', 'Upload-Expires', 'Tus-Version', 'Tus-Resumable', 'Tus-Max-Size', 'Tus-Extension', 'ETag', 'OC-FileId'];

/** How long a browser may reuse a preflight's answer (Chromium caps it at 2 h). */
export const CORS_MAX_AGE_SEC = 600;

/** The origin of a URL (scheme, host, port as a browser writes them), or undefined. */
function originOf(url: string): string | undefined {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

export class CorsPolicy {
  private readonly configured?: ReadonlySet<string>;

  constructor(
    origins: readonly string[] | undefined,
    private readonly webApp: WebAppLocation | undefined,
  ) {
    if (origins) this.configured = new Set(origins.map((o) => originOf(o)).filter((o): o is string => o !== undefined));
  }

  /** Whether answers to a request from `origin`, which reached the bridge by `host`, may be read by that page. */
  allows(origin: string | undefined, host: string | undefined): origin is string {
    if (origin === undefined || origin === 'null') return false;
    if (this.configured) return this.configured.has(origin);
    const page = connectPageUrl(this.webApp, host);
    return page !== undefined && originOf(page) === origin;
  }

  /** An OPTIONS of the CORS protocol, not of DAV or tus. */
  isPreflight(req: IncomingMessage): boolean {
    return req.method === 'OPTIONS' && headerValue(req.headers.origin) !== undefined && headerValue(req.headers['access-control-request-method']) !== undefined;
  }

  /** Answers a preflight: 204 with what the web app may send, or 403 without a CORS header (the browser then refuses the request). */
  answerPreflight(req: IncomingMessage, res: ServerResponse): void {
    const origin = headerValue(req.headers.origin);
    req.resume();
    if (!this.allows(origin, req.headers.host)) {
      res.writeHead(403, { Vary: 'Origin', 'Content-Length': '0' }).end();
      return;
    }
    res.writeHead(204, {
      'Access-Control-Allow-Origin': origin,
      'Access-Control-Allow-Methods': CORS_METHODS.join(', '),
      'Access-Control-Allow-Headers': CORS_ALLOW_HEADERS.join(', '),
      'Access-Control-Max-Age': String(CORS_MAX_AGE_SEC),
      Vary: 'Origin',
      'Content-Length': '0',
    });
    res.end();
  }

  /**
   * Headers of an actual answer: the allowed origin and what it may read. A request with an
   * Origin the policy refuses gets no CORS header (the browser keeps the answer from the page).
   * `Vary: Origin` on every answer to a request with an Origin, so no cache hands one origin's
   * answer to another.
   */
  decorate(req: IncomingMessage, res: ServerResponse): void {
    const origin = headerValue(req.headers.origin);
    if (origin === undefined) return;
    res.setHeader('Vary', 'Origin');
    if (!this.allows(origin, req.headers.host)) return;
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS.join(', '));
  }
}
