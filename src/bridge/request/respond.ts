/** Writing answers: failures (status + optional DAV:error body), XML bodies, empty answers. */
import type { DavFailure } from '../dav-errors.js';
import { errorBody, escapeXmlText } from '../dav-xml.js';
import type { DavContext } from './context.js';

export const XML_TYPE = 'application/xml; charset=utf-8';

/** Sends an XML body with an exact Content-Length (HEAD-safe). */
export function sendXml(ctx: DavContext, status: number, xml: string, headers: Record<string, string> = {}): void {
  const body = Buffer.from(xml, 'utf8');
  ctx.res.writeHead(status, { ...headers, 'Content-Type': XML_TYPE, 'Content-Length': String(body.length) });
  ctx.res.end(ctx.method === 'HEAD' ? undefined : body);
}

export function sendEmpty(ctx: DavContext, status: number, headers: Record<string, string> = {}): void {
  ctx.res.writeHead(status, { ...headers, 'Content-Length': '0' });
  ctx.res.end();
}

/** Answers a failure. When the answer has already started, the connection is cut instead. */
const KEPT_ON_FAILURE: ReadonlySet<string> = new Set(['dav', 'ms-author-via', 'server', 'access-control-allow-origin', 'access-control-expose-headers', 'vary']);

export function writeFailure(ctx: DavContext, failure: DavFailure, _err: unknown): void {
  const { res } = ctx;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // What a verb set for its success goes; what every answer carries stays (CORS: the web app
  // must be able to read a refusal too, bridge/cors.ts).
  for (const name of res.getHeaderNames()) {
    if (!KEPT_ON_FAILURE.has(name)) res.removeHeader(name);
  }
  if (failure.condition) sendXml(ctx, failure.status, errorBody(failure.condition, failure.hrefs ?? []), failure.headers);
  else sendEmpty(ctx, failure.status, failure.headers);
}

/**
 * A refusal in Sabre's shape, as Nextcloud answers under /remote.php/dav/
 * (`<d:error><s:exception/><s:message/></d:error>`): its clients print the message, and some
 * match it (nextcloud-chunk-file-upload takes "The resource you tried to create already exists"
 * on MKCOL as "there already"). Only texts written for the client go here, never a store's.
 */
export function sendSabreError(ctx: DavContext, status: number, message: string, headers: Record<string, string> = {}): void {
  const body = Buffer.from(
    `<?xml version="1.0" encoding="utf-8"?>\n<d:error xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns"><s:exception>${status}</s:exception><s:message>${escapeXmlText(message)}</s:message></d:error>`,
    'utf8',
  );
  if (!ctx.req.complete) ctx.req.resume();
  ctx.res.writeHead(status, { ...headers, 'Content-Type': XML_TYPE, 'Content-Length': String(body.length) });
  ctx.res.end(ctx.method === 'HEAD' ? undefined : body);
}
