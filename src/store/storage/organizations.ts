/**
 * Organization rows (migration 008). An organization separates users and groups (ops/ decide
 * what that means for each endpoint); this module only keeps the rows and counts what is in one.
 */
import type { Db } from './dialects/sqlite-open.js';

export const DEFAULT_ORG = 'default';

export interface OrganizationRow {
  id: string;
  name: string;
  allow_unlimited_quota: number;
  created: number;
  updated: number;
}

export function getOrganization(db: Db, id: string): OrganizationRow | undefined {
  return db.prepare('SELECT * FROM organizations WHERE id = ?').get(id) as OrganizationRow | undefined;
}

export function listOrganizations(db: Db): OrganizationRow[] {
  return db.prepare('SELECT * FROM organizations ORDER BY id').all() as OrganizationRow[];
}

export function insertOrganization(db: Db, org: { id: string; name: string; allowUnlimitedQuota: boolean; nowMs: number }): void {
  db.prepare('INSERT INTO organizations (id, name, allow_unlimited_quota, created, updated) VALUES (?, ?, ?, ?, ?)').run(
    org.id,
    org.name,
    org.allowUnlimitedQuota ? 1 : 0,
    org.nowMs,
    org.nowMs,
  );
}

export function updateOrganization(db: Db, id: string, patch: { name?: string; allowUnlimitedQuota?: boolean }, nowMs: number): void {
  db.prepare(
    `UPDATE organizations SET name = COALESCE(?, name), allow_unlimited_quota = COALESCE(?, allow_unlimited_quota), updated = ?
     WHERE id = ?`,
  ).run(patch.name ?? null, patch.allowUnlimitedQuota === undefined ? null : patch.allowUnlimitedQuota ? 1 : 0, nowMs, id);
}

export function deleteOrganization(db: Db, id: string): void {
  db.prepare('DELETE FROM organizations WHERE id = ?').run(id);
}

export interface OrganizationCounts {
  users: number;
  groups: number;
  /** Users with disk_quota -1 (unlimited by policy). */
  unlimitedUsers: number;
}

export function countsOf(db: Db, id: string): OrganizationCounts {
  return db
    .prepare(
      `SELECT (SELECT COUNT(*) FROM users WHERE org_id = @id) AS users,
              (SELECT COUNT(*) FROM groups WHERE org_id = @id) AS groups,
              (SELECT COUNT(*) FROM users WHERE org_id = @id AND disk_quota = -1) AS unlimitedUsers`,
    )
    .get({ id }) as OrganizationCounts;
}
