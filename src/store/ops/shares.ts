/**
 * Share links (docs/extensions.md "Share links and private shares", edition 3.0): a public link
 * (optional password and expiry), a private share with users and groups (read-only or writable),
 * an upload link into a folder. Creating and removing one is checked against the caller's
 * `share_permissions` on a group's node (access.ts assertSharePermission); creating one waits
 * for approval when the node's workspace has an approver for its type. A link's token is shown
 * once, in the answer that made it; only its SHA-256 is stored, and a password only as scrypt.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { StoreContext } from '../context.js';
import { accessTo, assertMayGive, assertSharePermission, resolveNode, type SharePermission } from '../access.js';
import type { ShareRequestRow } from '../storage/approvals.js';
import { getNode, isUuid, type NodeRow } from '../storage/nodes.js';
import { orgOfOwner } from '../storage/owner-data.js';
import { deleteShare, getShare, insertShare, recipientsOf, sharesByCreator, sharesOfNode, type LinkType, type ShareRow } from '../storage/shares.js';
import { isInTrash } from '../storage/tree.js';
import { conflict, invalid, notFound } from '../envelope.js';
import { hashPassword } from '../passwords.js';
import { createLinkSchema, type ShareRecord } from '../schemas/shares.js';
import type { AuthenticatedUser } from '../sessions.js';
import { parseInput } from './input.js';
import { recipientInOrg, recipientRecord, resolveRecipients, type RecipientRecord } from './recipients.js';
import { assertShareable, mustAwaitApproval, openShareRequest } from './share-requests.js';

const PERMISSION: Record<LinkType, { create: SharePermission; delete: SharePermission }> = {
  public: { create: 'public_create', delete: 'public_delete' },
  private: { create: 'private_create', delete: 'private_delete' },
  upload: { create: 'upload_link_create', delete: 'upload_link_delete' },
};

export const hashLinkToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** Where a link is served: `/public/<token>`, absolute when `store.publicUrl` is set. */
export function linkUrl(ctx: StoreContext, token: string): string {
  return `${ctx.config.store.publicUrl?.replace(/\/+$/, '') ?? ''}/public/${token}`;
}

/** What a link request stores until it is carried out (never a secret, only hashes). */
interface LinkDetails {
  token_hash?: string;
  password_hash?: string;
  expires?: number;
  writable?: boolean;
  recipients?: RecipientRecord[];
}

function shareRecord(ctx: StoreContext, share: ShareRow, node: NodeRow): ShareRecord {
  const record: ShareRecord = {
    share_uuid: share.uuid,
    type: share.type,
    node_uuid: node.uuid,
    node_name: node.name,
    node_type: node.type,
    owner_type: node.owner_type,
    owner_uuid: node.owner_uuid,
    creator_uuid: share.creator_uuid,
    created: share.created,
    expires: share.expires,
  };
  if (share.type === 'private') {
    record.writable = share.writable === 1;
    const org = ownerOrg(ctx, node);
    record.recipients = recipientsOf(ctx.db, share.uuid).map((r) => ({
      uuid: r.recipient_uuid,
      type: r.recipient_type,
      name: recipientInOrg(ctx, org, r.recipient_uuid)?.name ?? '',
    }));
  } else {
    record.password_protected = share.password_hash !== null;
  }
  return record;
}

const ownerOrg = (ctx: StoreContext, node: NodeRow): string => orgOfOwner(ctx.db, { type: node.owner_type, uuid: node.owner_uuid });

/** Inserts the share `details` describe on `node`; answers the row. Runs in the caller's transaction. */
function insertLink(ctx: StoreContext, type: LinkType, node: NodeRow, creatorUuid: string | null, details: LinkDetails, nowMs: number): ShareRow {
  const row: ShareRow = {
    uuid: randomUUID(),
    type,
    node_uuid: node.uuid,
    creator_uuid: creatorUuid,
    token_hash: details.token_hash ?? null,
    password_hash: details.password_hash ?? null,
    expires: details.expires ?? null,
    writable: details.writable ? 1 : 0,
    created: nowMs,
  };
  insertShare(ctx.db, row, details.recipients ?? []);
  return row;
}

/**
 * The share made (with `token` and `url` for a public or upload link, shown this once), or the
 * approval request it waits in (`pending_uuid`, with the token and URL the link will have once
 * approved).
 */
export type CreatedShare = ShareRecord | { pending_uuid: string; token?: string; url?: string };

