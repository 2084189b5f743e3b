/**
 * The one place that decides who may do what to a node and to a group
 * (docs/store-semantics.md, "Groups and administration").
 *
 * Nodes: a user's nodes are their own and nobody else's (administrators included), except
 * through a private share (below). A group's nodes are visible to its members, who hold the
 * `node_permissions` of their membership; group administrators and the built-in admin hold all four. Whoever cannot see a node learns nothing
 * about it: unknown and not-yours both answer 404 with the same message. Whoever sees it but
 * lacks the permission asked for gets 403. A group node costs one primary-key lookup of the
 * caller's membership; a user node costs none.
 *
 * Private shares (docs/store-semantics.md "Sharing"): a node privately shared with the caller, or
 * with a group of theirs, and its whole subtree grant `read` and `download`, plus `write` when
 * the share is writable, and `delete` on what lies below a writable shared node (never on the
 * shared node itself), each only while the share's creator holds it on the node of their own
 * (a creator who lost a permission, left the group, was deactivated or deleted narrows their
 * shares at once; issue 14). Nothing while the node lies in its owner's trash. Asked only when
 * the caller does not own the node (or holds less than everything through a group): one index
 * probe when the caller has no private share at all, else one walk up the node's ancestry
 * (storage/shares.ts privateSharesReaching) and two primary-key lookups per distinct creator.
 * Grants from a membership and from shares add up. Public and upload links are held to their
 * creator's access in the same way (creatorAccess, asked by ops/public-links.ts).
 *
 * The owner's side (mayActAsOwner): what no share gives, whatever it grants: whether deletes
 * skip the trash, and revisions other than the current one (issue 29).
 *
 * Approvers (issue 31): an approver reads the file of a share request waiting for their decision,
 * and nothing else of it (resolveApproverPreview): no listing, no details, no old revision, no
 * write; the door shuts when the request is decided or withdrawn, or they stop approving.
 *
 * Groups: members may read a group's member endpoints, group administrators (and the built-in
 * admin) may change it; non-members get 404, members who are not administrators 403.
 */
import type { AuthenticatedUser } from './sessions.js';
import type { Sql } from './storage/sql.js';
import { getGroup, membershipOf, type GroupRow, type Membership } from './storage/groups.js';
import { findNode, getNode, getNodeByFileId, isUuid, locatorOf, type NodeRow } from './storage/nodes.js';
import { getShareRequest, isApprover, privateSharesReaching } from './storage/shares.js';
import { getUserByUuid } from './storage/users.js';
import { forbidden, notFound, StoreHttpError } from './envelope.js';

export type Permission = 'read' | 'write' | 'delete' | 'download';
export const ALL_PERMISSIONS: readonly Permission[] = ['read', 'write', 'delete', 'download'];

/** What a caller may do with a node; `visible: false` means the node does not exist for them. */
export interface NodeAccess {
  visible: boolean;
  granted: readonly Permission[];
  /** What of `granted` the caller holds of their own (owner, group membership, built-in admin), not through a share: the owner's side (mayActAsOwner). */
  own: readonly Permission[];
  /** Set when a private share is what lets the caller see the node: the topmost shared node above it and whom it was shared with. */
  viaShare?: { root: string; recipientUuid: string };
}

const FULL: NodeAccess = { visible: true, granted: ALL_PERMISSIONS, own: ALL_PERMISSIONS };
const NONE: NodeAccess = { visible: false, granted: [], own: [] };

/**
 * Who holds access on their own account: a session's caller, the creator a share or link speaks
 * for, or the requester an approval carries a share out for (holderOf).
 */
export type Holder = Pick<AuthenticatedUser, 'userUuid' | 'isBuiltin'>;

/** The user `uuid` as a holder of access; undefined once deleted (null) or while deactivated, who hold nothing. */
export async function holderOf(sql: Sql, uuid: string | null): Promise<Holder | undefined> {
  if (uuid === null) return undefined;
  const user = await getUserByUuid(sql, uuid);
  if (!user || user.is_active !== 1) return undefined;
  return { userUuid: user.uuid, isBuiltin: user.is_builtin === 1 };
}

