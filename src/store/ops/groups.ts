/**
 * Groups as their members see them (docs/api.md "Groups for members"): the caller's groups (and with
 * `show=all` every group of the organization, when `store.shareWithAllGroups` allows it), one
 * group's details, and the group administrators' profile update, whose `broadcast_message` is
 * emailed to the active members. Members, tags and the WebDrive endpoint have their own modules.
 */
import type { StoreContext } from '../context.js';
import { filterInOrder, mapInOrder } from '../in-order.js';
import { groupsOfOrg, membersOf, membershipsInOrg, touchGroup, type Permissions } from '../storage/groups.js';
import { getUserByUuid } from '../storage/users.js';
import { forbidden } from '../envelope.js';
import { resolveGroup, type GroupAccess } from '../access.js';
import { groupProfileSchema, groupsQuerySchema, type GroupDetails, type GroupEntry } from '../schemas/groups.js';
import type { AuthenticatedUser } from '../sessions.js';
import { saveGroupChanges } from './admin-groups.js';
import { decodeAvatar, storeAvatar } from './avatars.js';
import { groupEntry, groupProfile, permissionFields } from './group-records.js';
import { parseInput } from './input.js';
import { wantsAlert } from './notifications.js';
import { emailNotConfigured } from './mail.js';

/** The caller's groups by name; with `show=all`, every group of the caller's organization (403 when the server does not allow it). */
export async function listMyGroups(ctx: StoreContext, caller: AuthenticatedUser, query: unknown): Promise<GroupEntry[]> {
  const { show } = parseInput(groupsQuerySchema, query);
  const mine = await membershipsInOrg(ctx.storage.sql, caller.orgId, caller.userUuid);
  if (show !== 'all') return mapInOrder(mine, (m) => groupEntry(ctx, { uuid: m.groupUuid, name: m.groupName }, m));
  if (!ctx.config.store.shareWithAllGroups) throw forbidden('show: listing all groups is disabled on this server (store.shareWithAllGroups)');
  const byGroup = new Map<string, Permissions>(mine.map((m) => [m.groupUuid, m]));
  return mapInOrder(await groupsOfOrg(ctx.storage.sql, caller.orgId), (group) => groupEntry(ctx, group, byGroup.get(group.uuid)));
}

async function details(ctx: StoreContext, access: GroupAccess): Promise<GroupDetails> {
  return { ...(await groupProfile(ctx, access.group)), ...permissionFields(access.membership), is_admin: access.isGroupAdmin };
}

export async function getGroupDetails(ctx: StoreContext, caller: AuthenticatedUser, groupUuid: string): Promise<GroupDetails> {
  return details(ctx, await resolveGroup(ctx.storage.sql, caller, groupUuid, 'member'));
}

export interface ProfileUpdate {
  details: GroupDetails;
  /** How many members the broadcast message went to; undefined when there was none. */
  broadcastRecipients?: number;
}

/**
 * Group administrators change the profile fields given. Every field is checked before anything
 * changes; the changes are saved in one transaction, then `broadcast_message` (if any) is sent.
 * Without a mailer it is refused first (409 `email_not_configured`, nothing changed); a mail
 * server that refuses it answers 502 `email_failed` after the other changes were saved.
 */
export async function updateGroupProfile(ctx: StoreContext, caller: AuthenticatedUser, groupUuid: string, body: unknown): Promise<ProfileUpdate> {
  const access = await resolveGroup(ctx.storage.sql, caller, groupUuid, 'admin');
  const input = parseInput(groupProfileSchema, body);
  const avatar = input.avatar === undefined ? undefined : decodeAvatar(input.avatar, ctx.config.store.avatarMaxBytes);
  const { storage: { sql }, clock, mailer } = ctx;
  if (input.broadcast_message !== undefined && !mailer) throw emailNotConfigured();
  const now = clock.now();
  const saved = await sql.transaction(async (tx) => {
    const row = await saveGroupChanges(tx, access.group, {
      name: input.name,
      description: input.description,
      acceptIncoming: input.accept_incoming,
      privateSharesNotify: input.private_shares_notify,
    }, now);
    if (avatar === undefined) return row;
    await storeAvatar(tx, row.uuid, avatar, now);
    await touchGroup(tx, row.uuid, now);
    return { ...row, updated: now };
  });
  const update: ProfileUpdate = { details: await details(ctx, { ...access, group: saved }) };
  if (input.broadcast_message !== undefined && mailer) {
    update.broadcastRecipients = await broadcast(ctx, caller, saved.uuid, saved.name, input.broadcast_message);
  }
  return update;
}

/**
 * Emails `message` to every active member with an email address (the built-in admin's is
 * `admin` until changed, so it has none) who has not turned off email alerts about their groups'
 * resources (`email_alert_group_owned`, on by default).
 */
async function broadcast(ctx: StoreContext, caller: AuthenticatedUser, groupUuid: string, groupName: string, message: string): Promise<number> {
  const to = (
    await filterInOrder(
      await membersOf(ctx.storage.sql, groupUuid),
      async (member) => member.isActive && member.email.includes('@') && (await wantsAlert(ctx, member.userUuid, 'email_alert_group_owned')),
    )
  ).map((member) => member.email);
  if (to.length === 0 || !ctx.mailer) return 0;
  const sender = (await getUserByUuid(ctx.storage.sql, caller.userUuid))?.fullname ?? 'a group administrator';
  await ctx.mailer.send({
    to,
    subject: `[${groupName}] Message from ${sender}`,
    text: `${message}\n\n-- \nSent by ${sender} to the members of the group "${groupName}".\n`,
  });
  return to.length;
}
