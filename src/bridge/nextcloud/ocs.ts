/**
 * The Nextcloud client protocol's discovery on the bridge's own address: `GET /status.php`
 * (status.ts) and the OCS API under `/ocs/v1.php/` and `/ocs/v2.php/` (the envelope:
 * ocs-envelope.ts). These answers are not DAV: plain JSON or XML with nosniff, no `DAV` header.
 * What each endpoint is for, and which client asks it, is docs/client-quirks.md §7.
 *
 * Authentication is the bridge's own, exactly as for a DAV request (server.ts hands it in: Basic
 * with a password or an app password, or a store token as Bearer; a refused login counts against
 * the same limiter). `OCS-APIRequest: true` is not required: Nextcloud asks it only of requests
 * riding a browser's cookie session (its CSRF guard), and the bridge has no cookies.
 * `cloud/capabilities` and `config` are public, as in Nextcloud (the desktop's wizard reads the
 * capabilities before it has credentials): they say the same to everyone and cost no store call.
 *
 * Must not: advertise what driveway does not do (no end-to-end encryption, activity or user
 * status); answer another user's data.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UserProfile } from '../../store-client/contract.js';
import { davFailureOf } from '../dav-errors.js';
import { AuthenticationFailed, type BridgeUser } from '../sessions.js';
import { withSession } from '../tree/context.js';
import { UNLIMITED_AVAILABLE_BYTES } from '../tree/grants.js';
import { OcsRefusal, type EndpointCall, type NextcloudDoorOptions, type OcsEndpoint, type OcsMethod } from './ocs-endpoint.js';
import { OCS_NOT_FOUND, OCS_NOT_LOGGED_IN, ocsFormatOf, renderOcs, type OcsResult, type OcsValue, type OcsVersion } from './ocs-envelope.js';
import { ocsVersion, PRODUCT_NAME, serverStatus, STATUS_PATH } from './status.js';
import { NOTIFICATIONS_CAPABILITY, notificationsEndpoints } from './notifications.js';
import { sharingCapability, sharingEndpoints } from './sharing.js';

/** A request for this door: status.php, or an OCS endpoint of one version. */
export type NextcloudRoute = { kind: 'status' } | { kind: 'ocs'; version: OcsVersion; endpoint: string; query: URLSearchParams };

export type { NextcloudDoorOptions } from './ocs-endpoint.js';

/** Nextcloud's poll interval default is 60 (read as milliseconds, under the clients' 5 s floor, so ignored); this is the desktop's own default, 30 s. */
const POLL_INTERVAL_MS = 30_000;

/**
 * `cloud/capabilities`, what driveway does (Nextcloud desktop src/libsync/capabilities.cpp and
 * ownCloud's read these keys): chunking NG (`dav.chunking` >= "1.0": uploads/nextcloud.ts) over
 * the legacy chunking, SHA1 and MD5 checksums the store verifies (common/oc-checksum.ts; SHA1
 * preferred), trash (`undelete`) and versions, bulk upload (`dav.bulkupload`: uploads/bulk.ts). `uploadConflictFiles` false, as Nextcloud's own
 * default: a conflict copy stays on the device that made it (uploaded, a copy made in a read-only
 * drive would be refused at every sync, and the client would never finish one cleanly).
 * `core.status` is ownCloud's (owncloudcmd takes its server version from it).
 */
export function capabilities(call?: EndpointCall): OcsValue {
  return {
    version: ocsVersion(),
    capabilities: {
      core: { pollinterval: POLL_INTERVAL_MS, 'webdav-root': 'remote.php/webdav', status: serverStatus() },
      dav: bulkUploadOffered(call) ? { chunking: '1.0', bulkupload: '1.0' } : { chunking: '1.0' },
      files: { bigfilechunking: true, undelete: true, versioning: true },
      checksums: { supportedTypes: ['SHA1', 'MD5'], preferredUploadType: 'SHA1' },
      uploadConflictFiles: false,
      ...(call?.options.push ? { notify_push: call.options.push(call.req) } : {}),
      notifications: NOTIFICATIONS_CAPABILITY,
      files_sharing: sharingCapability(),
    },
  };
}

