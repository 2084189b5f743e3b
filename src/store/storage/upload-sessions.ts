/**
 * The storage layer's repository of resumable-upload sessions: the UploadSessionRepository
 * contract (contracts/upload-sessions.ts) over the `dav_uploads` and `dav_upload_parts` tables
 * (migrations 021, 024) through one `Sql` handle, SQLite or PostgreSQL, in the store's database or
 * in a bridge's own bridge.sqlite. Owns these tables only; never touches a part's bytes.
 *
 * The quota reservation: every change that makes a session hold more (create with a total,
 * reserve) reads what the scope's live sessions hold and writes its own in ONE transaction.
 * SQLite runs one writer at a time. PostgreSQL runs them SERIALIZABLE, and the dialect queues
 * transactions naming one scope (serializeOn: an advisory lock taken before the snapshot), so two
 * instances reserving the scope's last bytes at once run one after the other and the second sees
 * the first: it is refused rather than retried. Refusals are returned from a transaction that
 * wrote nothing, never thrown out of it (see dav-locks.ts on why a rollback is avoided).
 */
import type { UploadClaim, UploadLimits, UploadPart, UploadProtocol, UploadRefusal, UploadSession, UploadSessionRepository } from '../../contracts/upload-sessions.js';
import type { Sql } from './sql.js';

interface SessionRow {
  upload_key: string;
  owner: string;
  name: string;
  protocol: string;
  destination: string | null;
  total_bytes: number | null;
  scope: string;
  reserved_bytes: number;
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

const SESSION_COLUMNS = 'upload_key, owner, name, protocol, destination, total_bytes, scope, reserved_bytes, created_ms, expires_ms, claimed_until';

/** What a session holds of its scope's quota: its declared total or what its parts hold, whichever is more. */
const HELD = 'CASE WHEN COALESCE(total_bytes, 0) > reserved_bytes THEN total_bytes ELSE reserved_bytes END';

/** The transaction queue of one scope's reservations (PostgreSQL's serializeOn; SQLite has one writer anyway). */
const scopeLane = (scope: string): string => `upload-scope:${scope}`;

function toSession(row: SessionRow): UploadSession {
  return {
    key: row.upload_key,
    owner: row.owner,
    name: row.name,
    protocol: row.protocol as UploadProtocol,
    destination: row.destination ?? undefined,
    totalBytes: row.total_bytes === null ? undefined : Number(row.total_bytes),
    scope: row.scope,
    reservedBytes: Number(row.reserved_bytes),
    createdMs: Number(row.created_ms),
    expiresMs: Number(row.expires_ms),
    claimedUntilMs: row.claimed_until === null ? undefined : Number(row.claimed_until),
  };
}

export class SqlUploadSessionRepository implements UploadSessionRepository {
  constructor(private readonly sql: Sql) {}

  async create(session: UploadSession, limits: UploadLimits = {}): Promise<true | UploadRefusal> {
    const now = session.createdMs;
    return this.sql.transaction(
      async (tx) => {
        // An expired session of that name is the sweep's to remove; it must not block a new one.
        const old = await tx.get<{ upload_key: string; expires_ms: number }>('SELECT upload_key, expires_ms FROM dav_uploads WHERE owner = ? AND name = ?', [session.owner, session.name]);
        if (old && Number(old.expires_ms) > now) return { refused: 'exists' };
        if (limits.maxOpenPerOwner !== undefined) {
          const open = Number((await tx.get<{ n: number }>('SELECT count(*) AS n FROM dav_uploads WHERE owner = ? AND expires_ms > ?', [session.owner, now]))?.n ?? 0);
          if (open >= limits.maxOpenPerOwner) return { refused: 'open-uploads', open };
        }
        const needed = session.totalBytes ?? 0;
        if (limits.availableBytes !== undefined && needed > 0) {
          const held = await heldIn(tx, session.scope, now);
          if (held + needed > limits.availableBytes) return { refused: 'quota', neededBytes: needed, heldBytes: held, availableBytes: limits.availableBytes };
        }
        if (old) {
          // Renamed out of the way, not removed: its bytes are still the sweep's to remove. No
          // client's name holds a "/" (it is one path segment).
          await tx.run('UPDATE dav_uploads SET name = ? WHERE upload_key = ?', [`expired/${old.upload_key}`, old.upload_key]);
        }
        const inserted = await tx.run(
          `INSERT INTO dav_uploads (${SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, NULL) ON CONFLICT DO NOTHING`,
          [session.key, session.owner, session.name, session.protocol, session.destination ?? null, session.totalBytes ?? null, session.scope, session.createdMs, session.expiresMs],
        );
        return inserted.changes === 1 ? true : { refused: 'exists' };
      },
      { serializeOn: [`uploads-of:${session.owner}`, scopeLane(session.scope)] },
    );
  }

