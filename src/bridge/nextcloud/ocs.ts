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
 * Must not: advertise what driveway does not do (no notify_push, bulk upload, sharing API,
 * end-to-end encryption); answer another user's data.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../common/logger.js';
import type { StoreClient, UserProfile } from '../../store-client/contract.js';
import { davFailureOf } from '../dav-errors.js';
import { AuthenticationFailed, type BridgeUser } from '../sessions.js';
import { withSession } from '../tree/context.js';
import { UNLIMITED_AVAILABLE_BYTES } from '../tree/grants.js';
import { OCS_NOT_FOUND, OCS_NOT_LOGGED_IN, ocsFormatOf, renderOcs, type OcsResult, type OcsValue, type OcsVersion } from './ocs-envelope.js';
import { ocsVersion, PRODUCT_NAME, serverStatus, STATUS_PATH } from './status.js';

export interface NextcloudDoorOptions {
  client: StoreClient;
  /**
   * The caller of a request: undefined when it sent no credentials; rejects with
   * AuthenticationFailed when they are refused (and logs the refusal, as for DAV).
   */
  authenticate(req: IncomingMessage): Promise<BridgeUser | undefined>;
  /** The bridge's absolute base URL as the caller reached it (BridgeServices.absoluteBase). */
  absoluteBase(req: IncomingMessage): string;
  log: Logger;
}

/** A request for this door: status.php, or an OCS endpoint of one version. */
export type NextcloudRoute = { kind: 'status' } | { kind: 'ocs'; version: OcsVersion; endpoint: string; query: URLSearchParams };

/** What an endpoint is given. */
interface EndpointCall {
  req: IncomingMessage;
  /** Undefined only for public endpoints. */
  user: BridgeUser | undefined;
  options: NextcloudDoorOptions;
}

interface Endpoint {
  isPublic?: boolean;
  answer(call: EndpointCall): Promise<OcsValue> | OcsValue;
}

/** Nextcloud's poll interval default is 60 (read as milliseconds, under the clients' 5 s floor, so ignored); this is the desktop's own default, 30 s. */
const POLL_INTERVAL_MS = 30_000;

/**
 * `cloud/capabilities`, what driveway does (Nextcloud desktop src/libsync/capabilities.cpp and
 * ownCloud's read these keys): chunking NG (`dav.chunking` >= "1.0": uploads/nextcloud.ts) over
 * the legacy chunking, SHA1 and MD5 checksums the store verifies (common/oc-checksum.ts; SHA1
 * preferred), trash (`undelete`) and versions. `uploadConflictFiles` false, as Nextcloud's own
 * default: a conflict copy stays on the device that made it (uploaded, a copy made in a read-only
 * drive would be refused at every sync, and the client would never finish one cleanly).
 * `core.status` is ownCloud's (owncloudcmd takes its server version from it).
 */
export function capabilities(): OcsValue {
  return {
    version: ocsVersion(),
    capabilities: {
      core: { pollinterval: POLL_INTERVAL_MS, 'webdav-root': 'remote.php/webdav', status: serverStatus() },
      dav: { chunking: '1.0' },
      files: { bigfilechunking: true, undelete: true, versioning: true },
      checksums: { supportedTypes: ['SHA1', 'MD5'], preferredUploadType: 'SHA1' },
      uploadConflictFiles: false,
    },
  };
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

const EMPTY_LIST: Endpoint = { answer: () => [] };

/** GET endpoints by path below `/ocs/v{1,2}.php`. */
const ENDPOINTS: ReadonlyMap<string, Endpoint> = new Map<string, Endpoint>([
  ['/cloud/capabilities', { isPublic: true, answer: capabilities }],
  ['/cloud/user', { answer: currentUser }],
  ['/config', { isPublic: true, answer: config }],
  // Not advertised in the capabilities, so the desktop does not poll them; answered empty for
  // clients that ask anyway (the mobile apps, older desktops) until they are real.
  ['/apps/notifications/api/v2/notifications', EMPTY_LIST],
  ['/apps/user_status/api/v1/user_status', { answer: userStatus }],
  ['/apps/user_status/api/v1/predefined_statuses', EMPTY_LIST],
  ['/apps/activity/api/v2/activity', EMPTY_LIST],
  ['/apps/activity/api/v2/activity/all', EMPTY_LIST],
  ['/apps/activity/api/v2/activity/filter', EMPTY_LIST],
  // The desktop's apps menu (OcsNavigationAppsJob), asked at every connection: no web apps here.
  ['/core/navigation/apps', EMPTY_LIST],
]);

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

function notAllowed(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(405, { ...COMMON_HEADERS, Allow: 'GET, HEAD', 'Content-Length': '0' }).end();
}

/** Answers a request nextcloudRouteOf matched. Never rejects: every failure is an answer. */
export async function answerNextcloud(req: IncomingMessage, res: ServerResponse, route: NextcloudRoute, options: NextcloudDoorOptions): Promise<void> {
  req.resume();
  const isRead = req.method === 'GET' || req.method === 'HEAD';
  if (route.kind === 'status') {
    if (isRead) send(req, res, 200, 'application/json; charset=utf-8', JSON.stringify(serverStatus()));
    else notAllowed(req, res);
    return;
  }
  const format = ocsFormatOf(route.query, typeof req.headers.accept === 'string' ? req.headers.accept : undefined);
  const endpoint = ENDPOINTS.get(route.endpoint);
  if (endpoint && !isRead) {
    notAllowed(req, res);
    return;
  }
  let result: OcsResult;
  let headers: Record<string, string> = {};
  if (!endpoint) {
    result = { refusal: { status: OCS_NOT_FOUND, message: 'Invalid query, please check the syntax. API specifications are here: http://www.freedesktop.org/wiki/Specifications/open-collaboration-services.' } };
  } else {
    try {
      const user = endpoint.isPublic ? undefined : await options.authenticate(req);
      if (!endpoint.isPublic && !user) throw new AuthenticationFailed('bad-credentials');
      result = { data: await endpoint.answer({ req, user, options }) };
    } catch (err) {
      const failure = davFailureOf(err);
      headers = failure.headers;
      if (failure.status === 401) result = { refusal: { status: OCS_NOT_LOGGED_IN, message: 'Current user is not logged in' } };
      else {
        if (failure.status >= 500 && !(err instanceof AuthenticationFailed)) options.log.warn({ status: failure.status, endpoint: route.endpoint, cause: err instanceof Error ? err.message : String(err) }, failure.reason);
        result = { refusal: { status: failure.status, message: failure.status >= 500 ? 'The server could not answer now' : failure.reason } };
      }
    }
  }
  const rendered = renderOcs(route.version, format, result);
  if (!res.writableEnded) send(req, res, rendered.httpStatus, rendered.contentType, rendered.body, headers);
}
