/**
 * Sharing calls the bridge's OCS sharing API needs (issue 32; docs/extensions.md "Share links and
 * private shares" and "Sharing from the apps"): the caller's links and private shares, making,
 * changing and removing a link, share_copy_with with the approval request it may wait in, the
 * caller's requests, and the organization's users to name a recipient. A server without an
 * endpoint answers 404 (edition 1.0: `not_implemented`) or 405: the bridge answers without that
 * feature. Records are read leniently (passthrough) and turned into the bridge's terms here.
 */
import { z } from 'zod';
import type { StoreHttp } from './http.js';
import { kindOf, parseWith, seg } from './parse.js';
import type { NodeId, NodeKind, StoreSession } from './types.js';

/** A Share record (GET /api/shares) in the bridge's terms. */
export interface ShareLink {
  id: string;
  type: 'public' | 'private' | 'upload';
  node: NodeId;
  nodeName: string;
  nodeKind: NodeKind;
  ownerType: 'User' | 'Group';
  ownerId: string;
  creatorId: string | null;
  createdMs: number;
  expiresMs: number | null;
  passwordProtected: boolean;
  writable?: boolean;
  recipients?: Array<{ id: string; type: 'User' | 'Group'; name: string }>;
  /** Only in the answer that made it: the store keeps only the token's hash. */
  token?: string;
  url?: string;
}

/** What making a link answers: the link, or the approval request it waits in (with the token it will have). */
export type CreatedLink = { share: ShareLink } | { pendingId: string; token?: string; url?: string };

export interface LinkInput {
  type: 'public' | 'upload';
  password?: string;
  expiresMs?: number;
}

/** PUT /api/shares/{uuid}: null removes the password or the expiry. */
export interface LinkChanges {
  type?: 'public' | 'upload';
  password?: string | null;
  expiresMs?: number | null;
}

/** One of the caller's share requests (GET /api/my_pending_shares). */
export interface ShareRequest {
  id: string;
  shareType: string;
  state: string;
  requestedMs: number;
  node: NodeId | undefined;
  nodeName: string;
  nodeKind: NodeKind;
  recipients: Array<{ id: string; type: 'User' | 'Group'; name: string }>;
  passwordProtected: boolean;
  expiresMs: number | null;
}

/** A user of the caller's organization (GET /api/users?format=short_active). */
export interface OrgUser {
  id: string;
  fullname: string;
  email: string;
}

const recipientSchema = z.object({ uuid: z.string(), type: z.enum(['User', 'Group']), name: z.string().optional().default('') });

const shareRecordSchema = z.looseObject({
  share_uuid: z.string(),
  type: z.enum(['public', 'private', 'upload']),
  node_uuid: z.string(),
  node_name: z.string(),
  node_type: z.string(),
  owner_type: z.enum(['User', 'Group']),
  owner_uuid: z.string(),
  creator_uuid: z.string().nullable().optional().default(null),
  created: z.number(),
  expires: z.number().nullable().optional().default(null),
  password_protected: z.boolean().optional(),
  writable: z.boolean().optional(),
  recipients: z.array(recipientSchema).optional(),
  token: z.string().optional(),
  url: z.string().optional(),
});

const requestSchema = z.looseObject({
  pending_uuid: z.string(),
  share_type: z.string(),
  state: z.string().optional().default('pending'),
  requested_at: z.number(),
  share_info: z
    .looseObject({
      node_uuid: z.string().optional(),
      node_name: z.string().optional().default(''),
      node_type: z.string().optional().default('File'),
      recipients: z.array(recipientSchema).optional().default([]),
      password_protected: z.boolean().optional().default(false),
      expires: z.number().nullable().optional().default(null),
    })
    .optional()
    .default({ node_name: '', node_type: 'File', recipients: [], password_protected: false, expires: null }),
});

const envelope = <T extends z.ZodType>(data: T) => z.looseObject({ data });

const toRecipients = (list: ReadonlyArray<z.infer<typeof recipientSchema>>) => list.map((r) => ({ id: r.uuid, type: r.type, name: r.name }));

/** A Share record (as parsed, or as an in-process store hands it over) in the bridge's terms. */
export function toShareLink(r: unknown): ShareLink {
  const row = shareRecordSchema.parse(r);
  const link: ShareLink = {
    id: row.share_uuid,
    type: row.type,
    node: row.node_uuid as NodeId,
    nodeName: row.node_name,
    nodeKind: kindOf(row.node_type),
    ownerType: row.owner_type,
    ownerId: row.owner_uuid,
    creatorId: row.creator_uuid,
    createdMs: row.created,
    expiresMs: row.expires,
    passwordProtected: row.password_protected === true,
  };
  if (row.writable !== undefined) link.writable = row.writable;
  if (row.recipients) link.recipients = toRecipients(row.recipients);
  if (row.token !== undefined) link.token = row.token;
  if (row.url !== undefined) link.url = row.url;
  return link;
}