/**
 * Whether `dav.bulkupload` is advertised (uploads/bulk.ts), by bridge.bulkUploadClients: `fixed`
 * leaves it out for the Nextcloud desktop clients (their User-Agent says `mirall/<version>`,
 * nextcloudcmd's too) before 3.10: their bulk request fails inside the client when it holds an
 * empty file ("Network error: 99", the whole request's files failed; nextcloud/desktop #5871, in
 * 3.9's later releases and 3.10), so a first sync with an empty file would fail. They upload by
 * PUT as before. `DRIVEWAY_BENCH_NO_BULK_UPLOAD=1` (bench/bulk.ts) leaves it out for everyone.
 */
function bulkUploadOffered(call: EndpointCall | undefined): boolean {
  if (process.env.DRIVEWAY_BENCH_NO_BULK_UPLOAD === '1') return false;
  const clients = call?.options.bulkUploadClients ?? 'fixed';
  if (clients !== 'fixed') return clients === 'all';
  const agent = call?.req.headers['user-agent'];
  const version = typeof agent === 'string' ? /\bmirall\/(\d+)\.(\d+)/.exec(agent) : null;
  if (!version) return true;
  const [major, minor] = [Number(version[1]), Number(version[2])];
  return major > 3 || (major === 3 && minor >= 10);
}

/** Nextcloud's "unlimited" quota value (FileInfo::SPACE_UNLIMITED). */
const SPACE_UNLIMITED = -3;

/**
 * `quota` of cloud/user as Nextcloud computes it (total = used + free, relative in percent to two
 * places), from the numbers PROPFIND's quota properties come from: no limit (disk_quota 0 or
 * below) is SPACE_UNLIMITED with the same large free space PROPFIND reports.
 */
export function quotaOf(profile: Pick<UserProfile, 'diskQuotaBytes' | 'diskUsedBytes'>): { [key: string]: OcsValue } {
  const used = Math.max(0, profile.diskUsedBytes);
  const limited = profile.diskQuotaBytes > 0;
  const free = limited ? Math.max(0, profile.diskQuotaBytes - used) : UNLIMITED_AVAILABLE_BYTES;
  const total = used + free;
  return {
    free,
    used,
    total,
    relative: total > 0 ? Math.round((used / total) * 10_000) / 100 : 0,
    quota: limited ? profile.diskQuotaBytes : SPACE_UNLIMITED,
  };
}

async function currentUser({ user, options }: EndpointCall): Promise<OcsValue> {
  const caller = user as BridgeUser;
  const profile = await withSession(caller, (s) => options.client.currentUser(s));
  const displayName = profile.fullname.trim() || caller.name;
  return {
    enabled: true,
    // The login name, as `/remote.php/dav/files/<id>/` takes it (remote-dav.ts).
    id: caller.name,
    'display-name': displayName,
    displayname: displayName,
    email: profile.email || null,
    quota: quotaOf(profile),
    backendCapabilities: { setDisplayName: false, setPassword: false },
  };
}

/** Nextcloud's `config` (the OCS API's own description), with driveway's name. */
function config({ req, options }: EndpointCall): OcsValue {
  const base = new URL(options.absoluteBase(req));
  return { version: '1.7', website: PRODUCT_NAME, host: base.host, contact: '', ssl: base.protocol === 'https:' ? 'true' : 'false' };
}

/** A user status nobody set: what the user_status app answers before one is chosen. */
function userStatus({ user }: EndpointCall): OcsValue {
  return {
    userId: (user as BridgeUser).name,
    message: null,
    messageId: null,
    messageIsPredefined: false,
    icon: null,
    clearAt: null,
    status: 'online',
    statusIsUserDefined: false,
  };
}

const EMPTY_LIST = (): OcsValue => [];

