/**
 * OPTIONS (RFC 4918 §10.1, §18): answers on every URL, without credentials (Windows maps a
 * drive only when an anonymous OPTIONS succeeds: docs/client-quirks.md §2), with `DAV: 1, 2` (class 2
 * makes Finder mount read-write: §1) and `MS-Author-Via: DAV` (Office: §2), and tus's
 * Tus-Version/Tus-Extension/Tus-Max-Size (a POST to a folder starts a tus upload: uploads/tus.ts),
 * and `DASL: <DAV:basicsearch>` (RFC 5323 §3.2: SEARCH answers here, verbs/search.ts).
 */
import { TUS_OPTIONS_HEADERS } from '../tus-headers.js';
import type { VerbHandler } from '../request/context.js';

export const DAV_METHODS = ['OPTIONS', 'GET', 'HEAD', 'PUT', 'DELETE', 'PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'SEARCH'];

export const options: VerbHandler = async (ctx) => {
  ctx.res.statusCode = 200;
  ctx.res.setHeader('Allow', DAV_METHODS.join(', '));
  ctx.res.setHeader('Accept-Ranges', 'bytes');
  ctx.res.setHeader('DASL', '<DAV:basicsearch>');
  for (const [name, value] of Object.entries(TUS_OPTIONS_HEADERS)) ctx.res.setHeader(name, value);
  ctx.res.setHeader('Content-Length', '0');
  ctx.res.end();
};
