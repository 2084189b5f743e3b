/**
 * Which session may call what (issue 14, item 8): one entry per route of the store, and through
 * them per in-process operation (local-client.ts names the route each method stands for). Both
 * transports apply an entry with admitCaller(), the one function that decides it: the app's hook
 * for bearer routes, routes/resources.ts for the file access key, routes/upload.ts for an upload
 * token, local-client.ts for every in-process call. test/integration/store/access-policy.test.ts walks every
 * registered route (both editions) and every StoreClient method, so a new one without an entry
 * fails. docs/extensions.md "Which session may call what" says why each is as it is.
 *
 * What an entry does not decide is access.ts's (which node, which group, which share: per node
 * and per group, at the operation) and the few refusals that depend on a body field
 * (`appPassword: 'some-fields'`: the operation refuses those fields).
 */
import type { StoreClient } from '../store-client/contract.js';
import type { StoreContext } from './context.js';
import { forbidden } from './envelope.js';
import { refuseAppPasswordSession } from './ops/app-passwords.js';
import { refuseExpiredPassword } from './ops/password-age.js';
import type { AuthenticatedUser } from './sessions.js';

/** What authenticates the caller: nothing, a bearer token, the session's file access key, an upload token (of a session), a link's token. */
export type Credential = 'none' | 'bearer' | 'fileaccesskey' | 'upload-token' | 'link';

/**
 * Who may call it. `admin` is checked here (`is_admin`); the others are the operation's to check
 * against the node or group named (access.ts): `user` any signed-in user on what is theirs or
 * shared with them, `member` a group's members, `group-admin` a group's administrators (and the
 * built-in admin), `approver` an approver of the request's workspace, `builtin-admin` the
 * built-in admin (other administrators may read their own organization), `anyone` no one in
 * particular, `link-holder` whoever holds a link's token (and its password).
 */
export type Role = 'anyone' | 'link-holder' | 'user' | 'member' | 'group-admin' | 'approver' | 'admin' | 'builtin-admin';

export interface RoutePolicy {
  credential: Credential;
  role: Role;
  /**
   * A session opened with an app password: may call it, may not (403), may except some body
   * fields (the operation refuses those), or may only when its app password was made with
   * `may_share` (the share routes a user's sync app needs; never deciding others' requests).
   */
  appPassword: 'allowed' | 'refused' | 'some-fields' | 'with-share-right';
  /** A session whose account password expired may call it (else 403 `password_expired`). */
  expiredPassword: boolean;
  /** Completes "a session opened with an app password may not ..." when refused. */
  action?: string;
  /** Only in edition 3.0 (a 1.0 store has no such route: 404 `not_implemented`). */
  edition3?: boolean;
}

type Key = `${'GET' | 'POST' | 'PUT' | 'DELETE'} ${string}`;

const open = (credential: Credential, role: Role, edition3 = false): RoutePolicy => ({ credential, role, appPassword: 'allowed', expiredPassword: true, edition3 });
const user = (role: Role = 'user', edition3 = true): RoutePolicy => ({ credential: 'bearer', role, appPassword: 'allowed', expiredPassword: false, edition3 });
const guarded = (role: Role, action: string, edition3 = true): RoutePolicy => ({ credential: 'bearer', role, appPassword: 'refused', expiredPassword: false, action, edition3 });
const ADMIN = guarded('admin', 'use administrator endpoints');
const MEMBERS = 'manage group members';
const SHARES = 'make, remove or decide shares';
/** A share route an app password made with `may_share` may call. */
const shares = (role: Role): RoutePolicy => ({ ...guarded(role, SHARES), appPassword: 'with-share-right' });