async function ownAccess(sql: Sql, holder: Holder, node: Pick<NodeRow, 'owner_type' | 'owner_uuid'>): Promise<NodeAccess> {
  if (node.owner_type === 'User') return node.owner_uuid === holder.userUuid ? FULL : NONE;
  if (holder.isBuiltin) return FULL;
  const membership = await membershipOf(sql, node.owner_uuid, holder.userUuid);
  if (!membership) return NONE;
  if (membership.isAdmin) return FULL;
  const granted = ALL_PERMISSIONS.filter((p) => membership.nodePermissions.includes(p));
  return { visible: true, granted, own: granted };
}

/**
 * What the creator of a share or link holds on `node` right now, of their own (owner, group
 * membership, built-in admin; never through another share): nothing once they were deleted
 * (`creatorUuid` null) or deactivated, or left the group. A share gives at most this.
 */
export async function creatorAccess(sql: Sql, creatorUuid: string | null, node: Pick<NodeRow, 'owner_type' | 'owner_uuid'>): Promise<readonly Permission[]> {
  const creator = await holderOf(sql, creatorUuid);
  return creator ? (await ownAccess(sql, creator, node)).granted : [];
}

/**
 * What the private shares reaching `node` give the caller: per share, `read` and `download`,
 * `write` when writable, `delete` below (never at) a writable shared node, each only as far as
 * the share's creator holds it on the node now; the shares add up. Undefined when none gives anything.
 */
async function sharedAccess(sql: Sql, caller: Holder, node: Pick<NodeRow, 'uuid' | 'owner_type' | 'owner_uuid'>): Promise<{ granted: Permission[]; root: string; recipientUuid: string } | undefined> {
  const reaching = await privateSharesReaching(sql, node.uuid, caller.userUuid);
  if (reaching.length === 0) return undefined;
  // Every share on one node's ancestry has the node's owner; a creator's access is asked once.
  const held = new Map<string | null, readonly Permission[]>();
  const granted = new Set<Permission>();
  let topmost: (typeof reaching)[number] | undefined;
  for (const share of reaching) {
    let creator = held.get(share.creatorUuid);
    if (!creator) held.set(share.creatorUuid, (creator = await creatorAccess(sql, share.creatorUuid, node)));
    const offered: Permission[] = ['read', 'download'];
    if (share.writable) offered.push('write');
    if (share.writable && share.depth > 0) offered.push('delete');
    const given = offered.filter((p) => creator.includes(p));
    if (given.length === 0) continue;
    topmost ??= share;
    for (const p of given) granted.add(p);
  }
  if (!topmost) return undefined;
  return { granted: ALL_PERMISSIONS.filter((p) => granted.has(p)), root: topmost.root, recipientUuid: topmost.recipientUuid };
}

export async function accessTo(sql: Sql, caller: Holder, node: Pick<NodeRow, 'uuid' | 'owner_type' | 'owner_uuid'>): Promise<NodeAccess> {
  const own = await ownAccess(sql, caller, node);
  if (own.granted.length === ALL_PERMISSIONS.length) return own;
  const shared = await sharedAccess(sql, caller, node);
  if (!shared) return own;
  const granted = ALL_PERMISSIONS.filter((p) => own.granted.includes(p) || shared.granted.includes(p));
  const access: NodeAccess = { visible: true, granted, own: own.granted };
  if (!own.visible) access.viaShare = { root: shared.root, recipientUuid: shared.recipientUuid };
  return access;
}

/**
 * Refuses (403, naming what is missing) a share or link that would give more than its creator
 * holds on `node` of their own: a private share or a public link gives `read` and `download`, a
 * writable private share also `write`, an upload link `write`. (`delete` below a writable shared
 * node is given only while the creator holds it: sharedAccess.) Checked again at every use.
 */
export async function assertMayGive(sql: Sql, caller: Holder, node: Pick<NodeRow, 'owner_type' | 'owner_uuid'>, type: 'public' | 'private' | 'upload', writable: boolean): Promise<void> {
  const held = (await ownAccess(sql, caller, node)).granted;
  const needed: Permission[] = type === 'upload' ? ['write'] : writable ? ['read', 'download', 'write'] : ['read', 'download'];
  const what = type === 'upload' ? 'an upload link' : type === 'public' ? 'a public link' : writable ? 'a writable private share' : 'a private share';
  const missing = needed.filter((p) => !held.includes(p));
  if (missing.length > 0) throw forbidden(`${missing.join(' and ')} permission required to make ${what}: a share gives at most what its creator holds`);
}

/** Permissions `caller` holds on `node` (what myaccess answers); empty when the node is not theirs to see. */
export async function permissionsOn(sql: Sql, caller: AuthenticatedUser, node: NodeRow): Promise<Permission[]> {
  return [...(await accessTo(sql, caller, node)).granted];
}

