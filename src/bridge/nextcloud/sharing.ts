/**
 * Nextcloud's OCS sharing API (`/ocs/v{1,2}.php/apps/files_sharing/api/v1/shares`, the share sheet
 * of the desktop and mobile apps; fields and answers as Nextcloud's ShareAPIController writes them)
 * mapped onto driveway's store, through StoreClient only and with the store's own rules (the
 * bridge adds none; docs/client-quirks.md "Sharing from the apps"):
 * - share_type 3 (public link) is a store link: `password`, `expireDate` (YYYY-MM-DD: valid
 *   through that day, UTC), read (`permissions` 1) or upload-only (`permissions` 4, or
 *   `publicUpload=true`: Nextcloud's file drop; driveway's upload link never lists or reads).
 * - share_type 0 (user) and 1 (group) are share_copy_with: a copy offered to the recipient, theirs
 *   once accepted; the answer says so in `note` and the offer is not a lasting share (its id is
 *   not listed again, as the copy is the recipient's).
 * - A share the store's approval workflow holds answers as pending, never as made: the request's
 *   id, `token` and `url` null, `state` "pending" and a `note` saying it waits for an approver;
 *   listed as such until decided; DELETE withdraws it.
 * Ids are numbers the apps parse (a 48-bit hash of the link's or request's UUID, found again in
 * the caller's own list): another user's id, or an unknown one, is 404. A link's token is shown
 * once, in the answer that made it (the store keeps only its hash): listed later, `token` and
 * `url` are null.
 */
import { createHash, randomUUID } from 'node:crypto';
import { StoreError, type NodeId, type ShareLink, type ShareRequest, type StoreSession } from '../../store-client/contract.js';
import type { BridgeUser } from '../sessions.js';
import { withClientView } from '../sessions.js';
import { withSession } from '../tree/context.js';
import { toDavPath } from '../tree/paths.js';
import type { Resource } from '../tree/resource.js';
import { contentTypeOf } from '../../common/content-security.js';
import { OcsRefusal, type EndpointCall, type OcsEndpoint } from './ocs-endpoint.js';
import type { OcsValue } from './ocs-envelope.js';

const SHARE_TYPE_USER = 0;
const SHARE_TYPE_GROUP = 1;
const SHARE_TYPE_LINK = 3;
const PERMISSION_READ = 1;
const PERMISSION_CREATE = 4;

const SHARES = '/apps/files_sharing/api/v1/shares';

/** The capability (Nextcloud's files_sharing Capabilities): what driveway's store does, no federation, no mail. */
export function sharingCapability(): OcsValue {
  const off = { enabled: false };
  return {
    api_enabled: true,
    public: {
      enabled: true,
      // The store asks neither: a link may have a password and an expiry.
      password: { enforced: false, askForOptionalPassword: false },
      expire_date: { enabled: false, enforced: false },
      expire_date_internal: off,
      expire_date_remote: off,
      multiple_links: true,
      send_mail: false,
      upload: true,
      upload_files_drop: true,
    },
    // A copy offered becomes the recipient's own: they may share it on.
    resharing: true,
    user: { send_mail: false, expire_date: off },
    group_sharing: true,
    group: { enabled: true, expire_date: off },
    federation: { outgoing: false, incoming: false, expire_date: off, expire_date_supported: off },
    sharee: { query_lookup_default: false, always_show_unique: true },
    default_permissions: PERMISSION_READ,
  };
}

/** The number the apps know a link or request by. */
function numericId(kind: 'link' | 'request' | 'copy', uuid: string): number {
  return Number.parseInt(createHash('sha256').update(`${kind}:${uuid}`).digest('hex').slice(0, 12), 16);
}

const notFound = (): OcsRefusal => new OcsRefusal(404, "Wrong share ID, share doesn't exist");

/** A store refusal as Nextcloud's controller answers it (400 bad input, 403 not allowed, 404 not found). */
function refusalOf(err: unknown): unknown {
  if (!(err instanceof StoreError)) return err;
  const message = err.storeMsg ?? err.message;
  if (err.code === 'not_implemented' || err.httpStatus === 405) return new OcsRefusal(404, 'Sharing is not available on this server');
  if (err.kind === 'invalid' || err.kind === 'conflict') return new OcsRefusal(400, message);
  if (err.kind === 'forbidden') return new OcsRefusal(403, message);
  if (err.kind === 'not-found') return new OcsRefusal(404, message);
  return err;
}

