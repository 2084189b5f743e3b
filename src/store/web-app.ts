/**
 * Serves the web app (src/web, built by `npm run build` into dist/web, or `store.webDir`) on the
 * store's listener: its hashed assets under /app/assets/ (cached for a year: a new build has new
 * names) and its one page, index.html, for any GET that asks for HTML outside the REST API's own
 * namespaces (/auth, /api, /upload, /resources, /public, ...: the first path segments of every
 * route registered), so the app's routes (/sign-in, /connect, ...) load it and the app's router
 * takes over; and, through `page`, for a share link a browser opens (routes/public.ts decides
 * when). The app's pages get their own strict policy (docs/content-security.md "The web app").
 * Everything is read once at start, gzipped once, and served from memory. Must never serve a
 * file outside the build folder, nor a page for an API path other than a link's.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import mime from 'mime-types';
import { bridgePublicUrl, type Config } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import { errorEnvelope } from './envelope.js';

/**
 * The app's pages: its own script and style only, in no frame; calls to this origin and to the
 * WebDAV bridge's (`bridge.publicUrl`, where its tus uploads go: bridge/cors.ts) only. Frames of
 * this origin only: the preview of a file (pages/item.tsx), an `<iframe sandbox="">` on the view
 * path, whose bytes carry the store's own sandbox policy (content-security.ts).
 */
export function appCsp(config: Config): string {
  return `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' ${new URL(bridgePublicUrl(config)).origin}; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'`;
}

export const ASSET_PREFIX = '/app/assets/';

/** A built asset's name: what Vite writes (`index-B1x2.js`), nothing with a slash or `..`. */
const ASSET_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer | undefined;
}

export interface WebApp {
  dir: string;
  /** index.html, or undefined when the app is not built. */
  page: Asset | undefined;
  assets: ReadonlyMap<string, Asset>;
}

/** dist/web of this installation: two levels up from this file, in src/store and in dist/store alike. */
export function webAppDir(config: Config): string {
  if (config.store.webDir) return path.resolve(config.store.webDir);
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'web');
}

function asset(type: string, body: Buffer): Asset {
  // Below a kilobyte gzip saves little and costs a header; images are compressed already.
  const compressible = body.length >= 1024 && /^(?:text\/|application\/(?:javascript|json)|image\/svg)/.test(type);
  return { type, body, gzip: compressible ? gzipSync(body, { level: 9 }) : undefined };
}

/** Reads the built app; a missing folder or index.html gives an app with no page. */
export function loadWebApp(dir: string): WebApp {
  const indexFile = path.join(dir, 'index.html');
  if (!statSync(indexFile, { throwIfNoEntry: false })?.isFile()) return { dir, page: undefined, assets: new Map() };
  const assets = new Map<string, Asset>();
  const assetDir = path.join(dir, ...ASSET_PREFIX.split('/').filter(Boolean));
  for (const name of statSync(assetDir, { throwIfNoEntry: false })?.isDirectory() ? readdirSync(assetDir) : []) {
    const file = path.join(assetDir, name);
    if (!ASSET_NAME.test(name) || !statSync(file).isFile()) continue;
    assets.set(name, asset(mime.contentType(name) || 'application/octet-stream', readFileSync(file)));
  }
  return { dir, page: asset('text/html; charset=utf-8', readFileSync(indexFile)), assets };
}

function send(request: FastifyRequest, reply: FastifyReply, item: Asset, headers: Record<string, string>, status = 200): FastifyReply {
  const gzip = item.gzip !== undefined && /\bgzip\b/i.test(String(request.headers['accept-encoding'] ?? ''));
  void reply
    .code(status)
    .headers({
      ...headers,
      'content-type': item.type,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      ...(item.gzip ? { vary: 'Accept-Encoding' } : {}),
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    });
  return reply.send(gzip ? item.gzip : item.body);
}

/** The app's page, sent with `status` (a link's page: 404 or 410 for a gone link, so a program reading the status learns it too). */
export type SendAppPage = (request: FastifyRequest, reply: FastifyReply, status?: number) => FastifyReply;

export interface RegisteredWebApp {
  /** Sends the page for a browser's GET outside the API and answers true, or answers false (then the caller answers its 404 envelope). */
  outsideApi: (request: FastifyRequest, reply: FastifyReply) => boolean;
  /** Sends the page (or, unbuilt, the 404 saying so): for an API path that has a page for browsers (/public/{token}). */
  page: SendAppPage;
}

/** Registers GET /app/assets/:name; answers how to send the app's page. */
export function registerWebApp(app: FastifyInstance, config: Config, routes: readonly string[], log: Logger): RegisteredWebApp {
  const web = loadWebApp(webAppDir(config));
  const csp = appCsp(config);
  if (!web.page) log.warn({ dir: web.dir }, 'the web app is not built (no index.html there): run npm run build; the REST API works without it');

  app.get<{ Params: { name: string } }>(`${ASSET_PREFIX}:name`, async (request, reply) => {
    const item = web.assets.get(request.params.name);
    if (!item) return reply.callNotFound();
    return send(request, reply, item, { 'cache-control': 'public, max-age=31536000, immutable', 'content-security-policy': csp });
  });

  const page: SendAppPage = (request, reply, status = 200) => {
    if (!web.page) return reply.code(404).send(errorEnvelope('the web app is not built on this server: run npm run build (the REST API works without it)', 'not_implemented'));
    return send(request, reply, web.page, { 'cache-control': 'no-cache', 'content-security-policy': csp, 'x-frame-options': 'DENY' }, status);
  };

  let apiSegments: Set<string> | undefined;
  const outsideApi = (request: FastifyRequest, reply: FastifyReply): boolean => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return false;
    if (!/\btext\/html\b/i.test(String(request.headers.accept ?? ''))) return false;
    const pathname = request.url.split('?')[0] ?? '/';
    // Learned at the first such request, when every route is registered.
    apiSegments ??= new Set(routes.map((route) => route.split(' ')[1]?.split('/')[1] ?? '').filter((segment) => segment !== '' && !segment.startsWith(':')));
    if (apiSegments.has(pathname.split('/')[1] ?? '')) return false;
    page(request, reply);
    return true;
  };
  return { outsideApi, page };
}
