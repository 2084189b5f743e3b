/**
 * The rows retention reads and removes (docs/operations.md "Retention"): every owner with its
 * organization's settings, an owner's revisions the rules let go, its expired trash items, and
 * the removal of one old revision. No rules of its own beyond the two the SQL states (never the
 * current revision; a trash item by its `trashed_at`): ops/retention.ts decides what applies to
 * whom, in which batches and transactions.
 */
import type { Sql } from './sql.js';
import type { NodeRow, OwnerType } from './nodes.js';
import { releaseBlobRef } from './blob-refs.js';
import { keyRows } from './sql-lists.js';

/** An owner of files with its organization's retention columns (NULL: the global value). */
export interface RetentionOwnerRow {
  owner_type: OwnerType;
  uuid: string;
  org_id: string;
  keep_revisions: number | null;
  keep_revision_days: number | null;
  trash_days: number | null;
}

/** Up to `limit` owners of `type` after `afterUuid`, by UUID (keyset: bounded pages). */
export function retentionOwners(sql: Sql, type: OwnerType, afterUuid: string, limit: number): Promise<RetentionOwnerRow[]> {
  const table = type === 'User' ? 'users' : 'groups';
  return sql.all<RetentionOwnerRow>(
    `SELECT '${type}' AS owner_type, t.uuid, t.org_id, o.keep_revisions, o.keep_revision_days, o.trash_days
       FROM ${table} t JOIN organizations o ON o.id = t.org_id
      WHERE t.uuid > ? ORDER BY t.uuid LIMIT ?`,
    [afterUuid, limit],
  );
}

/** Which old revisions may go: more than `keep` newer ones exist (0: no such rule), uploaded before `createdBefore` (null: no such rule). */
export interface RevisionRule {
  keep: number;
  createdBefore: number | null;
}

export interface PrunableRevision {
  node_uuid: string;
  revision: number;
  hash: string;
  size: number;
}

/** A page of the owner's files (their UUIDs, from ownerFileUuids). */
export type FileRange = readonly string[];

/**
 * The UUIDs of the owner's files, in order: retention cuts them into ranges of a hundred, so each
 * query after this one looks at a hundred files, not at all of them (one sort per owner and run;
 * 36 bytes a file).
 */
export async function ownerFileUuids(sql: Sql, ownerUuid: string): Promise<string[]> {
  const rows = await sql.all<{ uuid: string }>("SELECT uuid FROM nodes WHERE owner_uuid = ? AND type = 'File' ORDER BY uuid", [ownerUuid]);
  return rows.map((r) => r.uuid);
}

/** The FROM and WHERE of the revisions of files in `range` that `rule` lets go, with their parameters. */
function prunableFrom(sql: Sql, ownerUuid: string, rule: RevisionRule, range: FileRange): { sql: string; params: unknown[] } {
  const files = keyRows(sql, range);
  const conditions: string[] = [];
  const params: unknown[] = [files.param, ownerUuid];
  if (rule.keep > 0) {
    // "Keep the newest N, the current included": at least N revisions of the file are newer.
    conditions.push('(SELECT COUNT(*) FROM revisions newer WHERE newer.node_uuid = r.node_uuid AND newer.revision > r.revision) >= ?');
    params.push(rule.keep);
  }
  if (rule.createdBefore !== null) {
    conditions.push('r.created < ?');
    params.push(rule.createdBefore);
  }
  // CROSS JOIN: SQLite then starts from the hundred keys (primary key lookups) instead of the
  // owner's index, whatever its statistics say; PostgreSQL plans it as any join.
  return {
    sql: `FROM ${files.source} CROSS JOIN nodes n JOIN revisions r ON r.node_uuid = n.uuid
      WHERE n.uuid = k AND n.owner_uuid = ? AND n.type = 'File' AND r.revision < n.revision
        AND ${conditions.join(' AND ')}`,
    params,
  };
}