async function store<T>(user: BridgeUser, work: (s: StoreSession) => Promise<T>): Promise<T> {
  try {
    return await withSession(user, work);
  } catch (err) {
    throw refusalOf(err);
  }
}

/** `2026-12-31 00:00:00` for a link valid through 31 December (UTC). */
function expirationOf(expiresMs: number | null): string | null {
  if (expiresMs === null) return null;
  return `${new Date(expiresMs - 1).toISOString().slice(0, 10)} 00:00:00`;
}

/** `YYYY-MM-DD` (a time after it is ignored, as Nextcloud's parseDate does): the end of that day, UTC; '' none. */
function expiresOf(raw: string): number | null {
  if (raw.trim() === '') return null;
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(raw.trim());
  const ms = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]) + 1) : Number.NaN;
  if (!Number.isFinite(ms)) throw new OcsRefusal(404, 'Invalid date, date format must be YYYY-MM-DD');
  return ms;
}

/** The link type asked by `permissions` / `publicUpload`; undefined when neither is given. */
function linkTypeOf(fields: URLSearchParams): 'public' | 'upload' | undefined {
  if (fields.get('publicUpload') === 'true') return 'upload';
  const raw = fields.get('permissions');
  if (raw === null || raw === '') return fields.get('publicUpload') === 'false' ? 'public' : undefined;
  const permissions = Number(raw);
  if (!Number.isInteger(permissions) || permissions < 0 || permissions > 31) throw new OcsRefusal(400, 'invalid permissions');
  if (permissions === PERMISSION_CREATE) return 'upload';
  if ((permissions & PERMISSION_CREATE) === 0) return 'public';
  throw new OcsRefusal(400, "driveway's links either read (permissions 1) or take uploads only (permissions 4)");
}

/** Where a node is, as the apps name it (relative to the files space); undefined outside the caller's view. */
async function placeOf(call: EndpointCall, user: BridgeUser, node: NodeId): Promise<Resource | undefined> {
  const { tree } = call.options;
  const path = await tree.pathOfNode(user, node);
  return path === undefined ? undefined : tree.tryStat(withClientView(user), path);
}

interface Shown {
  user: BridgeUser;
  resource: Resource | undefined;
  fileId: number | undefined;
  nodeName: string;
  isFolder: boolean;
}

async function shownOf(call: EndpointCall, user: BridgeUser, node: NodeId | undefined, nodeName: string, isFolder: boolean): Promise<Shown> {
  const resource = node === undefined ? undefined : await placeOf(call, user, node);
  const fileId = resource ? (await call.options.fileIds.of([resource])).get(resource.chain[resource.chain.length - 1] as string) : undefined;
  return { user, resource, fileId, nodeName, isFolder };
}

/** The fields every share answer has (ShareAPIController::formatShare). */
function baseOf(shown: Shown, id: number, shareType: number, permissions: number, createdMs: number): Record<string, OcsValue> {
  const { user, resource, fileId, nodeName, isFolder } = shown;
  const path = resource ? resource.path : `/${nodeName}`;
  return {
    id: String(id),
    share_type: shareType,
    uid_owner: user.name,
    displayname_owner: user.name,
    permissions,
    can_edit: true,
    can_delete: true,
    stime: Math.floor(createdMs / 1000),
    parent: null,
    expiration: null,
    token: null,
    uid_file_owner: user.name,
    displayname_file_owner: user.name,
    note: '',
    label: '',
    path,
    item_type: isFolder ? 'folder' : 'file',
    mimetype: isFolder ? 'httpd/unix-directory' : contentTypeOf(nodeName),
    has_preview: false,
    storage_id: `home::${user.name}`,
    storage: 1,
    item_source: fileId ?? null,
    file_source: fileId ?? null,
    file_parent: null,
    file_target: `/${nodeName}`,
    item_size: resource?.entry.sizeBytes ?? 0,
    item_mtime: Math.floor((resource?.entry.updatedMs ?? createdMs) / 1000),
    share_with: null,
    share_with_displayname: null,
    mail_send: 0,
    hide_download: 0,
    attributes: null,
  };
}

