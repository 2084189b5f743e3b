/**
 * Share links (docs/extensions.md "Share links and private shares", edition 3.0): a public link
 * (optional password and expiry), a private share with users and groups (read-only or writable),
 * an upload link into a folder. Creating and removing one is checked against the caller's
 * `share_permissions` on a group's node (access.ts assertSharePermission); creating one waits
 * for approval when the node's workspace has an approver for its type. A link's token is shown
 * once, in the answer that made it; only its SHA-256 is stored, and a password only as scrypt.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { withSql } from '../context.js';
import { flatMapInOrder, mapInOrder } from '../in-order.js';
import type { StoreContext } from '../context.js';
import { accessTo, assertMayGive, assertSharePermission, resolveNode, type Holder, type SharePermission } from '../access.js';
import type { Sql } from '../storage/sql.js';
import {
  type ShareRequestRow,
  deleteShare,
  getShare,
  insertShare,
  recipientsOf,
  sharesByCreator,
  sharesOfNode,
  updateLink,
  type LinkType,
  type ShareRow,
} from '../storage/shares.js';
import { getNode, isUuid, type NodeRow, orgOfOwner } from '../storage/nodes.js';
import { conflict, invalid, notFound } from '../envelope.js';
import { hashPassword } from '../passwords.js';
import { createLinkSchema, updateLinkSchema, type ShareRecord } from '../schemas/shares.js';
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

async function shareRecord(ctx: StoreContext, share: ShareRow, node: NodeRow): Promise<ShareRecord> {
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
    const org = await ownerOrg(ctx, node);
    record.recipients = await mapInOrder(await recipientsOf(ctx.storage.sql, share.uuid), async (r) => ({
      uuid: r.recipient_uuid,
      type: r.recipient_type,
      name: (await recipientInOrg(ctx, org, r.recipient_uuid))?.name ?? '',
    }));
  } else {
    record.password_protected = share.password_hash !== null;
  }
  return record;
}

const ownerOrg = (ctx: StoreContext, node: NodeRow): Promise<string> => orgOfOwner(ctx.storage.sql, { type: node.owner_type, uuid: node.owner_uuid });

/** Inserts the share `details` describe on `node`; answers the row. Runs in the caller's transaction. */
async function insertLink(ctx: StoreContext, type: LinkType, node: NodeRow, creatorUuid: string | null, details: LinkDetails, nowMs: number): Promise<ShareRow> {
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
  await insertShare(ctx.storage.sql, row, details.recipients ?? []);
  return row;
}

/**
 * The share made (with `token` and `url` for a public or upload link, shown this once), or the
 * approval request it waits in (`pending_uuid`, with the token and URL the link will have once
 * approved).
 */
export type CreatedShare = ShareRecord | { pending_uuid: string; token?: string; url?: string };

/**
 * What making a share of `type` on `nodeId` needs of `holder`, when it is made or requested and
 * again when its request is approved (ops/approvals.ts): `read` on the node, the share
 * permission that creates that type (assertSharePermission), what the share gives held of their
 * own (assertMayGive), and a node that may be shared. 404 or 403 naming what is missing; answers
 * the node.
 */
export async function admitLinkSource(sql: Sql, holder: Holder, nodeId: string, type: LinkType, writable: boolean): Promise<NodeRow> {
  const node = await resolveNode(sql, holder, nodeId, 'read');
  await assertSharePermission(sql, holder, node, PERMISSION[type].create);
  await assertMayGive(sql, holder, node, type, type === 'private' && writable);
  await assertShareable(sql, node);
  return node;
}

