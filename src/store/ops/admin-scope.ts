/**
 * Who an administrator may act on (docs/api.md "Administrator endpoints"). Every /api/admin call needs
 * `is_admin` (403, before anything else is looked at), and a session opened with the account
 * password, not an app password (403; policy.ts decides both for every route). The built-in admin acts on any
 * organization (`org_id`); other administrators only inside their own: naming another
 * organization is 403, and users and groups of another organization are unknown to them (404).
 */
import type { StoreContext } from '../context.js';
import { getGroup, type GroupRow, getOrganization, type OrganizationRow } from '../storage/groups.js';
import { isUuid } from '../storage/nodes.js';
import { getUserByUuid, type UserRow } from '../storage/users.js';
import { forbidden, notFound, StoreHttpError } from '../envelope.js';
import { groupNotFound } from '../access.js';
import { orgQuerySchema } from '../schemas/users.js';
import type { AuthenticatedUser } from '../sessions.js';
import { parseInput } from './input.js';

export const userNotFound = (): StoreHttpError => notFound('user not found');
export const organizationNotFound = (): StoreHttpError => notFound('organization not found');

/** `is_admin`, again at the operation (policy.ts admits the route; an app-password session is refused there). */
export function requireAdmin(caller: AuthenticatedUser): void {
  if (!caller.isAdmin) throw forbidden('administrator privileges required');
}

export function requireBuiltinAdmin(caller: AuthenticatedUser): void {
  requireAdmin(caller);
  if (!caller.isBuiltin) throw forbidden('only the built-in admin manages organizations');
}

/** The organization an admin call works on: `org_id` of the query, else the caller's own. */
export async function targetOrganization(ctx: StoreContext, caller: AuthenticatedUser, query: unknown): Promise<OrganizationRow> {
  const orgId = parseInput(orgQuerySchema, query).org_id ?? caller.orgId;
  if (!caller.isBuiltin && orgId !== caller.orgId) throw forbidden('org_id: only the built-in admin may act on another organization');
  const org = await getOrganization(ctx.storage.sql, orgId);
  if (!org) throw organizationNotFound();
  return org;
}

function mayAdminister(caller: AuthenticatedUser, orgId: string): boolean {
  return caller.isBuiltin || orgId === caller.orgId;
}

/** A user the caller may administer, or 404: unknown, malformed and other-organization look the same. */
export async function administeredUser(ctx: StoreContext, caller: AuthenticatedUser, rawUuid: string): Promise<UserRow> {
  const user = isUuid(rawUuid) ? (await getUserByUuid(ctx.storage.sql, rawUuid.toLowerCase())) : undefined;
  if (!user || !mayAdminister(caller, user.org_id)) throw userNotFound();
  return user;
}

/** A group the caller may administer, or 404 as for users. */
export async function administeredGroup(ctx: StoreContext, caller: AuthenticatedUser, rawUuid: string): Promise<GroupRow> {
  const group = isUuid(rawUuid) ? (await getGroup(ctx.storage.sql, rawUuid.toLowerCase())) : undefined;
  if (!group || !mayAdminister(caller, group.org_id)) throw groupNotFound();
  return group;
}