/** The endpoints below `/ocs/v{1,2}.php`: each app's own list joins here. */
const ENDPOINTS: readonly OcsEndpoint[] = [
  { path: '/cloud/capabilities', isPublic: true, answer: capabilities },
  { path: '/cloud/user', answer: currentUser },
  { path: '/config', isPublic: true, answer: config },
  // Not advertised in the capabilities, so the desktop does not poll them; answered empty for
  // clients that ask anyway (the mobile apps, older desktops) until they are real.
  ...notificationsEndpoints,
  { path: '/apps/user_status/api/v1/user_status', answer: userStatus },
  { path: '/apps/user_status/api/v1/predefined_statuses', answer: EMPTY_LIST },
  { path: '/apps/activity/api/v2/activity', answer: EMPTY_LIST },
  { path: '/apps/activity/api/v2/activity/all', answer: EMPTY_LIST },
  { path: '/apps/activity/api/v2/activity/filter', answer: EMPTY_LIST },
  // The desktop's apps menu (OcsNavigationAppsJob), asked at every connection: no web apps here.
  { path: '/core/navigation/apps', answer: EMPTY_LIST },
  ...sharingEndpoints,
];

interface CompiledEndpoint {
  endpoint: OcsEndpoint;
  method: OcsMethod;
  pattern: RegExp;
  names: string[];
}

const COMPILED: readonly CompiledEndpoint[] = ENDPOINTS.map((endpoint) => {
  const names: string[] = [];
  const source = endpoint.path
    .split('/')
    .map((segment) => {
      const named = /^\{(\w+)\}$/.exec(segment);
      if (!named) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(named[1] as string);
      return '([^/]+)';
    })
    .join('/');
  return { endpoint, method: endpoint.method ?? 'GET', pattern: new RegExp(`^${source}$`), names };
});

/** The endpoint for a path and method; `allowed` the methods of that path when none is for this one. */
function endpointOf(path: string, method: string): { found: CompiledEndpoint; params: Record<string, string> } | { allowed: string[] } {
  const allowed: string[] = [];
  const asked = method === 'HEAD' ? 'GET' : method;
  for (const compiled of COMPILED) {
    const match = compiled.pattern.exec(path);
    if (!match) continue;
    if (compiled.method !== asked) {
      allowed.push(compiled.method === 'GET' ? 'GET, HEAD' : compiled.method);
      continue;
    }
    const params: Record<string, string> = {};
    compiled.names.forEach((name, i) => {
      params[name] = decodeURIComponent(match[i + 1] as string);
    });
    return { found: compiled, params };
  }
  return { allowed };
}

const MAX_BODY_BYTES = 64 * 1024;

/** The query overridden by the body's fields (EndpointCall.fields); undefined when the body is too large or not readable. */
async function fieldsOf(req: IncomingMessage, query: URLSearchParams): Promise<URLSearchParams | undefined> {
  const fields = new URLSearchParams(query);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  if (size === 0) return fields;
  const text = Buffer.concat(chunks).toString('utf8');
  const type = String(req.headers['content-type'] ?? '').toLowerCase();
  if (type.includes('application/json')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return undefined;
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
    for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
      if (value === null || value === undefined) continue;
      fields.set(key, typeof value === 'string' ? value : JSON.stringify(value));
    }
    return fields;
  }
  for (const [key, value] of new URLSearchParams(text)) fields.set(key, value);
  return fields;
}

const OCS_PATH = /^\/ocs\/v([12])\.php(\/[^?]*)?$/;

/** Whether `req` is for this door; undefined: DAV as always (the drive's root holds no `ocs` or `status.php`: namespace.ts). */
export function nextcloudRouteOf(req: IncomingMessage): NextcloudRoute | undefined {
  const raw = req.url ?? '/';
  const queryAt = raw.indexOf('?');
  const pathname = queryAt === -1 ? raw : raw.slice(0, queryAt);
  if (pathname === STATUS_PATH) return { kind: 'status' };
  const match = OCS_PATH.exec(pathname);
  if (!match) return undefined;
  const endpoint = (match[2] ?? '/').replace(/\/+$/, '') || '/';
  return { kind: 'ocs', version: match[1] === '1' ? 1 : 2, endpoint, query: new URLSearchParams(queryAt === -1 ? '' : raw.slice(queryAt + 1)) };
}

