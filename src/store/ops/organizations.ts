/**
 * Organizations (docs/extensions.md, "Organizations"): list, create, read, update and delete.
 * Only the built-in admin manages them; another administrator may read their own. The
 * `default` organization always exists. An organization with users or groups cannot be deleted,
 * and unlimited quotas cannot be forbidden while a user has one.
 */
import type { StoreContext } from '../context.js';
import {
  countsOf,
  DEFAULT_ORG,
  deleteOrganization as deleteOrganizationRow,
  getOrganization as getOrganizationRow,
  insertOrganization,
  listOrganizations as listOrganizationRows,
  updateOrganization as updateOrganizationRow,
  type OrganizationRow,
} from '../storage/organizations.js';
import { conflict, forbidden } from '../envelope.js';
import { createOrganizationSchema, updateOrganizationSchema, type OrganizationRecord } from '../schemas/organizations.js';
import type { AuthenticatedUser } from '../sessions.js';
import { organizationNotFound, requireAdmin, requireBuiltinAdmin } from './admin-scope.js';
import { parseInput } from './input.js';

function record(ctx: StoreContext, org: OrganizationRow): OrganizationRecord {
  const counts = countsOf(ctx.db, org.id);
  return {
    id: org.id,
    name: org.name,
    allow_unlimited_quota: org.allow_unlimited_quota === 1,
    user_count: counts.users,
    group_count: counts.groups,
    created: org.created,
    updated: org.updated,
  };
}

function existing(ctx: StoreContext, id: string): OrganizationRow {
  const org = getOrganizationRow(ctx.db, id);
  if (!org) throw organizationNotFound();
  return org;
}

export function listOrganizations(ctx: StoreContext, caller: AuthenticatedUser): OrganizationRecord[] {
  requireBuiltinAdmin(caller);
  return listOrganizationRows(ctx.db).map((org) => record(ctx, org));
}

export function createOrganization(ctx: StoreContext, caller: AuthenticatedUser, body: unknown): OrganizationRecord {
  requireBuiltinAdmin(caller);
  const input = parseInput(createOrganizationSchema, body);
  const { db, clock } = ctx;
  db.transaction(() => {
    if (getOrganizationRow(db, input.id)) throw conflict('id: an organization with this id exists', 'organization_exists');
    insertOrganization(db, { id: input.id, name: input.name, allowUnlimitedQuota: input.allow_unlimited_quota ?? false, nowMs: clock.now() });
  })();
  return record(ctx, existing(ctx, input.id));
}

/** The built-in admin reads any organization; another administrator only their own (403 otherwise). */
export function getOrganization(ctx: StoreContext, caller: AuthenticatedUser, id: string): OrganizationRecord {
  requireAdmin(caller);
  if (!caller.isBuiltin && id !== caller.orgId) throw forbidden('only the built-in admin may read another organization');
  return record(ctx, existing(ctx, id));
}

export function updateOrganization(ctx: StoreContext, caller: AuthenticatedUser, id: string, body: unknown): OrganizationRecord {
  requireBuiltinAdmin(caller);
  const input = parseInput(updateOrganizationSchema, body);
  const { db, clock } = ctx;
  db.transaction(() => {
    existing(ctx, id);
    const unlimited = countsOf(db, id).unlimitedUsers;
    if (input.allow_unlimited_quota === false && unlimited > 0) {
      throw conflict(`allow_unlimited_quota: ${unlimited} user(s) of the organization have disk_quota -1; give them a quota first`, 'organization_in_use');
    }
    updateOrganizationRow(db, id, { name: input.name, allowUnlimitedQuota: input.allow_unlimited_quota }, clock.now());
  })();
  return record(ctx, existing(ctx, id));
}

export function deleteOrganization(ctx: StoreContext, caller: AuthenticatedUser, id: string): void {
  requireBuiltinAdmin(caller);
  const { db } = ctx;
  db.transaction(() => {
    existing(ctx, id);
    if (id === DEFAULT_ORG) throw forbidden('the default organization cannot be deleted');
    const counts = countsOf(db, id);
    if (counts.users > 0 || counts.groups > 0) {
      throw conflict(`the organization still has ${counts.users} user(s) and ${counts.groups} group(s); delete them first`, 'organization_in_use');
    }
    deleteOrganizationRow(db, id);
  })();
}
