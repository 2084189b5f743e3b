/**
 * The embedded store as a StoreClient, in-process: the bridge's transport under `npm start`.
 * Every method calls the same operation an HTTP route calls (src/store/ops), with the same
 * checks (the bearer token and its live session, an expired password's restrictions, access,
 * rules) and the same durability (what a call wrote is fsynced before it returns:
 * durability.ts); what is left out is only HTTP itself: no sockets, no JSON or multipart, no
 * upload token round trip, no zod parse of our own answers. Failures are the StoreErrors the
 * HTTP client would throw for the same answer (classify() on the operation's status and code),
 * so the bridge cannot tell the transports apart. Editions too: a 3.0-only call on a 1.0 store
 * fails as its missing route would (not-found, `not_implemented`).
 */
import type { Readable } from 'node:stream';
import { classify, StoreError, type LoginOptions, type StoreClient } from '../store-client/contract.js';
import { toStoreSession } from '../store-client/auth.js';
import { toGroupEntry, usageOf } from '../store-client/groups.js';
import { toNodeDetails, toNodeEntry, toRestoredNode, toRevisionEntry } from '../store-client/nodes.js';
import { toUserProfile, webdriveOf } from '../store-client/user.js';
import type { ByteRange, Download, NodeId, StoreSession, UploadResult, UploadTarget } from '../store-client/types.js';
import { BlobTooLargeError, INLINE_MAX_BYTES } from './blobs/staging.js';
import type { StoreContext } from './context.js';
import { normaliseIp, userAgentOf, type ClientInfo } from './client-ip.js';
import { StoreHttpError, unauthenticated, unavailableOf } from './envelope.js';
import { fileVersion, openBlob, sendRevision, streamOf } from './ops/download.js';
import { getGroupDetails, listMyGroups } from './ops/groups.js';
import { makeThumbnail, thumbnailPx } from './ops/thumbnails.js';
import { login, logout } from './ops/login.js';
import { toSearchResult } from '../store-client/search.js';
import { searchDrives } from './ops/search.js';
import { deleteNode, listFolder, myAccess, nodeDetails, nodeDetailsByFileId, nodeOperation, nodePath } from './ops/nodes.js';
import { getProfile } from './ops/profile.js';
import { deleteMyNotification, deleteMyNotifications, getMyNotification, listMyNotifications } from './ops/notification-inbox.js';
import { toNotificationEntry } from '../store-client/notifications.js';
import { createShare, listMyShares, removeShare, updateShare } from './ops/shares.js';
import { listMyPendingShares, withdrawShare } from './ops/approvals.js';
import { listUsers } from './ops/users-directory.js';
import { linkBody, toCreatedLink, toShareLink, toShareRequest } from '../store-client/shares.js';
import { listRevisionsOf, restoreRevision, reviseFrom } from './ops/revise.js';
import { restoreFromTrash, setSkipTrashOf } from './ops/trash.js';
import { storeFile, storeWholeFile, uploadName, uploadTarget } from './ops/upload.js';
import { getGroupWebdrive, getUserWebdrive } from './ops/webdrive.js';
import { admitCaller, operationPolicy, type StoreOperation } from './policy.js';
import { authenticateToken, clientSessionMemo, type AuthenticatedUser } from './sessions.js';
import { lookup as lookupMimeType } from 'mime-types';

/** The store failure as the HTTP client would have classified its answer. */
function toStoreError(operation: string, err: unknown): unknown {
  // The database or blob backend unreachable: the 503 a route would have answered.
  const down = unavailableOf(err);
  if (down) return classify(operation, down.statusCode, { status: 'error', msg: down.message, code: down.code }, down.headers) ?? down;
  if (err instanceof StoreHttpError) {
    return classify(operation, err.statusCode, { status: 'error', msg: err.message, code: err.code }, err.headers) ?? err;
  }
  if (err instanceof BlobTooLargeError) return new StoreError('quota', operation, 507, 'disk quota exceeded', { code: 'quota_exceeded' });
  return err;
}

export interface LocalClientOptions {
  /** The address logins are recorded under when the caller names no client. */
  defaultIp?: string;
  /**
   * Every call comes after the storage's change feed settled (the in-process bridge waits for it
   * at the start of each DAV request): live sessions may then be answered from memory
   * (sessions.ts sessionMemo). Not for callers that skip the barrier. On SQLite the memory needs
   * no barrier and is used either way (sessions.ts clientSessionMemo).
   */
  behindFeedBarrier?: boolean;
}