/** Every route, by fastify method and URL pattern; HEAD follows GET. */
export const ROUTE_POLICIES: Readonly<Record<Key, RoutePolicy>> = {
  'GET /healthz': open('none', 'anyone'),
  'GET /readyz': open('none', 'anyone'),
  'POST /auth': open('none', 'anyone'),
  'GET /avatars/:owner/:version': open('none', 'anyone'),
  'GET /app/assets/:name': open('none', 'anyone'), // the web app's built files (web-app.ts)
  'GET /public/:token': open('link', 'link-holder', true),
  'GET /public/:token/*': open('link', 'link-holder', true),
  'POST /public/:token/upload': open('link', 'link-holder', true),
  'POST /public/:token/unlock': open('link', 'link-holder', true),
  'POST /upload/:token': { ...user('user', false), credential: 'upload-token' },
  'GET /resources/auth/view/:key/:uuid/:version/*': { ...user(), credential: 'fileaccesskey' },
  'GET /resources/auth/download/:key/:uuid/:version/*': { ...user(), credential: 'fileaccesskey' },
  'GET /resources/auth/zip/:key/*': { ...user(), credential: 'fileaccesskey' },
  'GET /resources/auth/pending/:key/:pending/*': { ...user('approver'), credential: 'fileaccesskey' },
  'GET /resources/auth/thumbnail/:key/:uuid/:version/:px': { ...user(), credential: 'fileaccesskey' },

  // The current user. An expired password may read the profile, set a new one and log out.
  'GET /api/user': { ...user(), expiredPassword: true },
  'PUT /api/user': { ...user(), expiredPassword: true, appPassword: 'some-fields' }, // not `password`
  'GET /api/user/logout': { ...user(), expiredPassword: true },
  // The web app's session (routes/web-session.ts): sign-in as POST /auth, who it is, a bridge token.
  'POST /api/session': open('none', 'anyone', true),
  'GET /api/session': { ...user(), expiredPassword: true },
  'POST /api/session/bridge_token': user(),
  'GET /api/user/login_history': user(),
  'GET /api/user/notifications': user(),
  'PUT /api/user/notifications': user(),
  // The notifications themselves (ops/notification-inbox.ts): the caller's own only.
  'GET /api/notifications': user(),
  'DELETE /api/notifications': user(),
  'GET /api/notifications/:id': user(),
  'DELETE /api/notifications/:id': user(),
  'GET /api/user/webdrive': user(),
  'POST /api/user/webdrive': user(),
  'DELETE /api/user/webdrive': user(),
  'GET /api/user/2fa': user(),
  'POST /api/user/2fa': guarded('user', 'turn two-factor authentication on or off'),
  'POST /api/user/2fa/setup': guarded('user', 'turn two-factor authentication on or off'),
  'POST /api/user/2fa/confirm': guarded('user', 'turn two-factor authentication on or off'),
  'POST /api/user/2fa/recovery_codes': guarded('user', 'make recovery codes'),
  'GET /api/user/app_passwords': user(),
  'POST /api/user/app_passwords': guarded('user', 'create app passwords'),
  'DELETE /api/user/app_passwords/:uuid': guarded('user', 'delete app passwords'),
  'GET /api/user/pending_incoming': user(),
  'PUT /api/user/pending_incoming': user(),
  'GET /api/users': user(),

  // Nodes (access.ts per node). share_copy_with stays open to an app password: a copy gives no lasting access, a share does.
  'GET /api/nodes/:id': user('user', false),
  'POST /api/nodes/:id': user('user', false),
  'DELETE /api/nodes/:id': user('user', false),
  'GET /api/nodes/:id/dirlist': user('user', false),
  'GET /api/nodes/by-file-id/:file_id': user('user', false),
  'GET /api/nodes/:id/path': user('user', false),
  'GET /api/nodes/:id/upload': user('user', false),
  'GET /api/nodes/:id/myaccess': user(),
  // An extension (docs/extensions.md "Search"): the caller's own drives and their groups' (ops/search.ts).
  'POST /api/search': user(),
  'POST /api/nodes/:id/revisions': user(),
  'GET /api/nodes/:id/revisions': user(),
  'POST /api/nodes/:id/restore': user(),
  'PUT /api/nodes/:id/skip_trash': user(),
  'GET /api/nodes/:id/shares': user('member'),
  'POST /api/nodes/:id/shares': shares('member'),
  'GET /api/shares': user(),
  'PUT /api/shares/:share_uuid': shares('member'),
  'DELETE /api/shares/:share_uuid': shares('member'),
  'GET /api/pending_shares': user('approver'),
  'GET /api/nodes/:id/approvals': user(),
  'PUT /api/pending_shares/:pending_uuid/approval': guarded('approver', SHARES),
  'GET /api/my_pending_shares': user(),
  'DELETE /api/my_pending_shares/:pending_uuid': shares('user'),

  // Groups for members (access.ts resolveGroup): members read, group administrators change.
  'GET /api/groups': user(),
  'GET /api/groups/:group_uuid': user('member'),
  'PUT /api/groups/:group_uuid': guarded('group-admin', 'change groups'),
  'GET /api/groups/:group_uuid/users': user('member'),
  'POST /api/groups/:group_uuid/users': guarded('group-admin', MEMBERS),
  'GET /api/groups/:group_uuid/users/:user_uuid': user('member'),
  'PUT /api/groups/:group_uuid/users/:user_uuid': guarded('group-admin', MEMBERS),
  'DELETE /api/groups/:group_uuid/users/:user_uuid': guarded('group-admin', MEMBERS),
  'GET /api/groups/:group_uuid/tags': user('member'),
  'POST /api/groups/:group_uuid/tags': user('member'),
  'GET /api/groups/:group_uuid/webdrive': user('member'),
  'POST /api/groups/:group_uuid/webdrive': guarded('group-admin', "change a group's WebDrive endpoint"),
  'DELETE /api/groups/:group_uuid/webdrive': guarded('group-admin', "change a group's WebDrive endpoint"),
  'GET /api/groups/:group_uuid/pending_incoming': user('member'),
  'PUT /api/groups/:group_uuid/pending_incoming': user('member'),

  // Administrators (admin-scope.ts: their own organization; the built-in admin any).
  'GET /api/admin/users': ADMIN,
  'POST /api/admin/users': ADMIN,
  'GET /api/admin/users/:user_uuid': ADMIN,
  'PUT /api/admin/users/:user_uuid': ADMIN,
  'DELETE /api/admin/users/:user_uuid': ADMIN,
  'GET /api/admin/users/:user_uuid/groups': ADMIN,
  'POST /api/admin/users/:user_uuid/groups': ADMIN,
  'GET /api/admin/users/:workspace_uuid/approvers': ADMIN,
  'POST /api/admin/users/:workspace_uuid/approvers': ADMIN,
  'DELETE /api/admin/users/:workspace_uuid/approvers/:approver_uuid/:type': ADMIN,
  'GET /api/admin/groups': ADMIN,
  'POST /api/admin/groups': ADMIN,
  'GET /api/admin/groups/:group_uuid': ADMIN,
  'PUT /api/admin/groups/:group_uuid': ADMIN,
  'DELETE /api/admin/groups/:group_uuid': ADMIN,
  'GET /api/admin/groups/:group_uuid/users': ADMIN,
  'POST /api/admin/groups/:group_uuid/users': ADMIN,
  'GET /api/admin/groups/:group_uuid/users/:user_uuid': ADMIN,
  'PUT /api/admin/groups/:group_uuid/users/:user_uuid': ADMIN,
  'DELETE /api/admin/groups/:group_uuid/users/:user_uuid': ADMIN,
  'GET /api/admin/groups/:workspace_uuid/approvers': ADMIN,
  'POST /api/admin/groups/:workspace_uuid/approvers': ADMIN,
  'DELETE /api/admin/groups/:workspace_uuid/approvers/:approver_uuid/:type': ADMIN,
  'GET /api/admin/organizations': { ...ADMIN, role: 'builtin-admin' },
  'POST /api/admin/organizations': { ...ADMIN, role: 'builtin-admin' },
  'GET /api/admin/organizations/:org_id': { ...ADMIN, role: 'builtin-admin' },
  'PUT /api/admin/organizations/:org_id': { ...ADMIN, role: 'builtin-admin' },
  'DELETE /api/admin/organizations/:org_id': { ...ADMIN, role: 'builtin-admin' },
  // Read-only, and refused all the same: an app password never reaches administration (docs/security.md).
  'GET /api/admin/about': ADMIN,
};

