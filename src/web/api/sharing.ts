/**
 * The sharing pages' calls (issue 24, item 5), all through the store's REST API: share links and
 * private shares (docs/api.md "Share links and private shares"), a copy offered to users and
 * groups (`share_copy_with`), pending incoming shares of the caller and their groups, and share
 * requests for approvers and requesters ("Share approval"). A share the workspace's approver must
 * first approve answers 202 with `pending_uuid`: that is a Made.pending here, not an error.
 */
import type { NodeDetails } from '../../store/schemas/nodes.js';
import type { PendingShareRecord, ShareRecord } from '../../store/schemas/shares.js';
import { api, ApiError, errorText, fileAccessKey } from './client.js';
import { t } from '../strings/index.js';

export type ShareKind = ShareRecord['type'];
export type Recipient = NonNullable<ShareRecord['recipients']>[number];
export type Share = ShareRecord;
export type { NodeDetails };

export interface Person {
  uuid: string;
  fullname: string;
  email: string;
}

export interface Group {
  group_uuid: string;
  group_name: string;
  is_admin: boolean;
}

export interface Incoming {
  uuid: string;
  name: string;
  type: 'Dir' | 'File';
  size: number;
  sharer_uuid: string | null;
  sharer_fullname: string;
  shared_at: number;
}

/** A request record (docs/api.md "Pending share approval request"), its `share_info` as each type fills it. */
export interface ShareRequest extends Omit<PendingShareRecord, 'share_type' | 'share_info' | 'state' | 'requester_uuid'> {
  share_type: ShareKind | 'share_copy';
  share_info: {
    node_uuid: string;
    node_name: string;
    node_type: 'Dir' | 'File';
    recipients?: Recipient[];
    writable?: boolean;
    password_protected?: boolean;
    expires?: number | null;
  };
  requester_uuid: string;
  state: 'pending' | 'approved' | 'rejected' | 'withdrawn';
}

/** What making a share answered: the share, or a request awaiting an approver. */
export type Made = { share: Share } | { pending: string; url?: string };

const node = (id: string) => `/api/nodes/${encodeURIComponent(id)}`;

export const nodeDetails = (id: string) => api<NodeDetails>('GET', node(id));
export const nodeShares = (id: string) => api<Share[]>('GET', `${node(id)}/shares`);
export const myShares = () => api<Share[]>('GET', '/api/shares');
export const removeShare = (shareUuid: string) => api('DELETE', `/api/shares/${encodeURIComponent(shareUuid)}`);
export const people = () => api<Person[]>('GET', '/api/users?format=short_active');
export const myGroups = () => api<Group[]>('GET', '/api/groups');
export const groupProfile = (id: string) => api<{ accept_incoming: 'members' | 'admins' }>('GET', `/api/groups/${encodeURIComponent(id)}`);
export const pendingRequests = () => api<ShareRequest[]>('GET', '/api/pending_shares');
export const myRequests = () => api<ShareRequest[]>('GET', '/api/my_pending_shares');
export const decide = (id: string, status: 'approved' | 'rejected', comment: string) =>
  api<ShareRequest>('PUT', `/api/pending_shares/${encodeURIComponent(id)}/approval`, comment ? { status, comment } : { status });
/** The share types of a node that wait for an approver; none where the store has no approvals (edition 1.0: 404). */
export async function approvalsOf(id: string): Promise<string[]> {
  try {
    return (await api<{ needs_approval: string[] }>('GET', `${node(id)}/approvals`)).needs_approval;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return [];
    throw err;
  }
}

/** The approver's preview of a pending request's file (its key in SPEC's style of path); undefined without a key. */
export function pendingFileUrl(request: ShareRequest): string | undefined {
  const key = fileAccessKey();
  return key ? `/resources/auth/pending/${encodeURIComponent(key)}/${encodeURIComponent(request.pending_uuid)}/${encodeURIComponent(request.share_info.node_name)}` : undefined;
}

export const withdraw = (id: string) => api<ShareRequest>('DELETE', `/api/my_pending_shares/${encodeURIComponent(id)}`);

/** The groups a copy or a private share may go to: all of the organization's where the store allows listing them, else the caller's own. */
export async function shareableGroups(): Promise<Group[]> {
  try {
    return await api<Group[]>('GET', '/api/groups?show=all');
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) return myGroups();
    throw err;
  }
}

/** Answers `data` even for a 202 (api() returns `data` for any 2xx). */
export async function makeShare(id: string, body: Record<string, unknown>): Promise<Made> {
  const data = await api<Share & { pending_uuid?: string }>('POST', `${node(id)}/shares`, body);
  if (!data.pending_uuid) return { share: data };
  return data.url ? { pending: data.pending_uuid, url: data.url } : { pending: data.pending_uuid };
}

/** share_copy_with: 204 (nothing), or 202 with a pending request. */
export async function shareCopy(id: string, recipients: string[], comment: string): Promise<string | undefined> {
  const data = await api<{ pending_uuid?: string } | undefined>('POST', node(id), comment ? { share_copy_with: recipients, comment } : { share_copy_with: recipients });
  return data?.pending_uuid;
}

/** Pending incoming shares: the caller's own (group undefined) or a group's. */
export const incoming = (group?: string) => api<Incoming[]>('GET', group ? `/api/groups/${encodeURIComponent(group)}/pending_incoming` : '/api/user/pending_incoming');
export const answerIncoming = (uuid: string, action: 'accept' | 'reject', group?: string) =>
  api<{ node_uuid?: string }>('PUT', group ? `/api/groups/${encodeURIComponent(group)}/pending_incoming` : '/api/user/pending_incoming', { uuid, action });

/** errorText with words for what only sharing meets. */
export function sharingErrorText(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.code === 'quota_exceeded') return t.sharing.quotaExceeded;
    if (error.code === 'not_a_folder') return t.sharing.uploadNeedsFolder;
    if (error.code === 'top_level_immutable') return t.sharing.topLevel;
    if (error.code === 'node_in_trash') return t.sharing.inTrash;
  }
  return errorText(error);
}

/** The field a refusal names (`expires: must be ...` -> `expires`; `recipients.0: ...` -> `recipients`). */
export function refusedField(error: unknown): string | undefined {
  return error instanceof ApiError ? error.field()?.split('.')[0] : undefined;
}