/**
 * A link as Nextcloud answers a link share: a password's presence as `share_with` and `password`
 * (a placeholder, never a hash: the desktop reads a non-empty `share_with` as "password set").
 */
function linkAnswer(shown: Shown, link: ShareLink, absoluteUrl: (url: string) => string): OcsValue {
  const secret = link.passwordProtected ? '********' : null;
  return {
    ...baseOf(shown, numericId('link', link.id), SHARE_TYPE_LINK, link.type === 'upload' ? PERMISSION_CREATE : PERMISSION_READ, link.createdMs),
    expiration: expirationOf(link.expiresMs),
    token: link.token ?? null,
    url: link.url === undefined ? null : absoluteUrl(link.url),
    share_with: secret,
    share_with_displayname: secret,
    password: secret,
    state: 'made',
  };
}

const PENDING_NOTE = 'Waiting for approval: an approver of this workspace must approve this share before it is made.';

/**
 * A request the approval workflow holds, as a share that is not made: `token` and `url` null,
 * `state` pending, the `note` saying so (with the address the link will have once approved, in the
 * answer that made the request: the store keeps only the token's hash).
 */
function requestAnswer(shown: Shown, request: ShareRequest, futureUrl?: string): OcsValue[] {
  const base = (shareType: number, permissions: number) => ({
    ...baseOf(shown, numericId('request', request.id), shareType, permissions, request.requestedMs),
    note: futureUrl === undefined ? PENDING_NOTE : `${PENDING_NOTE} Once approved, the link is ${futureUrl}`,
    url: null,
    state: request.state,
  });
  if (request.shareType === 'public' || request.shareType === 'upload') {
    const secret = request.passwordProtected ? '********' : null;
    return [{ ...base(SHARE_TYPE_LINK, request.shareType === 'upload' ? PERMISSION_CREATE : PERMISSION_READ), expiration: expirationOf(request.expiresMs), share_with: secret, password: secret }];
  }
  return request.recipients.map((r) => ({
    ...base(r.type === 'Group' ? SHARE_TYPE_GROUP : SHARE_TYPE_USER, PERMISSION_READ),
    share_with: r.type === 'Group' ? r.name : r.id,
    share_with_displayname: r.name,
  }));
}

/** `url` made absolute where the store answered a path (in-process, without store.publicUrl): the web app's address. */
function absoluteUrlFor(call: EndpointCall): (url: string) => string {
  return (url) => (url.startsWith('/') ? (call.options.webAppPage?.(call.req, url) ?? url) : url);
}

/** The node at the apps' `path` (relative to the files space), as the caller's view shows it; 404 otherwise. */
async function nodeAt(call: EndpointCall, user: BridgeUser, raw: string | null): Promise<Resource> {
  if (raw === null || raw.trim() === '') throw new OcsRefusal(404, 'Please specify a file or folder path');
  const segments = raw.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw new OcsRefusal(404, "Wrong path, file/folder doesn't exist");
  const resource = await call.options.tree.tryStat(withClientView(user), toDavPath(segments));
  if (!resource) throw new OcsRefusal(404, "Wrong path, file/folder doesn't exist");
  if (resource.kind !== 'node' && resource.kind !== 'top') throw new OcsRefusal(403, 'Cannot share this folder');
  return resource;
}

interface Listed {
  links: ShareLink[];
  requests: ShareRequest[];
}

/** The caller's links (not private shares: the apps' user shares are copies here) and pending requests. */
async function listedOf(call: EndpointCall, user: BridgeUser): Promise<Listed> {
  const { client } = call.options;
  const [links, requests] = await Promise.all([store(user, (s) => client.listMyShares(s)), store(user, (s) => client.listMyRequests(s))]);
  return { links: links.filter((l) => l.type !== 'private'), requests: requests.filter((r) => r.state === 'pending') };
}