/**
 * Resolves a `{node_uuid}` path value (UUID or top-level identifier, bare or qualified) to a
 * node the caller sees and that grants `permission` (`visible`: no permission asked, as for
 * myaccess). Throws 404 when unknown or invisible, 403 when visible without the permission.
 */
export async function resolveNode(sql: Sql, caller: Holder, identifier: string, permission: Permission | 'visible' = 'read'): Promise<NodeRow> {
  return (await resolveNodeAccess(sql, caller, identifier, permission)).node;
}

/** resolveNode, answering also the access it found (whether a private share is the way in). */
export async function resolveNodeAccess(
  sql: Sql,
  caller: Holder,
  identifier: string,
  permission: Permission | 'visible' = 'read',
): Promise<{ node: NodeRow; access: NodeAccess }> {
  const where = locatorOf(identifier, caller.userUuid);
  if (!where) throw notFound();
  return admitNode(sql, caller, await findNode(sql, where), permission);
}

/**
 * A node by its numeric id (docs/extensions.md "Numeric file ids") that the caller may read: 404
 * for a number no node has and for a node the caller may not read alike, so numbers, which are
 * easy to guess, tell nothing about other users' and groups' nodes.
 */
export async function resolveNodeByFileId(sql: Sql, caller: Holder, fileId: number): Promise<{ node: NodeRow; access: NodeAccess }> {
  const node = await getNodeByFileId(sql, fileId);
  const access = node && (await accessTo(sql, caller, node));
  if (!node || !access?.visible || !access.granted.includes('read')) throw notFound();
  return { node, access };
}

/**
 * resolveNodeAccess for a node already read (undefined: no such node), as an operation that
 * reads it together with other rows does (ops/files.ts: an upload's checks in one round trip).
 */
export async function admitNode(
  sql: Sql,
  caller: Holder,
  node: NodeRow | undefined,
  permission: Permission | 'visible',
): Promise<{ node: NodeRow; access: NodeAccess }> {
  if (!node) throw notFound();
  const access = await accessTo(sql, caller, node);
  if (!access.visible) throw notFound();
  if (permission !== 'visible' && !access.granted.includes(permission)) throw forbidden(`${permission} permission required`);
  return { node, access };
}

/**
 * A move or copy into another owner's folder takes the node away from its owner: a move also
 * needs `delete` on the node (it leaves), a copy also needs `download` (its bytes leave). The
 * permissions on the target are the route's to check, as for any move or copy. `access` is the
 * caller's to `node`, as resolveNodeAccess() found it.
 */
export function assertMayLeaveOwner(access: NodeAccess, node: NodeRow, target: NodeRow, operation: 'move' | 'copy'): void {
  if (node.owner_uuid === target.owner_uuid) return;
  const needed: Permission = operation === 'move' ? 'delete' : 'download';
  if (!access.granted.includes(needed)) {
    throw forbidden(`${needed} permission required to ${operation} a node to another owner`);
  }
}

/**
 * The owner's side of a node: what a private share never gives, whatever it grants (issue 29).
 * Only who holds the permission named here on the node of their own (its owner; a member of the
 * owning group holding it, the group's administrators, the built-in admin) may:
 * - `skip-trash` (`delete`): mark a folder "delete for good" or clear the mark, and have a DELETE
 *   below a marked folder skip the trash. A delete a share allows goes to the owner's trash
 *   whatever the mark (ops/trash.ts, ops/nodes.ts): removing what was shared stays the owner's.
 * - `list-old-revisions` (`read`), `download-old-revision` (`download`), `restore-revision`
 *   (`write`): reach a revision other than the current one (ops/revise.ts, ops/download.ts).
 *   Through a share, the current content only, as through the bridge (`/versions/` mirrors no
 *   share): an old revision may hold what the owner removed since.
 */
export type OwnerAct = 'skip-trash' | 'list-old-revisions' | 'download-old-revision' | 'restore-revision';

const OWNER_ACTS: Readonly<Record<OwnerAct, { needs: Permission; refusal: string }>> = {
  'skip-trash': { needs: 'delete', refusal: "only the owner (or a member of the owning group holding delete) decides whether deletes skip the trash; through a share, deletes go to the owner's trash" },
  'list-old-revisions': { needs: 'read', refusal: "old revisions are the owner's: a share gives the current content only" },
  'download-old-revision': { needs: 'download', refusal: "old revisions are the owner's: a share gives the current content only" },
  'restore-revision': { needs: 'write', refusal: "restoring a revision is the owner's: a share gives the current content only" },
};

