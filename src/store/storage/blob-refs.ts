/**
 * Blob reference counts (table blobs): one reference per revision row that names the blob, and
 * the bytes of a small blob kept in its row. Below nodes.ts and revisions.ts, which both change
 * rows that refer to blobs. Call inside the transaction that changes those rows; unlink files
 * only after that transaction committed.
 */
import type { Sql } from './sql.js';

export const ADD_BLOB_REF = `INSERT INTO blobs (hash, size, refs, data, sha1, md5) VALUES (@hash, @size, @count, @inline, @sha1, @md5)
     ON CONFLICT(hash) DO UPDATE SET refs = blobs.refs + excluded.refs,
       sha1 = COALESCE(blobs.sha1, excluded.sha1), md5 = COALESCE(blobs.md5, excluded.md5)`;

/**
 * Adds `count` references to a blob, creating its row at the first. `inline` holds the bytes of
 * a small blob kept in the database (blobs/staging.ts stage()); when the blob exists already (the
 * same bytes uploaded before, inline or as a file) the stored form is kept and `inline` dropped.
 */
export async function addBlobRef(sql: Sql, hash: string, sizeBytes: number, count = 1, inline?: Buffer, checksums?: { sha1?: string | undefined; md5?: string | undefined }): Promise<void> {
  await sql.run(ADD_BLOB_REF, { hash, size: sizeBytes, count, inline: inline ?? null, sha1: checksums?.sha1 ?? null, md5: checksums?.md5 ?? null });
}

/** The bytes of a blob kept in the database; undefined for one kept as a file (or unknown). */
export async function inlineBlob(sql: Sql, hash: string): Promise<Buffer | undefined> {
  const row = (await sql.get('SELECT data FROM blobs WHERE hash = ?', [hash])) as { data: Buffer | null } | undefined;
  return row?.data ?? undefined;
}

/** Drops one reference; returns true when the blob is now unreferenced (row deleted). */
export async function releaseBlobRef(sql: Sql, hash: string): Promise<boolean> {
  await sql.run('UPDATE blobs SET refs = refs - 1 WHERE hash = ?', [hash]);
  const gone = await sql.run('DELETE FROM blobs WHERE hash = ? AND refs <= 0', [hash]);
  return gone.changes > 0;
}

export async function isBlobReferenced(sql: Sql, hash: string): Promise<boolean> {
  return (await sql.get('SELECT 1 FROM blobs WHERE hash = ?', [hash])) !== undefined;
}