async function answersOf(call: EndpointCall, user: BridgeUser, listed: Listed, keep: (node: NodeId | undefined, shown: Shown) => boolean): Promise<OcsValue[]> {
  const absolute = absoluteUrlFor(call);
  const out: OcsValue[] = [];
  for (const link of listed.links) {
    const shown = await shownOf(call, user, link.node, link.nodeName, link.nodeKind === 'folder');
    if (shown.resource && keep(link.node, shown)) out.push(linkAnswer(shown, link, absolute));
  }
  for (const request of listed.requests) {
    const shown = await shownOf(call, user, request.node, request.nodeName, request.nodeKind === 'folder');
    if (shown.resource && keep(request.node, shown)) out.push(...requestAnswer(shown, request));
  }
  return out;
}

function callerOf(call: EndpointCall): BridgeUser {
  return call.user as BridgeUser;
}

/** GET shares: the caller's shares, of `path` (its children with `subfiles=true`); `shared_with_me`: none (what others share comes as copies, or in shared_with_you). */
async function listShares(call: EndpointCall): Promise<OcsValue> {
  const user = callerOf(call);
  if (call.fields.get('shared_with_me') === 'true') return [];
  const path = call.fields.get('path');
  const listed = await listedOf(call, user);
  if (path === null || path === '') return answersOf(call, user, listed, () => true);
  const at = await nodeAt(call, user, path);
  if (call.fields.get('subfiles') === 'true') {
    if (at.entry.kind !== 'folder') throw new OcsRefusal(400, 'Not a directory');
    return answersOf(call, user, listed, (_, shown) => shown.resource?.parent?.id === at.entry.id);
  }
  return answersOf(call, user, listed, (node) => node === at.entry.id);
}

/** The caller's link or pending request of numeric id `raw`; 404 for anything else (another user's included). */
async function findShare(call: EndpointCall, user: BridgeUser, raw: string | undefined): Promise<{ link: ShareLink } | { request: ShareRequest }> {
  const id = Number(raw);
  if (!Number.isSafeInteger(id)) throw notFound();
  const listed = await listedOf(call, user);
  const link = listed.links.find((l) => numericId('link', l.id) === id);
  if (link) return { link };
  const request = listed.requests.find((r) => numericId('request', r.id) === id);
  if (request) return { request };
  throw notFound();
}

async function getShare(call: EndpointCall): Promise<OcsValue> {
  const user = callerOf(call);
  const found = await findShare(call, user, call.params.id);
  const listed: Listed = 'link' in found ? { links: [found.link], requests: [] } : { links: [], requests: [found.request] };
  const answers = await answersOf(call, user, listed, () => true);
  if (answers.length === 0) throw notFound();
  return answers;
}

async function deleteShare(call: EndpointCall): Promise<OcsValue> {
  const user = callerOf(call);
  const found = await findShare(call, user, call.params.id);
  const { client } = call.options;
  if ('link' in found) await store(user, (s) => client.removeShare(s, found.link.id));
  else await store(user, (s) => client.withdrawRequest(s, found.request.id));
  return [];
}

async function updateShare(call: EndpointCall): Promise<OcsValue> {
  const user = callerOf(call);
  const found = await findShare(call, user, call.params.id);
  if (!('link' in found)) throw new OcsRefusal(400, 'The share waits for approval: it cannot be changed until an approver decides');
  const { fields } = call;
  const password = fields.get('password');
  const expireDate = fields.get('expireDate');
  const type = linkTypeOf(fields);
  const changes = {
    ...(type !== undefined && type !== found.link.type ? { type } : {}),
    ...(password !== null ? { password: password === '' ? null : password } : {}),
    ...(expireDate !== null ? { expiresMs: expiresOf(expireDate) } : {}),
  };
  if (Object.keys(changes).length === 0) {
    if (type === undefined && fields.get('note') === null && fields.get('label') === null) throw new OcsRefusal(400, 'Wrong or no update parameter given');
    return linkAnswer(await shownOf(call, user, found.link.node, found.link.nodeName, found.link.nodeKind === 'folder'), found.link, absoluteUrlFor(call));
  }
  const { client } = call.options;
  const changed = await store(user, (s) => client.updateLink(s, found.link.id, changes));
  return linkAnswer(await shownOf(call, user, changed.node, changed.nodeName, changed.nodeKind === 'folder'), changed, absoluteUrlFor(call));
}

