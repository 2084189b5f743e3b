/**
 * The database side of the blob backends (blobs/blob-backend.ts BlobLedger): which blobs rows
 * refer to, and the intents of uploads and deletes (migration 011). Each method is one statement
 * or one transaction, so the check and the marker of beginDelete and beginUpload cannot
 * interleave, in this process or another instance on the same database.
 */
import { randomUUID } from 'node:crypto';
import type { BlobLedger, UploadIntent } from '../blobs/blob-backend.js';
import { isBlobReferenced } from './blobs.js';
import type { Sql } from './sql.js';

interface IntentRow {
  id: string;
  hash: string;
  key: string;
  upload_id: string | null;
  expires: number;
}

export function storageBlobLedger(sql: Sql): BlobLedger {
  return {
    isReferenced: (hash) => isBlobReferenced(sql, hash),
    beginUpload: (hash, key, nowMs, expiresMs) =>
      sql.transaction(async (tx) => {
        const deleting = await tx.get("SELECT 1 FROM blob_intents WHERE hash = ? AND kind = 'delete' AND expires > ?", [hash, nowMs]);
        if (deleting) return undefined;
        const id = randomUUID();
        await tx.run("INSERT INTO blob_intents (id, kind, hash, key, created, expires) VALUES (?, 'upload', ?, ?, ?, ?)", [id, hash, key, nowMs, expiresMs]);
        return id;
      }),
    updateUpload: async (id, change) => {
      if (change.uploadId === undefined && change.expiresMs === undefined) return;
      await sql.transaction(async (tx) => {
        if (change.uploadId !== undefined) await tx.run('UPDATE blob_intents SET upload_id = ? WHERE id = ?', [change.uploadId, id]);
        if (change.expiresMs !== undefined) await tx.run('UPDATE blob_intents SET expires = ? WHERE id = ?', [change.expiresMs, id]);
      });
    },
    endUpload: async (id) => {
      await sql.run('DELETE FROM blob_intents WHERE id = ?', [id]);
    },
    expiredUploads: async (nowMs, limit) =>
      (
        await sql.all<IntentRow>(
          "SELECT id, hash, key, upload_id, expires FROM blob_intents WHERE kind = 'upload' AND expires <= ? ORDER BY expires LIMIT ?",
          [nowMs, limit],
        )
      ).map((row): UploadIntent => ({ id: row.id, hash: row.hash, key: row.key, uploadId: row.upload_id ?? undefined, expiresMs: row.expires })),
    beginDelete: (hash, nowMs, expiresMs) =>
      sql.transaction(async (tx) => {
        // Markers a crash left behind (a delete never finished) expire; drop them here.
        await tx.run("DELETE FROM blob_intents WHERE kind = 'delete' AND expires <= ?", [nowMs]);
        if (await isBlobReferenced(tx, hash)) return undefined;
        const busy = await tx.get('SELECT 1 FROM blob_intents WHERE hash = ? AND expires > ?', [hash, nowMs]);
        if (busy) return undefined;
        const id = randomUUID();
        await tx.run("INSERT INTO blob_intents (id, kind, hash, key, created, expires) VALUES (?, 'delete', ?, '', ?, ?)", [id, hash, nowMs, expiresMs]);
        return id;
      }),
    endDelete: async (id) => {
      await sql.run('DELETE FROM blob_intents WHERE id = ?', [id]);
    },
  };
}