/**
 * The route each in-process operation stands for (local-client.ts): its entry is the
 * operation's. `close` and `groupCommit` (a scope around calls) are no calls to the store. `upload` is the upload token's route and the
 * upload's in one; `download` the file access key's.
 */
export const OPERATION_ROUTES: Readonly<Record<Exclude<keyof StoreClient, 'close' | 'groupCommit'>, Key>> = {
  login: 'POST /auth',
  logout: 'GET /api/user/logout',
  listFolder: 'GET /api/nodes/:id/dirlist',
  details: 'GET /api/nodes/:id',
  detailsByFileId: 'GET /api/nodes/by-file-id/:file_id',
  path: 'GET /api/nodes/:id/path',
  myAccess: 'GET /api/nodes/:id/myaccess',
  reviseFrom: 'POST /api/nodes/:id/revisions',
  listRevisions: 'GET /api/nodes/:id/revisions',
  restoreRevision: 'POST /api/nodes/:id/revisions',
  restoreFromTrash: 'POST /api/nodes/:id/restore',
  setSkipTrash: 'PUT /api/nodes/:id/skip_trash',
  search: 'POST /api/search',
  createFolder: 'POST /api/nodes/:id',
  rename: 'POST /api/nodes/:id',
  setStarred: 'POST /api/nodes/:id',
  moveInto: 'POST /api/nodes/:id',
  copyInto: 'POST /api/nodes/:id',
  remove: 'DELETE /api/nodes/:id',
  upload: 'GET /api/nodes/:id/upload',
  download: 'GET /resources/auth/download/:key/:uuid/:version/*',
  currentUser: 'GET /api/user',
  userWebdrive: 'GET /api/user/webdrive',
  listGroups: 'GET /api/groups',
  groupWebdrive: 'GET /api/groups/:group_uuid/webdrive',
  groupUsage: 'GET /api/groups/:group_uuid',
  thumbnail: 'GET /resources/auth/thumbnail/:key/:uuid/:version/:px',
  listNotifications: 'GET /api/notifications',
  getNotification: 'GET /api/notifications/:id',
  deleteNotification: 'DELETE /api/notifications/:id',
  deleteNotifications: 'DELETE /api/notifications',
  listMyShares: 'GET /api/shares',
  createLink: 'POST /api/nodes/:id/shares',
  updateLink: 'PUT /api/shares/:share_uuid',
  removeShare: 'DELETE /api/shares/:share_uuid',
  shareCopyWith: 'POST /api/nodes/:id',
  listMyRequests: 'GET /api/my_pending_shares',
  withdrawRequest: 'DELETE /api/my_pending_shares/:pending_uuid',
  listOrgUsers: 'GET /api/users',
};