const COMMON_HEADERS = { 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store' };

function send(req: IncomingMessage, res: ServerResponse, status: number, contentType: string, body: string, headers: Record<string, string> = {}): void {
  const bytes = Buffer.from(body, 'utf8');
  res.writeHead(status, { ...COMMON_HEADERS, ...headers, 'Content-Type': contentType, 'Content-Length': String(bytes.length) });
  res.end(req.method === 'HEAD' ? undefined : bytes);
}

function notAllowed(req: IncomingMessage, res: ServerResponse, allowed: string[]): void {
  res.writeHead(405, { ...COMMON_HEADERS, Allow: allowed.join(', '), 'Content-Length': '0' }).end();
  req.resume();
}

/** Answers a request nextcloudRouteOf matched. Never rejects: every failure is an answer. */
export async function answerNextcloud(req: IncomingMessage, res: ServerResponse, route: NextcloudRoute, options: NextcloudDoorOptions): Promise<void> {
  const isRead = req.method === 'GET' || req.method === 'HEAD';
  if (route.kind === 'status') {
    req.resume();
    if (isRead) send(req, res, 200, 'application/json; charset=utf-8', JSON.stringify(serverStatus()));
    else notAllowed(req, res, ['GET, HEAD']);
    return;
  }
  const format = ocsFormatOf(route.query, typeof req.headers.accept === 'string' ? req.headers.accept : undefined);
  const routed = endpointOf(route.endpoint, req.method ?? 'GET');
  if ('allowed' in routed && routed.allowed.length > 0) {
    notAllowed(req, res, routed.allowed);
    return;
  }
  let result: OcsResult;
  let headers: Record<string, string> = {};
  if (!('found' in routed)) {
    req.resume();
    result = { refusal: { status: OCS_NOT_FOUND, message: 'Invalid query, please check the syntax. API specifications are here: http://www.freedesktop.org/wiki/Specifications/open-collaboration-services.' } };
  } else {
    const { endpoint } = routed.found;
    try {
      const user = endpoint.isPublic ? undefined : await options.authenticate(req);
      if (!endpoint.isPublic && !user) throw new AuthenticationFailed('bad-credentials');
      const fields = isRead ? new URLSearchParams(route.query) : await fieldsOf(req, route.query);
      if (isRead) req.resume();
      if (!fields) throw new OcsRefusal(400, 'The request body is not a form or a JSON object of at most 64 KiB');
      const call: EndpointCall = { req, user, options, params: routed.params, fields, reply: { headers: {} } };
      result = { data: await endpoint.answer(call) };
      headers = call.reply.headers;
      if (call.reply.notModified) {
        res.writeHead(304, { ...COMMON_HEADERS, ...headers });
        res.end();
        return;
      }
    } catch (err) {
      req.resume();
      if (err instanceof OcsRefusal) result = { refusal: { status: err.status, message: err.message } };
      else {
        const failure = davFailureOf(err);
        headers = failure.headers;
        if (failure.status === 401) result = { refusal: { status: OCS_NOT_LOGGED_IN, message: 'Current user is not logged in' } };
        else {
          if (failure.status >= 500 && !(err instanceof AuthenticationFailed)) options.log.warn({ status: failure.status, endpoint: route.endpoint, cause: err instanceof Error ? err.message : String(err) }, failure.reason);
          result = { refusal: { status: failure.status, message: failure.message } };
        }
      }
    }
  }
  const rendered = renderOcs(route.version, format, result);
  if (!res.writableEnded) send(req, res, rendered.httpStatus, rendered.contentType, rendered.body, headers);
}