/** What POST /api/nodes/{uuid}/shares answered (a record, or `pending_uuid`) in the bridge's terms. */
export function toCreatedLink(data: Record<string, unknown>): CreatedLink {
  if (typeof data.pending_uuid === 'string') {
    return { pendingId: data.pending_uuid, ...(typeof data.token === 'string' ? { token: data.token } : {}), ...(typeof data.url === 'string' ? { url: data.url } : {}) };
  }
  return { share: toShareLink(data) };
}

export function toShareRequest(r: unknown): ShareRequest {
  const row = requestSchema.parse(r);
  const info = row.share_info;
  return {
    id: row.pending_uuid,
    shareType: row.share_type,
    state: row.state,
    requestedMs: row.requested_at,
    node: info.node_uuid as NodeId | undefined,
    nodeName: info.node_name,
    nodeKind: kindOf(info.node_type),
    recipients: toRecipients(info.recipients),
    passwordProtected: info.password_protected,
    expiresMs: info.expires,
  };
}

/** The body POST /api/nodes/{uuid}/shares and PUT /api/shares/{uuid} take. */
export function linkBody(input: LinkInput | LinkChanges): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (input.type !== undefined) body.type = input.type;
  if (input.password !== undefined) body.password = input.password;
  if (input.expiresMs !== undefined) body.expires = input.expiresMs;
  return body;
}

export async function listMyShares(http: StoreHttp, s: StoreSession, signal?: AbortSignal): Promise<ShareLink[]> {
  const operation = 'shares.list';
  const res = await http.call({ method: 'GET', path: '/api/shares', token: s.token, signal }, operation);
  return parseWith(envelope(z.array(z.looseObject({}))), res.body, operation, res.status).data.map(toShareLink);
}

export async function createLink(http: StoreHttp, s: StoreSession, node: NodeId, input: LinkInput, signal?: AbortSignal): Promise<CreatedLink> {
  const operation = 'shares.create';
  const res = await http.call({ method: 'POST', path: `/api/nodes/${seg(node)}/shares`, token: s.token, json: linkBody(input), signal }, operation);
  return toCreatedLink(parseWith(envelope(z.looseObject({})), res.body, operation, res.status).data);
}

export async function updateLink(http: StoreHttp, s: StoreSession, share: string, changes: LinkChanges, signal?: AbortSignal): Promise<ShareLink> {
  const operation = 'shares.update';
  const res = await http.call({ method: 'PUT', path: `/api/shares/${seg(share)}`, token: s.token, json: linkBody(changes), signal }, operation);
  return toShareLink(parseWith(envelope(z.looseObject({})), res.body, operation, res.status).data);
}

export async function removeShare(http: StoreHttp, s: StoreSession, share: string, signal?: AbortSignal): Promise<void> {
  await http.call({ method: 'DELETE', path: `/api/shares/${seg(share)}`, token: s.token, signal }, 'shares.remove');
}

/** share_copy_with (SPEC): 204 offered, 202 with `pending_uuid` when the copy waits for an approver. */
export async function shareCopyWith(http: StoreHttp, s: StoreSession, node: NodeId, recipients: readonly string[], signal?: AbortSignal): Promise<{ pendingId?: string }> {
  const res = await http.call({ method: 'POST', path: `/api/nodes/${seg(node)}`, token: s.token, json: { share_copy_with: recipients }, signal }, 'nodes.shareCopyWith');
  const pending = (res.body as { data?: { pending_uuid?: unknown } } | undefined)?.data?.pending_uuid;
  return typeof pending === 'string' ? { pendingId: pending } : {};
}

export async function listMyRequests(http: StoreHttp, s: StoreSession, signal?: AbortSignal): Promise<ShareRequest[]> {
  const operation = 'approvals.mine';
  const res = await http.call({ method: 'GET', path: '/api/my_pending_shares', token: s.token, signal }, operation);
  return parseWith(envelope(z.array(z.looseObject({}))), res.body, operation, res.status).data.map(toShareRequest);
}

export async function withdrawRequest(http: StoreHttp, s: StoreSession, request: string, signal?: AbortSignal): Promise<void> {
  await http.call({ method: 'DELETE', path: `/api/my_pending_shares/${seg(request)}`, token: s.token, signal }, 'approvals.withdraw');
}

export async function listOrgUsers(http: StoreHttp, s: StoreSession, signal?: AbortSignal): Promise<OrgUser[]> {
  const operation = 'users.list';
  const res = await http.call({ method: 'GET', path: '/api/users?format=short_active', token: s.token, signal }, operation);
  const rows = parseWith(envelope(z.array(z.looseObject({ uuid: z.string(), fullname: z.string().optional().default(''), email: z.string().optional().default('') }))), res.body, operation, res.status).data;
  return rows.map((r) => ({ id: r.uuid, fullname: r.fullname, email: r.email }));
}
