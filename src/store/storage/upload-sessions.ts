/**
 * The storage layer's repository of resumable-upload sessions: the UploadSessionRepository
 * contract (contracts/upload-sessions.ts) over the `dav_uploads` and `dav_upload_parts` tables
 * (migration 021) through one `Sql` handle, SQLite or PostgreSQL, in the store's database or in
 * a bridge's own bridge.sqlite. Owns these tables only; never touches a part's bytes.
 */
import type { UploadPart, UploadProtocol, UploadSession, UploadSessionRepository } from '../../contracts/upload-sessions.js';
import type { Sql } from './sql.js';

interface SessionRow {
  upload_key: string;
  owner: string;
  name: string;
  protocol: string;
  destination: string | null;
  total_bytes: number | null;
  created_ms: number;
  expires_ms: number;
  claimed_until: number | null;
}

interface PartRow {
  name: string;
  seq: number;
  start_byte: number | null;
  size_bytes: number;
  part_key: string;
}

const SESSION_COLUMNS = 'upload_key, owner, name, protocol, destination, total_bytes, created_ms, expires_ms, claimed_until';

function toSession(row: SessionRow): UploadSession {
  return {
    key: row.upload_key,
    owner: row.owner,
    name: row.name,
    protocol: row.protocol as UploadProtocol,
    destination: row.destination ?? undefined,
    totalBytes: row.total_bytes === null ? undefined : Number(row.total_bytes),
    createdMs: Number(row.created_ms),
    expiresMs: Number(row.expires_ms),
    claimedUntilMs: row.claimed_until === null ? undefined : Number(row.claimed_until),
  };
}

export class SqlUploadSessionRepository implements UploadSessionRepository {
  constructor(private readonly sql: Sql) {}

  async create(session: UploadSession): Promise<boolean> {
    return this.sql.transaction(async (tx) => {
      // An expired session of that name is the sweep's to remove; it must not block a new one.
      const old = await tx.get<{ upload_key: string; expires_ms: number }>('SELECT upload_key, expires_ms FROM dav_uploads WHERE owner = ? AND name = ?', [session.owner, session.name]);
      if (old && Number(old.expires_ms) > session.createdMs) return false;
      if (old) {
        // Renamed out of the way, not removed: its bytes are still the sweep's to remove. No
        // client's name holds a "/" (it is one path segment).
        await tx.run('UPDATE dav_uploads SET name = ? WHERE upload_key = ?', [`expired/${old.upload_key}`, old.upload_key]);
      }
      const inserted = await tx.run(
        `INSERT INTO dav_uploads (${SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL) ON CONFLICT DO NOTHING`,
        [session.key, session.owner, session.name, session.protocol, session.destination ?? null, session.totalBytes ?? null, session.createdMs, session.expiresMs],
      );
      return inserted.changes === 1;
    });
  }

  async find(owner: string, name: string, nowMs: number): Promise<UploadSession | undefined> {
    const row = await this.sql.get<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM dav_uploads WHERE owner = ? AND name = ? AND expires_ms > ?`, [owner, name, nowMs]);
    return row ? toSession(row) : undefined;
  }

  async list(owner: string, nowMs: number): Promise<UploadSession[]> {
    const rows = await this.sql.all<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM dav_uploads WHERE owner = ? AND expires_ms > ? ORDER BY name`, [owner, nowMs]);
    return rows.filter((r) => !r.name.includes('/')).map(toSession);
  }

  async update(key: string, change: { destination?: string; totalBytes?: number; expiresMs: number }): Promise<void> {
    const sets = ['expires_ms = ?'];
    const params: Array<string | number> = [change.expiresMs];
    if (change.destination !== undefined) {
      sets.push('destination = ?');
      params.push(change.destination);
    }
    if (change.totalBytes !== undefined) {
      sets.push('total_bytes = ?');
      params.push(change.totalBytes);
    }
    await this.sql.run(`UPDATE dav_uploads SET ${sets.join(', ')} WHERE upload_key = ?`, [...params, key]);
  }

  async putPart(key: string, part: UploadPart, nowMs: number): Promise<string | undefined | false> {
    return this.sql.transaction(async (tx) => {
      const live = await tx.get<{ one: number }>('SELECT 1 AS one FROM dav_uploads WHERE upload_key = ? AND expires_ms > ?', [key, nowMs]);
      if (!live) return false;
      const old = await tx.get<{ part_key: string }>('SELECT part_key FROM dav_upload_parts WHERE upload_key = ? AND name = ?', [key, part.name]);
      await tx.run(
        `INSERT INTO dav_upload_parts (upload_key, name, seq, start_byte, size_bytes, part_key) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (upload_key, name) DO UPDATE SET seq = excluded.seq, start_byte = excluded.start_byte, size_bytes = excluded.size_bytes, part_key = excluded.part_key`,
        [key, part.name, part.seq, part.startByte ?? null, part.sizeBytes, part.partKey],
      );
      return old?.part_key;
    });
  }

  async removePart(key: string, name: string): Promise<string | undefined> {
    return this.sql.transaction(async (tx) => {
      const row = await tx.get<{ part_key: string }>('SELECT part_key FROM dav_upload_parts WHERE upload_key = ? AND name = ?', [key, name]);
      if (row) await tx.run('DELETE FROM dav_upload_parts WHERE upload_key = ? AND name = ?', [key, name]);
      return row?.part_key;
    });
  }

  async partBytes(key: string, except?: string): Promise<number> {
    const row = await this.sql.get<{ bytes: number | null }>('SELECT SUM(size_bytes) AS bytes FROM dav_upload_parts WHERE upload_key = ? AND name <> ?', [key, except ?? '']);
    return Number(row?.bytes ?? 0);
  }

  async parts(key: string): Promise<UploadPart[]> {
    const rows = await this.sql.all<PartRow>('SELECT name, seq, start_byte, size_bytes, part_key FROM dav_upload_parts WHERE upload_key = ? ORDER BY seq, name', [key]);
    return rows.map((r) => ({
      name: r.name,
      seq: Number(r.seq),
      startByte: r.start_byte === null ? undefined : Number(r.start_byte),
      sizeBytes: Number(r.size_bytes),
      partKey: r.part_key,
    }));
  }

  async claim(key: string, nowMs: number, untilMs: number, renew = false): Promise<boolean> {
    const free = renew ? 'claimed_until IS NOT NULL' : '(claimed_until IS NULL OR claimed_until <= ?)';
    const result = await this.sql.run(`UPDATE dav_uploads SET claimed_until = ? WHERE upload_key = ? AND expires_ms > ? AND ${free}`, renew ? [untilMs, key, nowMs] : [untilMs, key, nowMs, nowMs]);
    return result.changes === 1;
  }

  async release(key: string): Promise<void> {
    await this.sql.run('UPDATE dav_uploads SET claimed_until = NULL WHERE upload_key = ?', [key]);
  }

  async remove(key: string): Promise<boolean> {
    return this.sql.transaction(async (tx) => {
      await tx.run('DELETE FROM dav_upload_parts WHERE upload_key = ?', [key]);
      return (await tx.run('DELETE FROM dav_uploads WHERE upload_key = ?', [key])).changes > 0;
    });
  }

  async expired(nowMs: number, limit: number): Promise<UploadSession[]> {
    const rows = await this.sql.all<SessionRow>(`SELECT ${SESSION_COLUMNS} FROM dav_uploads WHERE expires_ms <= ? ORDER BY expires_ms LIMIT ?`, [nowMs, limit]);
    return rows.map(toSession);
  }
}
