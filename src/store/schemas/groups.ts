/**
 * Wire schemas of the group endpoints (docs/api.md "Groups for members", the group half of
 * "Administrator endpoints") and the records they answer (docs/store-semantics.md, "Groups and
 * administration"). Bodies are strict; a violation names the field. Rules that need the
 * database (unique names, quota against usage, membership) live in ops/.
 */
import { z } from 'zod';

/** docs/api.md "Permission values". */
export const NODE_PERMISSIONS = ['read', 'write', 'delete', 'download'] as const;
export const TAG_PERMISSIONS = ['create', 'delete'] as const;
export const SHARE_PERMISSIONS = [
  'public_create',
  'public_delete',
  'private_create',
  'private_delete',
  'upload_link_create',
  'upload_link_delete',
] as const;

/** A list of permission values: unknown values are refused by name, duplicates dropped, the order of docs/api.md "Permission values" kept. */
function permissionList<T extends string>(allowed: readonly [T, ...T[]]) {
  return z
    .array(
      z.enum(allowed, { error: (issue) => `unknown permission ${JSON.stringify(issue.input)}; allowed: ${allowed.join(', ')}` }),
      { error: 'must be an array of strings' },
    )
    .max(32)
    .transform((values) => allowed.filter((value) => values.includes(value)));
}

/** docs/api.md "Membership permission object"; every field optional (PUT changes only what is given). */
export const permissionFieldsSchema = z.strictObject({
  is_admin: z.boolean({ error: 'is_admin must be a boolean' }).optional(),
  node_permissions: permissionList(NODE_PERMISSIONS).optional(),
  tag_permissions: permissionList(TAG_PERMISSIONS).optional(),
  share_permissions: permissionList(SHARE_PERMISSIONS).optional(),
});
export type PermissionFields = z.infer<typeof permissionFieldsSchema>;

const uuidField = (field: string) => z.string({ error: `${field} must be a string` }).min(1, `${field} must not be empty`).max(64);

export const addMemberSchema = z.strictObject({ user: uuidField('user'), permissions: permissionFieldsSchema.optional() });

/** POST /api/admin/users/{user_uuid}/groups: `groups` keyed by group UUID. */
export const assignGroupsSchema = z.strictObject({
  groups: z.record(z.string().max(64), permissionFieldsSchema, { error: 'groups must be an object keyed by group UUID' }),
});

/** docs/api.md "Limits": a group name has at least 3 characters. */
const groupName = z
  .string({ error: 'name must be a string' })
  .trim()
  .min(3, 'name must have at least 3 characters')
  .max(100, 'name must have at most 100 characters');
/** docs/api.md "Limits": a group description has 3 to 1024 characters. */
const description = z
  .string({ error: 'description must be a string' })
  .trim()
  .min(3, 'description must have 3 to 1024 characters')
  .max(1024, 'description must have 3 to 1024 characters');
/** Bytes; 0 is unlimited (-1 is for users only). */
const groupQuota = z
  .number({ error: 'disk_quota must be an integer' })
  .int('disk_quota must be an integer')
  .min(0, 'disk_quota must be 0 (unlimited) or a positive number of bytes')
  .max(Number.MAX_SAFE_INTEGER);
const inboxPolicy = (field: string) => z.enum(['members', 'admins'], { error: `${field} must be "members" or "admins"` });

export const adminCreateGroupSchema = z.strictObject({ name: groupName, disk_quota: groupQuota, description: description.optional() });

export const adminUpdateGroupSchema = z.strictObject({
  name: groupName.optional(),
  description: description.optional(),
  disk_quota: groupQuota.optional(),
});

/** docs/api.md "Group profile fields (writable)". */
export const groupProfileSchema = z.strictObject({
  name: groupName.optional(),
  description: description.optional(),
  avatar: z.string({ error: 'avatar must be a string' }).optional(),
  broadcast_message: z
    .string({ error: 'broadcast_message must be a string' })
    .trim()
    .min(1, 'broadcast_message must not be empty')
    .max(10_000, 'broadcast_message must have at most 10000 characters')
    .optional(),
  accept_incoming: inboxPolicy('accept_incoming').optional(),
  private_shares_notify: inboxPolicy('private_shares_notify').optional(),
});

export const groupsQuerySchema = z.object({
  show: z.literal('all', { error: 'show must be "all" or absent' }).optional(),
});

export const tagSchema = z.strictObject({
  name: z.string({ error: 'name must be a string' }).trim().min(1, 'name must not be empty').max(64, 'name must have at most 64 characters'),
  class: z.string({ error: 'class must be a string' }),
});

export const tagsQuerySchema = z.object({
  limit: z.coerce
    .number({ error: 'limit must be an integer' })
    .int('limit must be an integer')
    .min(0, 'limit must be 0 or more')
    .max(100_000, 'limit must be at most 100000')
    .optional(),
});

const shareFlag = (field: string) => z.enum(['true', 'false'], { error: `${field} must be true or false` }).transform((v) => v === 'true');

/** Query of DELETE /api/admin/users/{uuid} and /api/admin/groups/{uuid}. */
export const deleteOwnerQuerySchema = z.object({
  confirm_delete: z.literal('yes', { error: 'confirm_delete must be "yes"' }),
  transfer_data_to: z.string({ error: 'transfer_data_to must be a UUID' }).max(64).optional(),
  delete_all_public_shares: shareFlag('delete_all_public_shares').optional(),
  delete_all_private_shares: shareFlag('delete_all_private_shares').optional(),
});

/** docs/api.md "Group entry". */
export interface GroupEntry {
  group_uuid: string;
  group_name: string;
  is_admin: boolean;
  node_permissions: string[];
  tag_permissions: string[];
  share_permissions: string[];
  avatar: string;
}

/** The group itself, as members and administrators see it. */
export interface GroupProfile {
  group_uuid: string;
  group_name: string;
  description: string;
  avatar: string;
  disk_quota: number;
  disk_used: number;
  accept_incoming: 'members' | 'admins';
  private_shares_notify: 'members' | 'admins';
  member_count: number;
  created: number;
  updated: number;
}

/** `data` of GET /api/groups/{uuid}: the profile with the caller's own Group entry fields. */
export type GroupDetails = GroupProfile & Omit<GroupEntry, 'group_uuid' | 'group_name' | 'avatar'>;

/** `data` of the admin group answers: the profile with its organization. */
export type AdminGroupRecord = GroupProfile & { org_id: string };

/** One member (both member lists, and the one-member answers). */
export interface MemberRecord {
  user_uuid: string;
  fullname: string;
  email: string;
  avatar: string;
  is_active: boolean;
  is_admin: boolean;
  node_permissions: string[];
  tag_permissions: string[];
  share_permissions: string[];
  added: number;
}

export interface TagRecord {
  name: string;
  class: string;
  creator_uuid: string | null;
  created: number;
}
