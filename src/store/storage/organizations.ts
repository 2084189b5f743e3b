/**
 * Organization rows (migration 008). An organization separates users and groups (ops/ decide
 * what that means for each endpoint); this module only keeps the rows and counts what is in one.
 */
import type { Sql } from './sql.js';

export const DEFAULT_ORG = 'default';

export interface OrganizationRow {
  id: string;
  name: string;
  allow_unlimited_quota: number;
  created: number;
  updated: number;
}

export async function getOrganization(sql: Sql, id: string): Promise<OrganizationRow | undefined> {
  return (await sql.get('SELECT * FROM organizations WHERE id = ?', [id])) as OrganizationRow | undefined;
}

export async function listOrganizations(sql: Sql): Promise<OrganizationRow[]> {
  return (await sql.all('SELECT * FROM organizations ORDER BY id')) as OrganizationRow[];
}

export async function insertOrganization(sql: Sql, org: { id: string; name: string; allowUnlimitedQuota: boolean; nowMs: number }): Promise<void> {
  (await sql.run('INSERT INTO organizations (id, name, allow_unlimited_quota, created, updated) VALUES (?, ?, ?, ?, ?)', [org.id,
    org.name,
    org.allowUnlimitedQuota ? 1 : 0,
    org.nowMs,
    org.nowMs]));
}

export async function updateOrganization(sql: Sql, id: string, patch: { name?: string; allowUnlimitedQuota?: boolean }, nowMs: number): Promise<void> {
  (await sql.run(`UPDATE organizations SET name = COALESCE(?, name), allow_unlimited_quota = COALESCE(?, allow_unlimited_quota), updated = ?
     WHERE id = ?`, [patch.name ?? null, patch.allowUnlimitedQuota === undefined ? null : patch.allowUnlimitedQuota ? 1 : 0, nowMs, id]));
}

export async function deleteOrganization(sql: Sql, id: string): Promise<void> {
  (await sql.run('DELETE FROM organizations WHERE id = ?', [id]));
}

export interface OrganizationCounts {
  users: number;
  groups: number;
  /** Users with disk_quota -1 (unlimited by policy). */
  unlimitedUsers: number;
}

export async function countsOf(sql: Sql, id: string): Promise<OrganizationCounts> {
  return (await sql.get(`SELECT (SELECT COUNT(*) FROM users WHERE org_id = @id) AS users,
              (SELECT COUNT(*) FROM groups WHERE org_id = @id) AS groups,
              (SELECT COUNT(*) FROM users WHERE org_id = @id AND disk_quota = -1) AS unlimitedUsers`, { id })) as OrganizationCounts;
}