  async reserve(key: string, claim: UploadClaim, limits: UploadLimits, nowMs: number): Promise<{ claimedBytes: number } | UploadRefusal> {
    // The scope never changes: read before the transaction, to queue it behind the scope's others.
    const scope = (await this.sql.get<{ scope: string }>('SELECT scope FROM dav_uploads WHERE upload_key = ?', [key]))?.scope;
    if (scope === undefined) return { refused: 'gone' };
    return this.sql.transaction(
      async (tx) => {
        const row = await tx.get<{ total_bytes: number | null; reserved_bytes: number; parts_in_flight: number }>(
          'SELECT total_bytes, reserved_bytes, parts_in_flight FROM dav_uploads WHERE upload_key = ? AND expires_ms > ?',
          [key, nowMs],
        );
        if (!row) return { refused: 'gone' };
        const reserved = Number(row.reserved_bytes);
        const total = claim.totalBytes ?? (row.total_bytes === null ? 0 : Number(row.total_bytes));
        let claimed = 0;
        if (claim.part) {
          const { name, bytes } = claim.part;
          if (limits.maxParts !== undefined) {
            const others = Number((await tx.get<{ n: number }>('SELECT count(*) AS n FROM dav_upload_parts WHERE upload_key = ? AND name <> ?', [key, name]))?.n ?? 0);
            const parts = others + Number(row.parts_in_flight) + 1;
            if (parts > limits.maxParts) return { refused: 'parts', parts: parts - 1 };
          }
          // A part sent again replaces its stored copy: only what it adds to that copy is new.
          const stored = await tx.get<{ size_bytes: number }>('SELECT size_bytes FROM dav_upload_parts WHERE upload_key = ? AND name = ?', [key, name]);
          claimed = Math.max(0, bytes - Number(stored?.size_bytes ?? 0));
        }
        const before = Math.max(row.total_bytes === null ? 0 : Number(row.total_bytes), reserved);
        const after = Math.max(total, reserved + claimed);
        if (limits.availableBytes !== undefined && after > before) {
          const held = await heldIn(tx, scope, nowMs, key);
          if (held + after > limits.availableBytes) return { refused: 'quota', neededBytes: after, heldBytes: held, availableBytes: limits.availableBytes };
        }
        await tx.run('UPDATE dav_uploads SET reserved_bytes = ?, total_bytes = ?, parts_in_flight = parts_in_flight + ? WHERE upload_key = ?', [
          reserved + claimed,
          claim.totalBytes ?? row.total_bytes,
          claim.part ? 1 : 0,
          key,
        ]);
        return { claimedBytes: claimed };
      },
      { serializeOn: [scopeLane(scope)] },
    );
  }

  async unreserve(key: string, claimedBytes: number): Promise<void> {
    await this.sql.run(
      `UPDATE dav_uploads SET reserved_bytes = CASE WHEN reserved_bytes > ? THEN reserved_bytes - ? ELSE 0 END,
         parts_in_flight = CASE WHEN parts_in_flight > 0 THEN parts_in_flight - 1 ELSE 0 END WHERE upload_key = ?`,
      [claimedBytes, claimedBytes, key],
    );
  }

  reservedIn(scope: string, nowMs: number, exceptKey?: string): Promise<number> {
    return heldIn(this.sql, scope, nowMs, exceptKey);
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

  async putPart(key: string, part: UploadPart, nowMs: number, claimedBytes?: number): Promise<string | undefined | false> {
    return this.sql.transaction(async (tx) => {
      const live = await tx.get<{ one: number }>('SELECT 1 AS one FROM dav_uploads WHERE upload_key = ? AND expires_ms > ?', [key, nowMs]);
      if (!live) return false;
      const old = await tx.get<{ part_key: string; size_bytes: number }>('SELECT part_key, size_bytes FROM dav_upload_parts WHERE upload_key = ? AND name = ?', [key, part.name]);
      // What the parts hold changes by the new copy less the old; the claim made for it is settled.
      const change = part.sizeBytes - Number(old?.size_bytes ?? 0) - (claimedBytes ?? 0);
      await tx.run(
        `UPDATE dav_uploads SET reserved_bytes = CASE WHEN reserved_bytes + ? > 0 THEN reserved_bytes + ? ELSE 0 END,
           parts_in_flight = CASE WHEN parts_in_flight > 0 THEN parts_in_flight - ? ELSE 0 END WHERE upload_key = ?`,
        [change, change, claimedBytes === undefined ? 0 : 1, key],
      );
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
      const row = await tx.get<{ part_key: string; size_bytes: number }>('SELECT part_key, size_bytes FROM dav_upload_parts WHERE upload_key = ? AND name = ?', [key, name]);
      if (row) {
        await tx.run('DELETE FROM dav_upload_parts WHERE upload_key = ? AND name = ?', [key, name]);
        const bytes = Number(row.size_bytes);
        await tx.run('UPDATE dav_uploads SET reserved_bytes = CASE WHEN reserved_bytes > ? THEN reserved_bytes - ? ELSE 0 END WHERE upload_key = ?', [bytes, bytes, key]);
      }
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

  async releaseAll(): Promise<number> {
    return (await this.sql.run('UPDATE dav_uploads SET claimed_until = NULL WHERE claimed_until IS NOT NULL')).changes;
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

/** What the live sessions of `scope` hold together, `exceptKey` left out. */
async function heldIn(sql: Sql, scope: string, nowMs: number, exceptKey = ''): Promise<number> {
  const row = await sql.get<{ bytes: number | string | null }>(`SELECT SUM(${HELD}) AS bytes FROM dav_uploads WHERE scope = ? AND expires_ms > ? AND upload_key <> ?`, [scope, nowMs, exceptKey]);
  return Number(row?.bytes ?? 0);
}