export function createLocalClient(ctx: StoreContext, options: LocalClientOptions = {}): StoreClient {
  const threeOnly = ctx.config.store.edition === '3.0';
  const defaultIp = options.defaultIp ?? '127.0.0.1';
  // Live sessions from memory: on SQLite always, over PostgreSQL behind the bridge's per-request barrier.
  const sessions = clientSessionMemo(ctx.storage.sql, ctx.storage.changes, options.behindFeedBarrier ?? false);

  /** Runs an operation as an HTTP request to it would: durable before it returns, failures classified. */
  async function call<T>(operation: string, work: () => T | Promise<T>): Promise<T> {
    try {
      return await ctx.durability.run(work);
    } catch (err) {
      throw toStoreError(operation, err);
    }
  }

  /**
   * An operation of a signed-in caller, admitted by its entry in the table (policy.ts) as the
   * HTTP route it stands for: the bearer token's live session, then admitCaller (an expired
   * password, an app-password session); an edition-3.0 route does not exist on a 1.0 store.
   */
  function as<T>(method: StoreOperation, operation: string, s: StoreSession, work: (caller: AuthenticatedUser) => T | Promise<T>): Promise<T> {
    const policy = operationPolicy(method);
    return call(operation, async () => {
      if (policy.edition3 && !threeOnly) throw new StoreHttpError(404, 'not_implemented', `no such endpoint in edition ${ctx.config.store.edition}`);
      const caller = await authenticateToken(ctx.storage.sql, ctx.keys, ctx.clock, s.token, sessions);
      if (!caller) throw unauthenticated('invalid, expired or revoked token');
      admitCaller(ctx, caller, policy);
      return work(caller);
    });
  }

  const nodeOp = (method: StoreOperation, operation: string, s: StoreSession, node: NodeId, body: unknown): Promise<void> =>
    as(method, operation, s, async (caller) => {
      await nodeOperation(ctx, caller, node, body);
    });

  return {
    login: (username, password, relay: LoginOptions = {}) =>
      call('auth.login', async () => toStoreSession(await login(ctx, { username, password }, clientOf(relay)))),
    logout: (s) => as('logout', 'auth.logout', s, (caller) => logout(ctx, caller, {}, { ip: defaultIp })),
    listFolder: (s, folder, _signal, options) => as('listFolder', 'nodes.listFolder', s, async (caller) => (await listFolder(ctx, caller, folder, options)).map(toNodeEntry)),
    details: (s, node) => as('details', 'nodes.details', s, async (caller) => toNodeDetails(await nodeDetails(ctx, caller, node))),
    detailsByFileId: (s, fileId) => as('detailsByFileId', 'nodes.detailsByFileId', s, async (caller) => toNodeDetails(await nodeDetailsByFileId(ctx, caller, fileId))),
    search: (s, query) => as('search', 'search', s, async (caller) => toSearchResult(await searchDrives(ctx, caller, query))),
    path: (s, node) => as('path', 'nodes.path', s, async (caller) => (await nodePath(ctx, caller, node)).map((e) => ({ id: e.uuid as NodeId, name: e.name }))),
    myAccess: (s, node) => as('myAccess', 'nodes.myAccess', s, (caller) => myAccess(ctx, caller, node)),
    createFolder: (s, parent, name) => nodeOp('createFolder', 'nodes.createFolder', s, parent, { new_dir: name }),
    rename: (s, node, newName) => nodeOp('rename', 'nodes.rename', s, node, { new_name: newName }),
    setStarred: (s, node, starred) => nodeOp('setStarred', 'nodes.setStarred', s, node, { starred }),
    moveInto: (s, node, folder) => nodeOp('moveInto', 'nodes.moveInto', s, node, { move_to: folder }),
    copyInto: (s, node, folder) => nodeOp('copyInto', 'nodes.copyInto', s, node, { copy_to: folder }),
    remove: (s, node) => as('remove', 'nodes.remove', s, async (caller) => ({ forGood: (await deleteNode(ctx, caller, node)) === 'purged' })),
    reviseFrom: (s, file, from, options) =>
      as('reviseFrom', 'nodes.reviseFrom', s, async (caller) => {
        const made = await reviseFrom(ctx, caller, file, { from, consume: options.consume });
        return { id: made.uuid as NodeId, revision: made.revision, sizeBytes: made.size };
      }),
    listRevisions: (s, file) => as('listRevisions', 'nodes.listRevisions', s, async (caller) => (await listRevisionsOf(ctx, caller, file)).map(toRevisionEntry)),
    restoreRevision: (s, file, revision) =>
      as('restoreRevision', 'nodes.restoreRevision', s, async (caller) => {
        const made = await restoreRevision(ctx, caller, file, revision);
        return { id: made.uuid as NodeId, revision: made.revision, sizeBytes: made.size };
      }),
    restoreFromTrash: (s, node) => as('restoreFromTrash', 'nodes.restoreFromTrash', s, async (caller) => toRestoredNode(await restoreFromTrash(ctx, caller, node))),
    setSkipTrash: (s, folder, on) =>
      as('setSkipTrash', 'nodes.setSkipTrash', s, async (caller) => {
        await setSkipTrashOf(ctx, caller, folder, { skip_trash: on });
      }),
    upload: (s, target, body, _sizeBytes, signal, options) => as('upload', 'upload.send', s, (caller) => upload(caller, target, body, signal, options?.checksum)),
    download: (s, file, _name, opts = {}) => as('download', 'resources.download', s, (caller) => download(caller, file, opts.range, opts.version)),
    currentUser: (s) => as('currentUser', 'user.current', s, async (caller) => toUserProfile(await getProfile(ctx, caller))),
    userWebdrive: (s) => as('userWebdrive', 'user.webdrive', s, async (caller) => webdriveOf({ data: await getUserWebdrive(ctx, caller) })),
    listGroups: (s) => as('listGroups', 'groups.list', s, async (caller) => (await listMyGroups(ctx, caller, {})).map(toGroupEntry)),
    groupWebdrive: (s, groupId) =>
      as('groupWebdrive', 'groups.webdrive', s, async (caller) => webdriveOf({ data: await getGroupWebdrive(ctx, caller, groupId) })).catch((err: unknown) => {
        // As over HTTP: hidden from the caller, or not theirs, is simply no endpoint.
        if (err instanceof StoreError && (err.kind === 'not-found' || err.kind === 'forbidden')) return undefined;
        throw err;
      }),
    groupUsage: (s, groupId) => as('groupUsage', 'groups.details', s, async (caller) => usageOf(await getGroupDetails(ctx, caller, groupId))),
    close: async () => undefined,
    groupCommit: (work) => ctx.durability.group(work),
    thumbnail: (s, file, px) =>
      as('thumbnail', 'resources.thumbnail', s, async (caller) => {
        // As the route: a size it does not make is refused (400) before the file is looked at.
        const size = thumbnailPx(String(px));
        const made = await makeThumbnail(ctx, await fileVersion(ctx, caller, file, undefined), size);
        return { body: made.body, etag: made.etag, contentType: 'image/webp' };
      }),
    listNotifications: (s) => as('listNotifications', 'notifications.list', s, async (caller) => (await listMyNotifications(ctx, caller)).map(toNotificationEntry)),
    getNotification: (s, id) => as('getNotification', 'notifications.get', s, async (caller) => toNotificationEntry(await getMyNotification(ctx, caller, String(id)))),
    deleteNotification: (s, id) => as('deleteNotification', 'notifications.delete', s, (caller) => deleteMyNotification(ctx, caller, String(id))),
    deleteNotifications: (s) =>
      as('deleteNotifications', 'notifications.deleteAll', s, async (caller) => {
        await deleteMyNotifications(ctx, caller);
      }),
    listMyShares: (s) => as('listMyShares', 'shares.list', s, async (caller) => (await listMyShares(ctx, caller)).map(toShareLink)),
    createLink: (s, node, input) => as('createLink', 'shares.create', s, async (caller) => toCreatedLink({ ...(await createShare(ctx, caller, node, linkBody(input))) })),
    updateLink: (s, share, changes) => as('updateLink', 'shares.update', s, async (caller) => toShareLink(await updateShare(ctx, caller, share, linkBody(changes)))),
    removeShare: (s, share) => as('removeShare', 'shares.remove', s, (caller) => removeShare(ctx, caller, share)),
    shareCopyWith: (s, node, recipients) =>
      as('shareCopyWith', 'nodes.shareCopyWith', s, async (caller) => {
        const { pendingUuid } = await nodeOperation(ctx, caller, node, { share_copy_with: recipients });
        return pendingUuid === undefined ? {} : { pendingId: pendingUuid };
      }),
    listMyRequests: (s) => as('listMyRequests', 'approvals.mine', s, async (caller) => (await listMyPendingShares(ctx, caller)).map(toShareRequest)),
    withdrawRequest: (s, request) =>
      as('withdrawRequest', 'approvals.withdraw', s, async (caller) => {
        await withdrawShare(ctx, caller, request);
      }),
    listOrgUsers: (s) =>
      as('listOrgUsers', 'users.list', s, async (caller) => (await listUsers(ctx, caller, { format: 'short_active' })).map((u) => ({ id: u.uuid, fullname: u.fullname, email: u.email }))),
  };

  /**
   * Who a relayed login is recorded under: the client's address as the relay saw it (no proxy
   * header to trust in-process), and the relay and the client's program, as the HTTP client
   * sends them in its User-Agent (client-ip.ts userAgentOf then keeps 100 printable characters).
   * A relay that names itself (`via`) logs its refused logins itself, so the store does not.
   */
  function clientOf(relay: LoginOptions): ClientInfo {
    const agent = [relay.via, relay.client?.userAgent && `(${relay.client.userAgent})`].filter(Boolean).join(' ');
    const userAgent = userAgentOf(agent);
    const ip = normaliseIp(relay.client?.ip ?? defaultIp);
    const relayed = relay.via !== undefined;
    return userAgent === undefined ? { ip, relayed } : { ip, userAgent, relayed };
  }

  /** Both upload steps in one: the target checks, then the bytes straight into storage. */
  async function upload(caller: AuthenticatedUser, target: UploadTarget, body: Readable | Buffer, signal?: AbortSignal, checksum?: string): Promise<UploadResult> {
    const id = 'folder' in target ? target.folder : target.revisionOf;
    let stored: Awaited<ReturnType<typeof storeFile>>;
    // Over PostgreSQL a small body held whole skips the checks before the bytes (a round trip).
    // Over SQLite they cost no round trip, and being outside a transaction they let topKindOf
    // remember the target's top-level kind, which the recording transaction then finds known.
    if (Buffer.isBuffer(body) && body.length <= INLINE_MAX_BYTES && ctx.storage.dialect === 'postgres') {
      stored = await storeWholeFile(ctx, caller, id, target.name, body, checksum);
    } else {
      const checked = await uploadTarget(ctx, caller, id);
      stored = await storeFile(ctx, caller, checked, uploadName(checked.target, target.name), body, { ...(signal ? { signal } : {}), checksum });
    }
    return { id: stored.uuid as NodeId, revision: stored.revision, sizeBytes: stored.size, checksums: stored.checksums, ...(stored.file_id !== undefined ? { fileId: stored.file_id } : {}) };
  }

  /** The bytes of a revision, a range of it when asked (a range past the end fails as a 416 would). */
  async function download(caller: AuthenticatedUser, file: NodeId, range: ByteRange | undefined, version: number | string | undefined): Promise<Download> {
    const found = await fileVersion(ctx, caller, file, version === undefined ? undefined : String(version));
    const total = found.revision.size;
    const base = { etag: found.etag, lastModified: new Date(found.revision.created).toUTCString(), contentType: lookupMimeType(found.node.name) || 'application/octet-stream' };
    const whole = !range || total === 0;
    if (!whole && range.start >= total) throw new StoreHttpError(416, 'range_not_satisfiable', 'requested range not satisfiable');
    const slice = whole ? undefined : { start: range.start, end: Math.min(range.end ?? total - 1, total - 1) };
    // Checked now, not at the first read: a blob that cannot be opened fails the call, not a half-sent answer.
    const blob = await openBlob(ctx, found, slice);
    let body: Readable | undefined;
    return {
      ...base,
      // Read (or opened) once, for whichever of the two the caller uses.
      get body() {
        body ??= streamOf(blob, slice);
        return body;
      },
      sendTo: (target, signal) => sendRevision(found, blob, target, slice, signal),
      status: whole ? 200 : 206,
      totalBytes: total,
      contentLength: slice ? slice.end - slice.start + 1 : total,
      rangeHonoured: !whole,
    };
  }
}