/** Whether the caller (with `access` to a node, as resolveNodeAccess found it) may do `act` there: the owner's side. */
export function mayActAsOwner(access: NodeAccess, act: OwnerAct): boolean {
  return access.own.includes(OWNER_ACTS[act].needs);
}

/** Refuses (403, saying whose it is) `act` to a caller who may not (mayActAsOwner). */
export function assertMayActAsOwner(access: NodeAccess, act: OwnerAct): void {
  if (!mayActAsOwner(access, act)) throw forbidden(OWNER_ACTS[act].refusal);
}

export type SharePermission = 'public_create' | 'public_delete' | 'private_create' | 'private_delete' | 'upload_link_create' | 'upload_link_delete';

/**
 * Who manages the share links of a node the caller sees (docs/extensions.md "Share links and
 * private shares"): a user's nodes their owner only; a group's nodes the built-in admin, the
 * group's administrators, and members holding the share permission asked for (`list`: any
 * member). 403 otherwise, naming what is missing.
 */
export async function assertSharePermission(sql: Sql, caller: Holder, node: Pick<NodeRow, 'owner_type' | 'owner_uuid'>, needed: SharePermission | 'list'): Promise<void> {
  if (node.owner_type === 'User') {
    if (node.owner_uuid === caller.userUuid) return;
    throw forbidden("only the node's owner manages its shares");
  }
  if (caller.isBuiltin) return;
  const membership = await membershipOf(sql, node.owner_uuid, caller.userUuid);
  if (!membership) throw forbidden("only the group's members manage the shares of its nodes");
  if (membership.isAdmin || needed === 'list' || membership.sharePermissions.includes(needed)) return;
  throw forbidden(`${needed} share permission required`);
}

/**
 * The one door an approver has to a node they may not otherwise see: the file of a share request
 * that waits for their decision (state `pending`, the caller an approver of its workspace and
 * share type now, not its requester), to read its current content before deciding. Folders have
 * no preview here. 404 `pending share not found` alike for an unknown request, one decided or
 * withdrawn, another approver's and a requester's own, so nothing is learnt of requests one does
 * not decide; 404 when the node is gone or is not a file. Read-only: callers send its bytes and
 * nothing else.
 */
export async function resolveApproverPreview(sql: Sql, caller: Holder, pendingUuid: string): Promise<NodeRow> {
  const refused = () => notFound('pending share not found');
  if (!isUuid(pendingUuid)) throw refused();
  const request = await getShareRequest(sql, pendingUuid.toLowerCase());
  if (!request || request.state !== 'pending' || request.node_uuid === null || request.requester_uuid === caller.userUuid) throw refused();
  if (!(await isApprover(sql, request.workspace_uuid, request.share_type, caller.userUuid))) throw refused();
  const node = await getNode(sql, request.node_uuid);
  if (!node || node.type !== 'File' || node.revision === null) throw notFound('the request is not for a file, or the file is gone');
  return node;
}

export type GroupRole = 'member' | 'admin';

export interface GroupAccess {
  group: GroupRow;
  /** The caller's own membership; undefined for the built-in admin when not a member. */
  membership: Membership | undefined;
  isGroupAdmin: boolean;
}

export const groupNotFound = (): StoreHttpError => notFound('group not found');

/**
 * The group behind a `{group_uuid}` of /api/groups, for a caller who holds `role` there. 404
 * for an unknown or malformed UUID and for non-members, 403 for members lacking `admin`. The
 * built-in admin acts as an administrator of every group (as on the group's nodes).
 */
export async function resolveGroup(sql: Sql, caller: AuthenticatedUser, rawUuid: string, role: GroupRole): Promise<GroupAccess> {
  if (!isUuid(rawUuid)) throw groupNotFound();
  const group = await getGroup(sql, rawUuid.toLowerCase());
  if (!group) throw groupNotFound();
  const membership = await membershipOf(sql, group.uuid, caller.userUuid);
  const isGroupAdmin = caller.isBuiltin || membership?.isAdmin === true;
  if (!membership && !isGroupAdmin) throw groupNotFound();
  if (role === 'admin' && !isGroupAdmin) throw forbidden('group administrator privileges required');
  return { group, membership, isGroupAdmin };
}
