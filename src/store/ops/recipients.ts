/**
 * Whom something may be shared with (share_copy_with, private shares): users and groups of the
 * sharer's organization, named by UUID. A UUID of another organization answers exactly like an
 * unknown one (404 naming it), so nothing leaks across organizations. Never the sharer.
 */
import type { StoreContext } from '../context.js';
import { getGroup } from '../storage/groups.js';
import type { Recipient } from '../storage/shares.js';
import { isUuid } from '../storage/nodes.js';
import { getUserByUuid } from '../storage/users.js';
import { invalid, notFound } from '../envelope.js';
import type { AuthenticatedUser } from '../sessions.js';

export interface NamedRecipient extends Recipient {
  name: string;
}

/** The record a recipient appears as in answers. */
export interface RecipientRecord {
  uuid: string;
  type: 'User' | 'Group';
  name: string;
}

export const recipientRecord = (r: NamedRecipient): RecipientRecord => ({ uuid: r.uuid, type: r.type, name: r.name });

/** A user or group of `orgId`, or undefined. */
export async function recipientInOrg(ctx: StoreContext, orgId: string, uuid: string): Promise<NamedRecipient | undefined> {
  const user = await getUserByUuid(ctx.storage.sql, uuid);
  if (user) return user.org_id === orgId ? { type: 'User', uuid, name: user.fullname } : undefined;
  const group = await getGroup(ctx.storage.sql, uuid);
  return group?.org_id === orgId ? { type: 'Group', uuid, name: group.name } : undefined;
}

/**
 * Resolves the UUIDs of `field` (duplicates dropped, order kept): 400 for a malformed one or the
 * caller, 404 for one that is no user or group of the caller's organization.
 */
export async function resolveRecipients(ctx: StoreContext, caller: AuthenticatedUser, raw: readonly string[], field: string): Promise<NamedRecipient[]> {
  const seen = new Set<string>();
  const resolved: NamedRecipient[] = [];
  for (const [index, value] of raw.entries()) {
    if (!isUuid(value)) throw invalid(`${field}.${index}: must be the UUID of a user or group`);
    const uuid = value.toLowerCase();
    if (seen.has(uuid)) continue;
    seen.add(uuid);
    if (uuid === caller.userUuid) throw invalid(`${field}.${index}: you cannot share with yourself`);
    const recipient = await recipientInOrg(ctx, caller.orgId, uuid);
    if (!recipient) throw notFound(`${field}: no user or group ${uuid} in your organization`);
    resolved.push(recipient);
  }
  return resolved;
}