/** POST /api/nodes/{uuid}/shares. */
export async function createShare(ctx: StoreContext, caller: AuthenticatedUser, nodeId: string, body: unknown): Promise<CreatedShare> {
  const input = parseInput(createLinkSchema, body);
  const { db, clock, config } = ctx;
  const node = resolveNode(db, caller, nodeId, 'read');
  assertSharePermission(db, caller, node, PERMISSION[input.type].create);
  assertMayGive(db, caller, node, input.type, input.type === 'private' && input.writable === true);
  assertShareable(db, node);
  const details: LinkDetails = {};
  let token: string | undefined;
  if (input.type === 'private') {
    const recipients = resolveRecipients(ctx, caller, input.recipients, 'recipients');
    if (recipients.some((r) => r.uuid === node.owner_uuid)) throw invalid('recipients: the group owns the node already');
    details.recipients = recipients.map(recipientRecord);
    details.writable = input.writable ?? false;
  } else {
    if (input.type === 'upload' && node.type !== 'Dir') throw conflict('an upload link needs a folder', 'not_a_folder');
    if (input.expires !== undefined) {
      if (input.expires <= clock.now()) throw invalid('expires: must be in the future');
      details.expires = input.expires;
    }
    if (input.password !== undefined) details.password_hash = await hashPassword(input.password, config.store.scryptCost);
    token = randomBytes(32).toString('base64url');
    details.token_hash = hashLinkToken(token);
  }
  const links = token === undefined ? {} : { token, url: linkUrl(ctx, token) };
  return db.transaction((): CreatedShare => {
    // The password hash awaited: the node may have gone or moved to trash meanwhile.
    const current = getNode(db, node.uuid);
    if (!current) throw notFound();
    assertShareable(db, current);
    const now = clock.now();
    if (mustAwaitApproval(db, config.store.edition, current, input.type)) {
      const comment = input.comment ?? '';
      return { pending_uuid: openShareRequest(db, { type: input.type, node: current, requesterUuid: caller.userUuid, comment, details, nowMs: now }), ...links };
    }
    return { ...shareRecord(ctx, insertLink(ctx, input.type, current, caller.userUuid, details, now), current), ...links };
  })();
}

/**
 * Carries out an approved link request (ops/approvals.ts, inside its transaction): 409
 * `node_gone` when the node was deleted for good, `node_in_trash` while it lies in trash,
 * `request_expired` once the `expires` it asks for has passed (the request stays pending).
 * Recipients deleted since are left out. Answers the new share's UUID.
 */
export function createLinkFromRequest(ctx: StoreContext, request: ShareRequestRow, nowMs: number): string {
  const node = request.node_uuid === null ? undefined : getNode(ctx.db, request.node_uuid);
  if (!node) throw conflict('the node of this request was deleted; reject the request', 'node_gone');
  if (isInTrash(ctx.db, node)) throw conflict('the node of this request lies in trash; restore it first or reject the request', 'node_in_trash');
  const details = JSON.parse(request.details) as LinkDetails;
  // Checked again now: a link whose expiry passed while it waited would be born dead, or live on a stale promise.
  if (details.expires !== undefined && nowMs >= details.expires) {
    throw conflict(`the link this request asks for expired at ${new Date(details.expires).toISOString()}; reject the request (the requester may ask again)`, 'request_expired');
  }
  const orgId = ownerOrg(ctx, node);
  details.recipients = details.recipients?.filter((r) => recipientInOrg(ctx, orgId, r.uuid) !== undefined);
  return insertLink(ctx, request.share_type as LinkType, node, request.requester_uuid, details, nowMs).uuid;
}

/** GET /api/nodes/{uuid}/shares: whoever manages the node's shares (any member of its group). */
export function listNodeShares(ctx: StoreContext, caller: AuthenticatedUser, nodeId: string): ShareRecord[] {
  const node = resolveNode(ctx.db, caller, nodeId, 'read');
  assertSharePermission(ctx.db, caller, node, 'list');
  return sharesOfNode(ctx.db, node.uuid).map((share) => shareRecord(ctx, share, node));
}

/** GET /api/shares: the shares the caller made, on nodes they still see. */
export function listMyShares(ctx: StoreContext, caller: AuthenticatedUser): ShareRecord[] {
  return sharesByCreator(ctx.db, caller.userUuid).flatMap((share) => {
    const node = getNode(ctx.db, share.node_uuid);
    return node && accessTo(ctx.db, caller, node).visible ? [shareRecord(ctx, share, node)] : [];
  });
}

const shareNotFound = () => notFound('share not found');

/** DELETE /api/shares/{uuid}: 404 unless the caller sees the node, 403 without the `*_delete` share permission. */
export function removeShare(ctx: StoreContext, caller: AuthenticatedUser, shareUuid: string): void {
  const { db } = ctx;
  const share = isUuid(shareUuid) ? getShare(db, shareUuid.toLowerCase()) : undefined;
  const node = share && getNode(db, share.node_uuid);
  if (!share || !node || !accessTo(db, caller, node).visible) throw shareNotFound();
  assertSharePermission(db, caller, node, PERMISSION[share.type].delete);
  deleteShare(db, share.uuid);
}