/** A recipient named as the apps name one (a login name, which is the email here, or a UUID; a group by name or UUID) -> its UUID. */
async function recipientOf(call: EndpointCall, user: BridgeUser, shareType: number, shareWith: string | null): Promise<{ id: string; name: string }> {
  const wanted = (shareWith ?? '').trim();
  const { client } = call.options;
  if (shareType === SHARE_TYPE_USER) {
    const users = await store(user, (s) => client.listOrgUsers(s));
    const found = users.find((u) => u.email.toLowerCase() === wanted.toLowerCase() || u.id === wanted.toLowerCase());
    if (!found || wanted === '') throw new OcsRefusal(404, 'Please specify a valid user');
    return { id: found.id, name: found.fullname || found.email };
  }
  const groups = await store(user, (s) => client.listGroups(s));
  const found = groups.find((g) => g.name === wanted || g.id === wanted.toLowerCase());
  if (!found || wanted === '') throw new OcsRefusal(404, 'Please specify a valid group');
  return { id: found.id, name: found.name };
}

async function createShare(call: EndpointCall): Promise<OcsValue> {
  const user = callerOf(call);
  const { fields } = call;
  const { client } = call.options;
  const shareType = Number(fields.get('shareType') ?? '-1');
  const resource = await nodeAt(call, user, fields.get('path'));
  const node = resource.entry.id;
  const isFolder = resource.entry.kind === 'folder';
  const shown = await shownOf(call, user, node, resource.entry.name, isFolder);
  if (shareType === SHARE_TYPE_LINK) {
    const type = linkTypeOf(fields) ?? 'public';
    if (type === 'upload' && !isFolder) throw new OcsRefusal(404, 'Public upload is only possible for publicly shared folders');
    const password = fields.get('password') ?? '';
    const expires = expiresOf(fields.get('expireDate') ?? '');
    const made = await store(user, (s) => client.createLink(s, node, { type, ...(password !== '' ? { password } : {}), ...(expires !== null ? { expiresMs: expires } : {}) }));
    if ('share' in made) return linkAnswer(shown, made.share, absoluteUrlFor(call));
    const request: ShareRequest = { id: made.pendingId, shareType: type, state: 'pending', requestedMs: Date.now(), node, nodeName: resource.entry.name, nodeKind: resource.entry.kind, recipients: [], passwordProtected: password !== '', expiresMs: expires };
    return requestAnswer(shown, request, made.url === undefined ? undefined : absoluteUrlFor(call)(made.url))[0] as OcsValue;
  }
  if (shareType === SHARE_TYPE_USER || shareType === SHARE_TYPE_GROUP) {
    const recipient = await recipientOf(call, user, shareType, fields.get('shareWith'));
    const offered = await store(user, (s) => client.shareCopyWith(s, node, [recipient.id]));
    const type = shareType === SHARE_TYPE_GROUP ? 'Group' : 'User';
    if (offered.pendingId !== undefined) {
      const request: ShareRequest = { id: offered.pendingId, shareType: 'share_copy', state: 'pending', requestedMs: Date.now(), node, nodeName: resource.entry.name, nodeKind: resource.entry.kind, recipients: [{ id: recipient.id, type, name: recipient.name }], passwordProtected: false, expiresMs: null };
      return requestAnswer(shown, request)[0] as OcsValue;
    }
    return {
      ...baseOf(shown, numericId('copy', randomUUID()), shareType, PERMISSION_READ, Date.now()),
      share_with: shareType === SHARE_TYPE_GROUP ? recipient.name : fields.get('shareWith'),
      share_with_displayname: recipient.name,
      note: `A copy was offered to ${recipient.name}: theirs once accepted, not a lasting share.`,
      state: 'offered',
    };
  }
  throw new OcsRefusal(400, 'Unknown share type');
}

export const sharingEndpoints: readonly OcsEndpoint[] = [
  { path: SHARES, answer: listShares },
  { method: 'POST', path: SHARES, answer: createShare },
  { path: `${SHARES}/{id}`, answer: getShare },
  { method: 'PUT', path: `${SHARES}/{id}`, answer: updateShare },
  { method: 'DELETE', path: `${SHARES}/{id}`, answer: deleteShare },
];

