/**
 * Organizations (docs/extensions.md, "Organizations"): list, create, read, update and delete.
 * Only the built-in admin manages them; another administrator may read their own. The
 * `default` organization always exists. An organization with users or groups cannot be deleted,
 * and unlimited quotas cannot be forbidden while a user has one. Its retention settings
 * (keep_revisions, keep_revision_days, trash_days; null: the global ones) are applied by
 * ops/retention.ts.
 */
import type { StoreContext } from '../context.js';
import { withSql } from '../context.js';
import { mapInOrder } from '../in-order.js';
import {
  countsOf,
  DEFAULT_ORG,
  deleteOrganization as deleteOrganizationRow,
  getOrganization as getOrganizationRow,
  insertOrganization,
  listOrganizations as listOrganizationRows,
  updateOrganization as updateOrganizationRow,
  type OrganizationRow,
} from '../storage/groups.js';
import { conflict, forbidden } from '../envelope.js';
import { createOrganizationSchema, updateOrganizationSchema, type OrganizationRecord } from '../schemas/organizations.js';
import type { AuthenticatedUser } from '../sessions.js';
import { organizationNotFound, requireAdmin, requireBuiltinAdmin } from './admin-scope.js';
import { parseInput } from './input.js';

async function record(ctx: StoreContext, org: OrganizationRow): Promise<OrganizationRecord> {
  const counts = await countsOf(ctx.storage.sql, org.id);
  return {
    id: org.id,
    name: org.name,
    allow_unlimited_quota: org.allow_unlimited_quota === 1,
    keep_revisions: org.keep_revisions,
    keep_revision_days: org.keep_revision_days,
    trash_days: org.trash_days,
    user_count: counts.users,
    group_count: counts.groups,
    created: org.created,
    updated: org.updated,
  };
}

async function existing(ctx: StoreContext, id: string): Promise<OrganizationRow> {
  const org = await getOrganizationRow(ctx.storage.sql, id);
  if (!org) throw organizationNotFound();
  return org;
}

export async function listOrganizations(ctx: StoreContext, caller: AuthenticatedUser): Promise<OrganizationRecord[]> {
  requireBuiltinAdmin(caller);
  return mapInOrder(await listOrganizationRows(ctx.storage.sql), (org) => record(ctx, org));
}

export async function createOrganization(ctx: StoreContext, caller: AuthenticatedUser, body: unknown): Promise<OrganizationRecord> {
  requireBuiltinAdmin(caller);
  const input = parseInput(createOrganizationSchema, body);
  const { storage: { sql }, clock } = ctx;
  await sql.transaction(async (tx) => {
    if (await getOrganizationRow(tx, input.id)) throw conflict('id: an organization with this id exists', 'organization_exists');
    await insertOrganization(tx, {
      id: input.id,
      name: input.name,
      allowUnlimitedQuota: input.allow_unlimited_quota ?? false,
      keepRevisions: input.keep_revisions,
      keepRevisionDays: input.keep_revision_days,
      trashDays: input.trash_days,
      nowMs: clock.now(),
    });
  });
  return record(ctx, await existing(ctx, input.id));
}

/** The built-in admin reads any organization; another administrator only their own (403 otherwise). */
export async function getOrganization(ctx: StoreContext, caller: AuthenticatedUser, id: string): Promise<OrganizationRecord> {
  requireAdmin(caller);
  if (!caller.isBuiltin && id !== caller.orgId) throw forbidden('only the built-in admin may read another organization');
  return record(ctx, await existing(ctx, id));
}

export async function updateOrganization(ctx: StoreContext, caller: AuthenticatedUser, id: string, body: unknown): Promise<OrganizationRecord> {
  requireBuiltinAdmin(caller);
  const input = parseInput(updateOrganizationSchema, body);
  const { storage: { sql }, clock } = ctx;
  await sql.transaction(async (tx) => {
    const txCtx = withSql(ctx, tx);
    await existing(txCtx, id);
    const unlimited = (await countsOf(tx, id)).unlimitedUsers;
    if (input.allow_unlimited_quota === false && unlimited > 0) {
      throw conflict(`allow_unlimited_quota: ${unlimited} user(s) of the organization have no limit (disk_quota 0 or -1); give them a quota first`, 'organization_in_use');
    }
    await updateOrganizationRow(
      tx,
      id,
      {
        name: input.name,
        allowUnlimitedQuota: input.allow_unlimited_quota,
        keepRevisions: input.keep_revisions,
        keepRevisionDays: input.keep_revision_days,
        trashDays: input.trash_days,
      },
      clock.now(),
    );
  });
  return record(ctx, await existing(ctx, id));
}

export async function deleteOrganization(ctx: StoreContext, caller: AuthenticatedUser, id: string): Promise<void> {
  requireBuiltinAdmin(caller);
  const { sql } = ctx.storage;
  await sql.transaction(async (tx) => {
    const txCtx = withSql(ctx, tx);
    await existing(txCtx, id);
    if (id === DEFAULT_ORG) throw forbidden('the default organization cannot be deleted');
    const counts = await countsOf(tx, id);
    if (counts.users > 0 || counts.groups > 0) {
      throw conflict(`the organization still has ${counts.users} user(s) and ${counts.groups} group(s); delete them first`, 'organization_in_use');
    }
    await deleteOrganizationRow(tx, id);
  });
}
