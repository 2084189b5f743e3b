/**
 * The calls of the group and administration pages (issue 24 items 6 and 7): groups for members
 * and their administrators (/api/groups/...), administrators' users, groups, organizations and
 * approvers (/api/admin/...), and the server's edition and version (/api/admin/about). Records as
 * docs/api.md "Records" gives them, typed from the store's own record types (type-only imports:
 * nothing of the store is bundled); every call through api(), so refusals arrive as ApiError.
 */
import type { AdminUserRecord } from '../../store/schemas/admin.js';
import type { AdminGroupRecord, GroupDetails, GroupEntry, MemberRecord, TagRecord } from '../../store/schemas/groups.js';
import type { OrganizationRecord } from '../../store/schemas/organizations.js';
import type { ApproverRecord } from '../../store/schemas/shares.js';
import { api, ApiError, errorText } from './client.js';
import { t } from '../strings/index.js';
import { sizeText } from '../strings/units.js';

export const NODE_PERMISSIONS = ['read', 'write', 'delete', 'download'] as const;
export const TAG_PERMISSIONS = ['create', 'delete'] as const;
export const SHARE_PERMISSIONS = ['public_create', 'public_delete', 'private_create', 'private_delete', 'upload_link_create', 'upload_link_delete'] as const;
export const SHARE_TYPES = ['public', 'private', 'upload', 'share_copy'] as const;
export type ShareType = (typeof SHARE_TYPES)[number];

/** A membership's permissions, as the member records and Group entries carry them. */
export type Permissions = Pick<MemberRecord, 'is_admin' | 'node_permissions' | 'tag_permissions' | 'share_permissions'>;
export type { GroupEntry, GroupDetails };
export type Member = MemberRecord;
/** A tag as it is added (name and class); the store's record adds who made it and when. */
export type Tag = Pick<TagRecord, 'name' | 'class'>;

export interface GroupWebdrive {
  endpoint: string | null;
  url: string | null;
  show_url_to_group_members: boolean;
}

export interface DirectoryUser {
  uuid: string;
  fullname: string;
  email: string;
}

export type AdminUser = AdminUserRecord;
export type AdminGroup = AdminGroupRecord;
export type Organization = OrganizationRecord;
export type Approver = ApproverRecord & { share_type: ShareType };

export interface About {
  edition: string;
  version: string;
  builtin_admin: boolean;
  org_id: string;
}

const g = (uuid: string) => `/api/groups/${encodeURIComponent(uuid)}`;
const au = (uuid: string) => `/api/admin/users/${encodeURIComponent(uuid)}`;
const ag = (uuid: string) => `/api/admin/groups/${encodeURIComponent(uuid)}`;
const org = (orgId: string | undefined) => (orgId ? `?org_id=${encodeURIComponent(orgId)}` : '');

export const groupsApi = {
  mine: () => api<GroupEntry[]>('GET', '/api/groups'),
  details: (uuid: string) => api<GroupDetails>('GET', g(uuid)),
  members: (uuid: string) => api<Member[]>('GET', `${g(uuid)}/users`),
  addMember: (uuid: string, user: string, permissions: Partial<Permissions>) => api<Member>('POST', `${g(uuid)}/users`, { user, permissions }),
  setMember: (uuid: string, user: string, permissions: Permissions) => api<Member>('PUT', `${g(uuid)}/users/${encodeURIComponent(user)}`, permissions),
  removeMember: (uuid: string, user: string) => api('DELETE', `${g(uuid)}/users/${encodeURIComponent(user)}`),
  tags: (uuid: string) => api<Tag[]>('GET', `${g(uuid)}/tags`),
  addTag: (uuid: string, tag: Tag) => api<Tag>('POST', `${g(uuid)}/tags`, tag),
  webdrive: (uuid: string) => api<GroupWebdrive>('GET', `${g(uuid)}/webdrive`),
  setWebdrive: (uuid: string, endpoint: string, show: boolean) => api<GroupWebdrive>('POST', `${g(uuid)}/webdrive`, { endpoint, show_url_to_group_members: show }),
  deleteWebdrive: (uuid: string) => api('DELETE', `${g(uuid)}/webdrive`),
  /** The caller's organization's active users (to add as members or approvers). */
  directory: () => api<DirectoryUser[]>('GET', '/api/users?format=short_active'),
};

export const adminApi = {
  about: () => api<About>('GET', '/api/admin/about'),
  users: (orgId?: string) => api<AdminUser[]>('GET', `/api/admin/users${org(orgId)}`),
  createUser: (body: { fullname: string; email: string; password: string; disk_quota: number; is_active: boolean; is_admin: boolean }, orgId?: string) =>
    api<{ uuid: string }>('POST', `/api/admin/users${org(orgId)}`, body),
  updateUser: (uuid: string, body: Partial<{ password: string; disk_quota: number; is_active: boolean; twofa: false }>) => api('PUT', au(uuid), body),
  groups: (orgId?: string) => api<AdminGroup[]>('GET', `/api/admin/groups${org(orgId)}`),
  createGroup: (body: { name: string; disk_quota: number }, orgId?: string) => api<AdminGroup>('POST', `/api/admin/groups${org(orgId)}`, body),
  updateGroup: (uuid: string, body: { disk_quota: number }) => api<AdminGroup>('PUT', ag(uuid), body),
  deleteGroup: (uuid: string, transferTo: string | undefined) =>
    api<{ transferred_to: string; folder: string } | undefined>('DELETE', `${ag(uuid)}?confirm_delete=yes${transferTo ? `&transfer_data_to=${encodeURIComponent(transferTo)}` : ''}`),
  groupMembers: (uuid: string) => api<Member[]>('GET', `${ag(uuid)}/users`),
  addGroupMember: (uuid: string, user: string, permissions: Partial<Permissions>) => api<Member>('POST', `${ag(uuid)}/users`, { user, permissions }),
  removeGroupMember: (uuid: string, user: string) => api('DELETE', `${ag(uuid)}/users/${encodeURIComponent(user)}`),
  organizations: () => api<Organization[]>('GET', '/api/admin/organizations'),
  organization: (id: string) => api<Organization>('GET', `/api/admin/organizations/${encodeURIComponent(id)}`),
  createOrganization: (body: { id: string; name: string; allow_unlimited_quota: boolean }) => api<Organization>('POST', '/api/admin/organizations', body),
  deleteOrganization: (id: string) => api('DELETE', `/api/admin/organizations/${encodeURIComponent(id)}`),
  approvers: (kind: 'users' | 'groups', uuid: string) => api<Approver[]>('GET', `/api/admin/${kind}/${encodeURIComponent(uuid)}/approvers`),
  addApprover: (kind: 'users' | 'groups', uuid: string, approver: string, type: ShareType) =>
    api<Approver[]>('POST', `/api/admin/${kind}/${encodeURIComponent(uuid)}/approvers`, { approver_id: approver, share_type: type }),
  removeApprover: (kind: 'users' | 'groups', uuid: string, approver: string, type: ShareType) =>
    api('DELETE', `/api/admin/${kind}/${encodeURIComponent(uuid)}/approvers/${encodeURIComponent(approver)}/${type}`),
};

/** errorText, with a quota below what is stored said in sizes a person reads (the store says bytes). */
export function quotaErrorText(error: unknown): string {
  const used = error instanceof ApiError ? /must exceed current usage \((\d+) bytes\)/.exec(error.message)?.[1] : undefined;
  return used === undefined ? errorText(error) : t.admin.users.quotaBelowUsage(sizeText(Number(used)));
}