/**
 * Up to `limit` revisions of the owner's files in `range` (still the owner's) that `rule` lets go, oldest first per
 * file. The file's current revision is never among them; with both rules a revision must
 * satisfy both. A rule with neither part selects nothing.
 */
export function prunableRevisions(sql: Sql, ownerUuid: string, rule: RevisionRule, range: FileRange, limit: number): Promise<PrunableRevision[]> {
  if (rule.keep <= 0 && rule.createdBefore === null) return Promise.resolve([]);
  const from = prunableFrom(sql, ownerUuid, rule, range);
  return sql.all<PrunableRevision>(`SELECT r.node_uuid, r.revision, r.blob_hash AS hash, r.size ${from.sql} ORDER BY r.node_uuid, r.revision LIMIT ?`, [
    ...from.params,
    limit,
  ]);
}

/** How many revisions prunableRevisions would give for `range` without a limit, and their bytes (a dry run). */
export async function prunableTotals(sql: Sql, ownerUuid: string, rule: RevisionRule, range: FileRange): Promise<{ count: number; bytes: number }> {
  if (rule.keep <= 0 && rule.createdBefore === null) return { count: 0, bytes: 0 };
  const from = prunableFrom(sql, ownerUuid, rule, range);
  const row = await sql.get<{ count: number; bytes: number }>(`SELECT COUNT(*) AS count, COALESCE(SUM(r.size), 0) AS bytes ${from.sql}`, from.params);
  return { count: Number(row?.count ?? 0), bytes: Number(row?.bytes ?? 0) };
}

/**
 * Deletes one revision row and releases its blob reference, only if this call deleted the row
 * (another instance's prune may have just done it). Never the file's current revision: the
 * condition is part of the delete. Returns whether it was removed and whether its blob lost its
 * last reference. The caller adjusts the owner's usage by the sizes removed.
 */
export async function deleteOldRevision(sql: Sql, rev: Pick<PrunableRevision, 'node_uuid' | 'revision' | 'hash'>): Promise<{ removed: boolean; unreferenced: boolean }> {
  const gone = await sql.run(
    'DELETE FROM revisions WHERE node_uuid = ? AND revision = ? AND revision < (SELECT n.revision FROM nodes n WHERE n.uuid = ?)',
    [rev.node_uuid, rev.revision, rev.node_uuid],
  );
  if (gone.changes === 0) return { removed: false, unreferenced: false };
  return { removed: true, unreferenced: await releaseBlobRef(sql, rev.hash) };
}

export interface TrashItemRow {
  uuid: string;
  trashed_at: number;
}

/** Up to `limit` direct children of the owner's trash moved there before `trashedBefore`, after `afterUuid` by UUID. */
export function expiredTrashItems(sql: Sql, ownerUuid: string, trashedBefore: number, afterUuid: string, limit: number): Promise<TrashItemRow[]> {
  return sql.all<TrashItemRow>(
    `SELECT n.uuid, n.trashed_at FROM nodes t JOIN nodes n ON n.parent_uuid = t.uuid
      WHERE t.owner_uuid = ? AND t.top_kind = 'trash' AND n.trashed_at IS NOT NULL AND n.trashed_at < ? AND n.uuid > ?
      ORDER BY n.uuid LIMIT ?`,
    [ownerUuid, trashedBefore, afterUuid, limit],
  );
}

/**
 * The node `uuid` if it is still a direct child of a trash folder, moved there before
 * `trashedBefore` (read inside the transaction that purges it: a restore committed meanwhile
 * makes this undefined).
 */
export function stillExpiredTrashItem(sql: Sql, uuid: string, trashedBefore: number): Promise<NodeRow | undefined> {
  return sql.get<NodeRow>(
    `SELECT n.* FROM nodes n JOIN nodes t ON t.uuid = n.parent_uuid
      WHERE n.uuid = ? AND t.top_kind = 'trash' AND n.trashed_at IS NOT NULL AND n.trashed_at < ?`,
    [uuid, trashedBefore],
  );
}
