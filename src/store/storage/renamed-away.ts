/**
 * The storage layer's RenameAwayRepository (contracts/renamed-away.ts) over the `dav_renamed_away`
 * table (migration 020), through one `Sql` handle, SQLite or PostgreSQL. Owns that table only.
 */
import type { RenameAwayMemo, RenameAwayRepository } from '../../contracts/renamed-away.js';
import type { Sql } from './sql.js';

interface Row {
  kind: RenameAwayMemo['kind'];
  user_id: string;
  folder: string;
  name: string;
  node_id: string;
  other_name: string;
  revision: number | string | null;
  at_ms: number | string;
}

export class SqlRenameAwayRepository implements RenameAwayRepository {
  constructor(private readonly sql: Sql) {}

  async remember(memo: RenameAwayMemo, staleBeforeMs: number): Promise<void> {
    await this.sql.transaction(async (tx) => {
      await tx.run('DELETE FROM dav_renamed_away WHERE at_ms < ?', [staleBeforeMs]);
      await tx.run(
        `INSERT INTO dav_renamed_away (kind, user_id, folder, name, node_id, other_name, revision, at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (kind, user_id, folder, name) DO UPDATE SET node_id = excluded.node_id, other_name = excluded.other_name, revision = excluded.revision, at_ms = excluded.at_ms`,
        [memo.kind, memo.userId, memo.folder, memo.name, memo.nodeId, memo.otherName, memo.revision ?? null, memo.atMs],
      );
    });
  }

  async take(kind: RenameAwayMemo['kind'], userId: string, folder: string, name: string, sinceMs: number): Promise<RenameAwayMemo | undefined> {
    const key = [kind, userId, folder, name];
    const row = await this.sql.get<Row>('SELECT * FROM dav_renamed_away WHERE kind = ? AND user_id = ? AND folder = ? AND name = ?', key);
    if (!row) return undefined;
    // The row read is the row deleted (same node and time), so of racing takers one sees a change.
    const { changes } = await this.sql.run('DELETE FROM dav_renamed_away WHERE kind = ? AND user_id = ? AND folder = ? AND name = ? AND node_id = ? AND at_ms = ?', [
      ...key,
      row.node_id,
      row.at_ms,
    ]);
    const atMs = Number(row.at_ms);
    if (changes !== 1 || atMs < sinceMs) return undefined;
    return {
      kind: row.kind,
      userId: row.user_id,
      folder: row.folder,
      name: row.name,
      nodeId: row.node_id,
      otherName: row.other_name,
      revision: row.revision === null ? undefined : Number(row.revision),
      atMs,
    };
  }
}
