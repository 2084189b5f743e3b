/**
 * The sharing pages' calls to the store (docs/api.md "Share links and private shares", "Share
 * approval", pending incoming shares, share_copy_with), through the app's one api().
 */
import { api, ApiError } from '../api.js';

export interface NodeDetails {
  uuid: string;
  name: string;
  type: 'Dir' | 'File';
  owner_type: string;
  owner_uuid: string;
  owner_fullname: string;
}

export interface Recipient {
  uuid: string;
  type: string;
  name: string;
}

export interface ShareRecord {
  share_uuid: string;
  type: 'public' | 'private' | 'upload';
  node_uuid: string;
  node_name: string;
  node_type: string;
  created: number;
  expires: number | null;
  password_protected?: boolean;
  writable?: boolean;
  recipients?: Recipient[];
}

/** What creating a share answers: the record and a link's token and url, or a request's uuid. */
export interface Created {
  pending_uuid?: string;
  url?: string;
}

export interface Person {
  uuid: string;
  name: string;
  detail: string;
  group: boolean;
}

export interface IncomingShare {
  uuid: string;
  name: string;
  type: string;
  size: number;
  sharer_fullname: string;
  shared_at: number;
}

export interface IncomingBox {
  /** Undefined for the caller's own. */
  group?: { uuid: string; name: string; mayAnswer: boolean };
  items: IncomingShare[];
}

export interface ShareRequest {
  pending_uuid: string;
  workspace_name: string;
  share_type: string;
  requested_at: number;
  comment: string;
  share_info: { node_uuid: string; node_name: string; node_type: string; recipients?: Recipient[]; password_protected?: boolean; expires?: number | null };
  requester_fullname: string;
  state: string;
  approval_comment: string;
}

export interface Entry {
  uuid: string;
  name: string;
  type: string;
}

const at = (uuid: string) => encodeURIComponent(uuid);

export const nodeDetails = (uuid: string) => api<NodeDetails>('GET', `/api/nodes/${at(uuid)}`);
export const nodeShares = (uuid: string) => api<ShareRecord[]>('GET', `/api/nodes/${at(uuid)}/shares`);
export const myShares = () => api<ShareRecord[]>('GET', '/api/shares');
export const createShare = (uuid: string, body: Record<string, unknown>) => api<Created>('POST', `/api/nodes/${at(uuid)}/shares`, body);
export const removeShare = (shareUuid: string) => api<undefined>('DELETE', `/api/shares/${at(shareUuid)}`);
export const sharedWithMe = () => api<Entry[]>('GET', '/api/nodes/shared_with_you/dirlist');

/** share_copy_with: undefined when offered at once, `{pending_uuid}` when it awaits approval. */
export const shareCopy = (uuid: string, recipients: string[], comment: string) =>
  api<Created | undefined>('POST', `/api/nodes/${at(uuid)}`, { share_copy_with: recipients, ...(comment ? { comment } : {}) });

interface GroupEntry {
  group_uuid: string;
  group_name: string;
  is_admin: boolean;
}

/** Every group the caller may name: all of the organization's when the server allows it, else their own. */
async function groupsToName(): Promise<GroupEntry[]> {
  try {
    return await api<GroupEntry[]>('GET', '/api/groups?show=all');
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) return api<GroupEntry[]>('GET', '/api/groups');
    throw err;
  }
}

/** The people and groups the caller may share with (never the caller). */
export async function people(selfUuid: string): Promise<Person[]> {
  const [users, groups] = await Promise.all([api<Array<{ uuid: string; fullname: string; email: string }>>('GET', '/api/users?format=short_active'), groupsToName()]);
  return [
    ...users.filter((u) => u.uuid !== selfUuid).map((u) => ({ uuid: u.uuid, name: u.fullname, detail: u.email, group: false })),
    ...groups.map((g) => ({ uuid: g.group_uuid, name: g.group_name, detail: '', group: true })),
  ];
}

/** The caller's incoming shares, then each of their groups' that has some. */
export async function incoming(): Promise<IncomingBox[]> {
  const [own, groups] = await Promise.all([api<IncomingShare[]>('GET', '/api/user/pending_incoming'), api<GroupEntry[]>('GET', '/api/groups')]);
  const boxes: IncomingBox[] = [{ items: own }];
  for (const group of groups) {
    const items = await api<IncomingShare[]>('GET', `/api/groups/${at(group.group_uuid)}/pending_incoming`);
    if (items.length === 0) continue;
    const details = await api<{ accept_incoming: string }>('GET', `/api/groups/${at(group.group_uuid)}`);
    boxes.push({ group: { uuid: group.group_uuid, name: group.group_name, mayAnswer: group.is_admin || details.accept_incoming === 'members' }, items });
  }
  return boxes;
}

export const answerIncoming = (groupUuid: string | undefined, uuid: string, action: 'accept' | 'reject') =>
  api<{ node_uuid?: string }>('PUT', groupUuid ? `/api/groups/${at(groupUuid)}/pending_incoming` : '/api/user/pending_incoming', { uuid, action });

export const pendingToDecide = () => api<ShareRequest[]>('GET', '/api/pending_shares');
export const myRequests = () => api<ShareRequest[]>('GET', '/api/my_pending_shares');
export const decide = (uuid: string, status: 'approved' | 'rejected', comment: string) =>
  api<ShareRequest>('PUT', `/api/pending_shares/${at(uuid)}/approval`, { status, ...(comment ? { comment } : {}) });
export const withdraw = (uuid: string) => api<ShareRequest>('DELETE', `/api/my_pending_shares/${at(uuid)}`);