/** POST /api/nodes/{uuid}/shares. */
export async function createShare(ctx: StoreContext, caller: AuthenticatedUser, nodeId: string, body: unknown): Promise<CreatedShare> {
  const input = parseInput(createLinkSchema, body);
  const { storage: { sql }, clock, config } = ctx;
  const writable = input.type === 'private' && input.writable === true;
  const node = await admitLinkSource(sql, caller, nodeId, input.type, writable);
  const details: LinkDetails = {};
  let token: string | undefined;
  if (input.type === 'private') {
    const recipients = await resolveRecipients(ctx, caller, input.recipients, 'recipients');
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
  return await sql.transaction(async (tx): Promise<CreatedShare> => {
    const txCtx = withSql(ctx, tx);
    // The password hash awaited: the node may have gone, moved (to trash, or where the caller
    // may not share), or the caller's permissions changed meanwhile. Checked again here.
    const current = await admitLinkSource(tx, caller, node.uuid, input.type, writable);
    const now = clock.now();
    if (await mustAwaitApproval(tx, config.store.edition, current, input.type)) {
      const comment = input.comment ?? '';
      return { pending_uuid: await openShareRequest(tx, { type: input.type, node: current, requesterUuid: caller.userUuid, comment, details, nowMs: now }), ...links };
    }
    return { ...(await shareRecord(txCtx, await insertLink(txCtx, input.type, current, caller.userUuid, details, now), current)), ...links };
  });
}

/**
 * Carries out an approved link request on `node` (ops/approvals.ts, inside its transaction,
 * after admitApproval checked the node, the expiry and the requester). Recipients deleted since
 * are left out. Answers the new share's UUID.
 */
export async function createLinkFromRequest(ctx: StoreContext, request: ShareRequestRow, node: NodeRow, nowMs: number): Promise<string> {
  const details = JSON.parse(request.details) as LinkDetails;
  const orgId = await ownerOrg(ctx, node);
  if (details.recipients) {
    const kept = [];
    for (const r of details.recipients) if ((await recipientInOrg(ctx, orgId, r.uuid)) !== undefined) kept.push(r);
    details.recipients = kept;
  }
  return (await insertLink(ctx, request.share_type as LinkType, node, request.requester_uuid, details, nowMs)).uuid;
}

/** GET /api/nodes/{uuid}/shares: whoever manages the node's shares (any member of its group). */
export async function listNodeShares(ctx: StoreContext, caller: AuthenticatedUser, nodeId: string): Promise<ShareRecord[]> {
  const node = await resolveNode(ctx.storage.sql, caller, nodeId, 'read');
  await assertSharePermission(ctx.storage.sql, caller, node, 'list');
  return mapInOrder(await sharesOfNode(ctx.storage.sql, node.uuid), (share) => shareRecord(ctx, share, node));
}

/** GET /api/shares: the shares the caller made, on nodes they still see. */
export async function listMyShares(ctx: StoreContext, caller: AuthenticatedUser): Promise<ShareRecord[]> {
  return flatMapInOrder(await sharesByCreator(ctx.storage.sql, caller.userUuid), async (share) => {
    const node = await getNode(ctx.storage.sql, share.node_uuid);
    return node && (await accessTo(ctx.storage.sql, caller, node)).visible ? [await shareRecord(ctx, share, node)] : [];
  });
}

const shareNotFound = () => notFound('share not found');

/**
 * The share `shareUuid` names and its node, when the caller may manage it (remove or change it):
 * 404 unless they see the node, 403 without the `*_delete` share permission of its type
 * (assertSharePermission: on a user's node its owner only). The one rule for removeShare and
 * updateShare: whoever may remove a share may change it, and no one else.
 */
async function manageableShare(sql: Sql, caller: AuthenticatedUser, shareUuid: string): Promise<{ share: ShareRow; node: NodeRow }> {
  const share = isUuid(shareUuid) ? await getShare(sql, shareUuid.toLowerCase()) : undefined;
  const node = share && (await getNode(sql, share.node_uuid));
  if (!share || !node || !(await accessTo(sql, caller, node)).visible) throw shareNotFound();
  await assertSharePermission(sql, caller, node, PERMISSION[share.type].delete);
  return { share, node };
}

/** DELETE /api/shares/{uuid}: whoever may manage the share (manageableShare). */
export async function removeShare(ctx: StoreContext, caller: AuthenticatedUser, shareUuid: string): Promise<void> {
  await ctx.storage.sql.transaction(async (tx) => {
    const { share } = await manageableShare(tx, caller, shareUuid);
    await deleteShare(tx, share.uuid);
  });
}

/**
 * PUT /api/shares/{uuid}: changes a link's password and expiry (null removes one) and whether it
 * reads or takes uploads. Only whoever may remove it (manageableShare: 404 unless the caller sees
 * the node, 403 without the `*_delete` share permission of its type); 409 `not_a_link` for a
 * private share. The changed link also needs what making one of its (new) type needs, checked by
 * the same function (admitLinkSource: the share permission, what the link gives held of one's
 * own, a shareable node; an upload link a folder). A link of a type that waits for approval on its
 * node's workspace is not changed here (409 `approval_required`): an approver approved it as it
 * was, so a changed one is a new request (make a new link). One transaction, after the password
 * is hashed; the token stays.
 */
export async function updateShare(ctx: StoreContext, caller: AuthenticatedUser, shareUuid: string, body: unknown): Promise<ShareRecord> {
  const input = parseInput(updateLinkSchema, body);
  const { storage: { sql }, clock, config } = ctx;
  if (typeof input.expires === 'number' && input.expires <= clock.now()) throw invalid('expires: must be in the future');
  const passwordHash = typeof input.password === 'string' ? await hashPassword(input.password, config.store.scryptCost) : input.password;
  return await sql.transaction(async (tx) => {
    const txCtx = withSql(ctx, tx);
    const { share, node } = await manageableShare(tx, caller, shareUuid);
    if (share.type === 'private') throw conflict('a private share has no password, expiry or upload mode to change', 'not_a_link');
    const type = input.type ?? share.type;
    const current = await admitLinkSource(tx, caller, node.uuid, type, false);
    if (type === 'upload' && current.type !== 'Dir') throw conflict('an upload link needs a folder', 'not_a_folder');
    if (await mustAwaitApproval(tx, config.store.edition, current, type)) {
      throw conflict(`a ${type} link on this workspace waits for an approver: make a new link instead of changing this one`, 'approval_required');
    }
    const fields = {
      type,
      password_hash: passwordHash === undefined ? share.password_hash : passwordHash,
      expires: input.expires === undefined ? share.expires : input.expires,
    };
    await updateLink(tx, share.uuid, fields);
    return shareRecord(txCtx, { ...share, ...fields }, current);
  });
}