export type StoreOperation = keyof typeof OPERATION_ROUTES;

/** The entry of an in-process operation. */
export function operationPolicy(operation: StoreOperation): RoutePolicy {
  const [method, url] = OPERATION_ROUTES[operation].split(' ');
  return requirePolicy(method ?? '', url);
}

/** The entry of a route (`url` as registered, e.g. `/api/nodes/:id`); HEAD is GET's. */
export function routePolicy(method: string, url: string): RoutePolicy | undefined {
  const key = `${method === 'HEAD' ? 'GET' : method} ${url}`;
  return Object.hasOwn(ROUTE_POLICIES, key) ? ROUTE_POLICIES[key as Key] : undefined;
}

/**
 * Applies an entry to an authenticated caller, in this order: an expired password (403
 * `password_expired`), the administrator role (403), an app-password session (403 naming the
 * app password). Everything else about the caller is the operation's (access.ts).
 */
export function admitCaller(ctx: StoreContext, caller: AuthenticatedUser, policy: RoutePolicy): void {
  if (!policy.expiredPassword) refuseExpiredPassword(ctx, caller);
  if ((policy.role === 'admin' || policy.role === 'builtin-admin') && !caller.isAdmin) throw forbidden('administrator privileges required');
  if (policy.appPassword === 'refused' || policy.appPassword === 'with-share-right') {
    refuseAppPasswordSession(caller, policy.action ?? 'call this endpoint', policy.appPassword === 'with-share-right');
  }
}

/** routePolicy(), failing closed (an error, so a 500 logged at error) for a route the table lacks. */
export function requirePolicy(method: string, url: string | undefined): RoutePolicy {
  const policy = url === undefined ? undefined : routePolicy(method, url);
  if (!policy) throw new Error(`no access policy for ${method} ${url ?? '(no route)'}: add it to src/store/policy.ts`);
  return policy;
}
