/**
 * The records group answers are made of (docs/store-semantics.md, "Groups and administration"):
 * the Group entry, the group profile, the member record (docs/api.md "Records"), and the mapping
 * between the Membership permission object and the stored permissions. One builder per shape, so the member
 * endpoints and the administrator endpoints answer the same fields.
 */
import type { StoreContext } from '../context.js';
import { memberCount, type GroupRow, type MemberWithUser, type Permissions } from '../storage/groups.js';
import type { AdminGroupRecord, GroupEntry, GroupProfile, MemberRecord, PermissionFields } from '../schemas/groups.js';
import { avatarUrl } from './avatars.js';

/** What a new member holds when the request leaves a field out: reading the group's nodes, nothing more. */
export const NEW_MEMBER: Permissions = { isAdmin: false, nodePermissions: ['read'], tagPermissions: [], sharePermissions: [] };

/** `current` with the fields given in a Membership permission object replaced. */
export function withPermissionFields(current: Permissions, fields: PermissionFields | undefined): Permissions {
  return {
    isAdmin: fields?.is_admin ?? current.isAdmin,
    nodePermissions: fields?.node_permissions ?? current.nodePermissions,
    tagPermissions: fields?.tag_permissions ?? current.tagPermissions,
    sharePermissions: fields?.share_permissions ?? current.sharePermissions,
  };
}

export function permissionFields(p: Permissions | undefined): Pick<GroupEntry, 'is_admin' | 'node_permissions' | 'tag_permissions' | 'share_permissions'> {
  return {
    is_admin: p?.isAdmin ?? false,
    node_permissions: p?.nodePermissions ?? [],
    tag_permissions: p?.tagPermissions ?? [],
    share_permissions: p?.sharePermissions ?? [],
  };
}

/** docs/api.md "Group entry"; a caller who is not a member (show=all) gets `is_admin` false and empty lists. */
export async function groupEntry(ctx: StoreContext, group: { uuid: string; name: string }, membership: Permissions | undefined): Promise<GroupEntry> {
  return { group_uuid: group.uuid, group_name: group.name, ...permissionFields(membership), avatar: await avatarUrl(ctx, group.uuid) };
}

export async function groupProfile(ctx: StoreContext, group: GroupRow): Promise<GroupProfile> {
  return {
    group_uuid: group.uuid,
    group_name: group.name,
    description: group.description,
    avatar: await avatarUrl(ctx, group.uuid),
    disk_quota: group.disk_quota,
    disk_used: group.disk_used,
    accept_incoming: group.accept_incoming,
    private_shares_notify: group.private_shares_notify,
    member_count: await memberCount(ctx.storage.sql, group.uuid),
    created: group.created,
    updated: group.updated,
  };
}

export async function adminGroupRecord(ctx: StoreContext, group: GroupRow): Promise<AdminGroupRecord> {
  return { ...(await groupProfile(ctx, group)), org_id: group.org_id };
}

export async function memberRecord(ctx: StoreContext, member: MemberWithUser): Promise<MemberRecord> {
  return {
    user_uuid: member.userUuid,
    fullname: member.fullname,
    email: member.email,
    avatar: await avatarUrl(ctx, member.userUuid),
    is_active: member.isActive,
    ...permissionFields(member),
    added: member.addedMs,
  };
}
