/**
 * The database side of the blob backends (blobs/blob-backend.ts BlobLedger) over SQLite: which
 * blobs rows refer to, and the intents of uploads and deletes (migration 011). Each method is
 * one statement or one immediate transaction, so the check and the marker of beginDelete and
 * beginUpload cannot interleave, in this process or another one on the same file.
 */
import { randomUUID } from 'node:crypto';
import type { BlobLedger, UploadIntent } from '../blobs/blob-backend.js';
import { isBlobReferenced } from './blobs.js';
import type { Db } from './dialects/sqlite-open.js';

interface IntentRow {
  id: string;
  hash: string;
  key: string;
  upload_id: string | null;
  expires: number;
}

export function sqliteBlobLedger(db: Db): BlobLedger {
  const beginUpload = db.transaction((hash: string, key: string, nowMs: number, expiresMs: number): string | undefined => {
    const deleting = db.prepare("SELECT 1 FROM blob_intents WHERE hash = ? AND kind = 'delete' AND expires > ?").get(hash, nowMs);
    if (deleting) return undefined;
    const id = randomUUID();
    db.prepare("INSERT INTO blob_intents (id, kind, hash, key, created, expires) VALUES (?, 'upload', ?, ?, ?, ?)").run(id, hash, key, nowMs, expiresMs);
    return id;
  });
  const beginDelete = db.transaction((hash: string, nowMs: number, expiresMs: number): string | undefined => {
    // Markers a crash left behind (a delete never finished) expire; drop them here.
    db.prepare("DELETE FROM blob_intents WHERE kind = 'delete' AND expires <= ?").run(nowMs);
    if (isBlobReferenced(db, hash)) return undefined;
    const busy = db.prepare('SELECT 1 FROM blob_intents WHERE hash = ? AND expires > ?').get(hash, nowMs);
    if (busy) return undefined;
    const id = randomUUID();
    db.prepare("INSERT INTO blob_intents (id, kind, hash, key, created, expires) VALUES (?, 'delete', ?, '', ?, ?)").run(id, hash, nowMs, expiresMs);
    return id;
  });
  return {
    isReferenced: async (hash) => isBlobReferenced(db, hash),
    beginUpload: async (hash, key, nowMs, expiresMs) => beginUpload.immediate(hash, key, nowMs, expiresMs),
    updateUpload: async (id, change) => {
      if (change.uploadId !== undefined) db.prepare('UPDATE blob_intents SET upload_id = ? WHERE id = ?').run(change.uploadId, id);
      if (change.expiresMs !== undefined) db.prepare('UPDATE blob_intents SET expires = ? WHERE id = ?').run(change.expiresMs, id);
    },
    endUpload: async (id) => {
      db.prepare('DELETE FROM blob_intents WHERE id = ?').run(id);
    },
    expiredUploads: async (nowMs, limit) =>
      (
        db
          .prepare("SELECT id, hash, key, upload_id, expires FROM blob_intents WHERE kind = 'upload' AND expires <= ? ORDER BY expires LIMIT ?")
          .all(nowMs, limit) as IntentRow[]
      ).map(
        (row): UploadIntent => ({ id: row.id, hash: row.hash, key: row.key, uploadId: row.upload_id ?? undefined, expiresMs: row.expires }),
      ),
    beginDelete: async (hash, nowMs, expiresMs) => beginDelete.immediate(hash, nowMs, expiresMs),
    endDelete: async (id) => {
      db.prepare('DELETE FROM blob_intents WHERE id = ?').run(id);
    },
  };
}
