/**
 * Revisions and blobs: revision rows, owner usage, the blob references a copied tree adds
 * (blob-refs.ts keeps the counts), the blob backends' ledger of intents (sections below), and the
 * rows an upload writes (docs/store-semantics.md, "Upload"): one-shot upload
 * token rows (SQLite: a TEMP table of the connection; PostgreSQL: an UNLOGGED table every
 * instance sees), revision rows, and a new file with its first revision. No rules: ops/files.ts
 * decides what may be uploaded where.
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from './sql.js';
import { ADD_BLOB_REF, addBlobRef, isBlobReferenced } from './blob-refs.js';
import { propagateChange, propagateCte } from './tree-changes.js';
import { findNode, getChildByName, OWNER_TABLE, topKindOf, touch, type NodeLocator, type NodeRow, type OwnerType, type TopLevelKind, type TreeEntry } from './nodes.js';
import type { AdoptedObjects, BlobLedger, UploadIntent } from '../blobs/blob-backend.js';

export interface RevisionRow {
  node_uuid: string;
  revision: number;
  blob_hash: string;
  size: number;
  created: number;
  uploader_uuid: string | null;
}

export interface UploadResult {
  uuid: string;
  name: string;
  revision: number;
  size: number;
  /** The file's numeric id (migration 025; docs/extensions.md "Numeric file ids"). */
  file_id?: number;
}

/** A blob already referenced (addBlobRef), to record at `now`. */
export interface StoredBlob {
  hash: string;
  sizeBytes: number;
  now: number;
}

export interface UploadTokenRow {
  user_uuid: string;
  session_id: string;
  target_uuid: string;
  created: number;
  used: number | null;
}

/** Stores a token's hash, dropping the tokens created before `forgetBefore`. */
export async function insertUploadToken(
  sql: Sql,
  tokenHash: string,
  row: { userUuid: string; sessionId: string; targetUuid: string; createdMs: number },
  forgetBefore: number,
): Promise<void> {
  await sql.run('DELETE FROM upload_tokens WHERE created < ?', [forgetBefore]);
  await sql.run('INSERT INTO upload_tokens (token_hash, user_uuid, session_id, target_uuid, created) VALUES (?, ?, ?, ?, ?)', [
    tokenHash,
    row.userUuid,
    row.sessionId,
    row.targetUuid,
    row.createdMs,
  ]);
}

export function uploadTokenRow(sql: Sql, tokenHash: string): Promise<UploadTokenRow | undefined> {
  return sql.get<UploadTokenRow>('SELECT user_uuid, session_id, target_uuid, created, used FROM upload_tokens WHERE token_hash = ?', [tokenHash]);
}

/** Marks the token used; false when it was used already. */
export async function markUploadTokenUsed(sql: Sql, tokenHash: string, nowMs: number): Promise<boolean> {
  return (await sql.run('UPDATE upload_tokens SET used = ? WHERE token_hash = ? AND used IS NULL', [nowMs, tokenHash])).changes > 0;
}

async function insertRevision(sql: Sql, nodeUuid: string, revision: number, blob: StoredBlob, uploaderUuid: string | null): Promise<void> {
  await sql.run('INSERT INTO revisions (node_uuid, revision, blob_hash, size, created, uploader_uuid) VALUES (?, ?, ?, ?, ?, ?)', [
    nodeUuid,
    revision,
    blob.hash,
    blob.sizeBytes,
    blob.now,
    uploaderUuid,
  ]);
}

/** Adding a blob reference and a revision row, alone and within insertNewFile and insertNextRevision on PostgreSQL. */
// A blob stored before its checksums were computed (migration 019) gets them from the first
// upload of the same bytes that brings them; a reference added by a copy brings none (NULL).
const INSERT_REVISION = 'INSERT INTO revisions (node_uuid, revision, blob_hash, size, created, uploader_uuid) VALUES (@uuid, @revision, @hash, @size, @now, @uploader)';

/** A blob an upload brings: `inline` holds the bytes of a small one kept in its database row (addBlobRef). */
export interface UploadedBlob extends StoredBlob {
  inline?: Buffer | undefined;
  /** SHA-1 and MD5 (hex) computed while staging; absent for a reference added without reading the bytes. */
  sha1?: string | undefined;
  md5?: string | undefined;
}

/**
 * Records `blob` as new file `name` (revision 1) in `folder`: one more reference to the blob,
 * the node, its first revision, the bytes added to the folder owner's usage, the folder touched.
 * The caller checked the name and the quota. On PostgreSQL the five writes are ONE statement
 * (data-modifying CTEs; the foreign keys are checked at its end): every round trip to the
 * server costs a small upload more than the write itself (docs/scale-out.md "Figures").
 */
export async function insertNewFile(sql: Sql, folder: NodeRow, name: string, blob: UploadedBlob, uploaderUuid: string | null): Promise<UploadResult> {
  const uuid = randomUUID();
  const result = { uuid, name, revision: 1, size: blob.sizeBytes };
  if (sql.dialect === 'postgres') {
    const made = await sql.get<{ file_id: number }>(
      `WITH RECURSIVE blob AS (${ADD_BLOB_REF}),
            node AS (INSERT INTO nodes (uuid, owner_uuid, owner_type, parent_uuid, top_kind, name, type, created, updated, revision, size)
                     VALUES (@uuid, @owner, @ownerType, @folder, NULL, @name, 'File', @now, @now, 1, @size) RETURNING file_id),
            revision AS (${INSERT_REVISION}),
            usage AS (UPDATE ${OWNER_TABLE[folder.owner_type]} SET disk_used = disk_used + @size WHERE uuid = @owner),
            touched AS (UPDATE nodes SET updated = @now WHERE uuid = @folder),
            ${propagateCte('@size')}
       SELECT file_id FROM node`,
      { hash: blob.hash, size: blob.sizeBytes, count: 1, inline: blob.inline ?? null, sha1: blob.sha1 ?? null, md5: blob.md5 ?? null, uuid, revision: 1, owner: folder.owner_uuid, ownerType: folder.owner_type, folder: folder.uuid, name, now: blob.now, uploader: uploaderUuid },
    );
    return { ...result, file_id: made?.file_id as number };
  }
  await addBlobRef(sql, blob.hash, blob.sizeBytes, 1, blob.inline, blob);
  await sql.run(
    `INSERT INTO nodes (uuid, owner_uuid, owner_type, parent_uuid, top_kind, name, type, created, updated, revision, size)
     VALUES (?, ?, ?, ?, NULL, ?, 'File', ?, ?, 1, ?)`,
    [uuid, folder.owner_uuid, folder.owner_type, folder.uuid, name, blob.now, blob.now, blob.sizeBytes],
  );
  await insertRevision(sql, uuid, 1, blob, uploaderUuid);
  await adjustUsage(sql, folder.owner_type, folder.owner_uuid, blob.sizeBytes);
  await touch(sql, folder.uuid, blob.now);
  await propagateChange(sql, folder.uuid, blob.sizeBytes);
  return { ...result, file_id: (await sql.get<{ file_id: number }>('SELECT file_id FROM nodes WHERE uuid = ?', [uuid]))?.file_id as number };
}

/**
 * Records `blob` as revision n+1 of `file`: one more reference to the blob, the revision row,
 * the file's size, revision and time, the bytes added to its owner's usage (every revision is
 * kept), its folder touched. The caller checked permission and quota. One statement on
 * PostgreSQL, as insertNewFile.
 */
export async function insertNextRevision(sql: Sql, file: NodeRow, blob: UploadedBlob, uploaderUuid: string | null): Promise<UploadResult> {
  const revision = (file.revision ?? 0) + 1;
  const result = { uuid: file.uuid, name: file.name, revision, size: blob.sizeBytes, file_id: file.file_id };
  if (sql.dialect === 'postgres') {
    await sql.run(
      `WITH RECURSIVE blob AS (${ADD_BLOB_REF}),
            file AS (UPDATE nodes SET revision = @revision, size = @size, updated = @now WHERE uuid = @uuid),
            revision AS (${INSERT_REVISION}),
            usage AS (UPDATE ${OWNER_TABLE[file.owner_type]} SET disk_used = disk_used + @size WHERE uuid = @owner),
            touched AS (UPDATE nodes SET updated = @now WHERE uuid = @folder),
            ${propagateCte('@size - (SELECT size FROM nodes WHERE uuid = @uuid)')}
       SELECT 1`,
      { hash: blob.hash, size: blob.sizeBytes, count: 1, inline: blob.inline ?? null, sha1: blob.sha1 ?? null, md5: blob.md5 ?? null, uuid: file.uuid, revision, owner: file.owner_uuid, folder: file.parent_uuid, now: blob.now, uploader: uploaderUuid },
    );
    return result;
  }
  await addBlobRef(sql, blob.hash, blob.sizeBytes, 1, blob.inline, blob);
  const before = (await sql.get<{ size: number }>('SELECT size FROM nodes WHERE uuid = ?', [file.uuid]))?.size ?? 0;
  await sql.run('UPDATE nodes SET revision = ?, size = ?, updated = ? WHERE uuid = ?', [revision, blob.sizeBytes, blob.now, file.uuid]);
  await insertRevision(sql, file.uuid, revision, blob, uploaderUuid);
  await adjustUsage(sql, file.owner_type, file.owner_uuid, blob.sizeBytes);
  if (file.parent_uuid !== null) {
    await touch(sql, file.parent_uuid, blob.now);
    await propagateChange(sql, file.parent_uuid, blob.sizeBytes - Number(before));
  }
  return result;
}

/** What an upload's checks read (ops/files.ts): the target, where it lies, the name's holder, the owner's quota. */
export interface UploadFacts {
  /** Undefined when no such node. */
  target: NodeRow | undefined;
  /** The kind of the top-level folder the target lies under (its own when top-level). */
  topKind: TopLevelKind | null;
  /** The target's child of the name asked for (a folder target and a name given). */
  existing: NodeRow | undefined;
  /** Quota and usage of the target's owner. */
  usage: Usage | undefined;
}

/**
 * The reads an upload's checks need, ONE round trip on PostgreSQL (a small upload asks them
 * twice: before its bytes and in the transaction that records them), four cheap lookups on
 * SQLite (topKindOf there remembers answers). `name` undefined: no child looked up.
 */
export async function uploadFacts(sql: Sql, where: NodeLocator, name?: string): Promise<UploadFacts> {
  if (sql.dialect === 'sqlite') {
    const target = await findNode(sql, where);
    if (!target) return { target, topKind: null, existing: undefined, usage: undefined };
    return {
      target,
      topKind: await topKindOf(sql, target),
      existing: name === undefined || target.type !== 'Dir' ? undefined : await getChildByName(sql, target.uuid, name),
      usage: await usageOf(sql, target.owner_type, target.owner_uuid),
    };
  }
  const row = await sql.get<{ target: NodeRow | null; top_kind: TopLevelKind | null; existing: NodeRow | null; usage: Usage | null }>(
    `WITH RECURSIVE target AS (SELECT * FROM nodes WHERE ${'uuid' in where ? 'uuid = @uuid' : 'owner_uuid = @owner AND top_kind = @top'}),
       up(parent_uuid, top_kind) AS (
         SELECT parent_uuid, top_kind FROM target
         UNION ALL
         SELECT n.parent_uuid, n.top_kind FROM nodes n JOIN up ON n.uuid = up.parent_uuid
       )
     SELECT (SELECT row_to_json(target) FROM target) AS target,
            (SELECT top_kind FROM up WHERE parent_uuid IS NULL) AS top_kind,
            (SELECT row_to_json(child) FROM nodes child JOIN target ON child.parent_uuid = target.uuid AND target.type = 'Dir' WHERE child.name = @name) AS existing,
            COALESCE(
              (SELECT json_build_object('quotaBytes', u.disk_quota, 'usedBytes', u.disk_used) FROM users u JOIN target ON target.owner_type = 'User' AND u.uuid = target.owner_uuid),
              (SELECT json_build_object('quotaBytes', g.disk_quota, 'usedBytes', g.disk_used) FROM groups g JOIN target ON target.owner_type = 'Group' AND g.uuid = target.owner_uuid)
            ) AS usage`,
    { ...where, name: name ?? null },
  );
  return { target: row?.target ?? undefined, topKind: row?.top_kind ?? null, existing: row?.existing ?? undefined, usage: row?.usage ?? undefined };
}

/** One revision of a file; undefined when the file has no such revision. */
export function getRevision(sql: Sql, nodeUuid: string, revision: number): Promise<RevisionRow | undefined> {
  return sql.get<RevisionRow>('SELECT * FROM revisions WHERE node_uuid = ? AND revision = ?', [nodeUuid, revision]);
}

/** A kept revision as the revision listing shows it (docs/extensions.md "Trash and revisions from a client"). */
export interface ListedRevision {
  revision: number;
  size: number;
  created: number;
  uploader_uuid: string | null;
  /** The uploader's name while the account exists. */
  uploader_fullname: string | null;
  sha1: string | null;
  md5: string | null;
}

/** Every kept revision of a file, oldest first, with its blob's checksums (one query). */
export function listRevisions(sql: Sql, nodeUuid: string): Promise<ListedRevision[]> {
  return sql.all<ListedRevision>(
    `SELECT r.revision, r.size, r.created, r.uploader_uuid, u.fullname AS uploader_fullname, b.sha1, b.md5
       FROM revisions r LEFT JOIN blobs b ON b.hash = r.blob_hash LEFT JOIN users u ON u.uuid = r.uploader_uuid
      WHERE r.node_uuid = ? ORDER BY r.revision`,
    [nodeUuid],
  );
}

// ---- owner usage

/** Owner disk usage. Call inside the transaction that changes the rows it counts. */

export interface Usage {
  quotaBytes: number; // 0 or negative: unlimited
  usedBytes: number;
}

export async function usageOf(sql: Sql, ownerType: OwnerType, ownerUuid: string): Promise<Usage | undefined> {
  // The aliases quoted: PostgreSQL folds unquoted names to lower case.
  return sql.get<Usage>(`SELECT disk_quota AS "quotaBytes", disk_used AS "usedBytes" FROM ${OWNER_TABLE[ownerType]} WHERE uuid = ?`, [ownerUuid]);
}

/** Bytes the owner may still add; Infinity when unlimited. */
export async function remainingBytes(sql: Sql, ownerType: OwnerType, ownerUuid: string): Promise<number> {
  return roomIn(await usageOf(sql, ownerType, ownerUuid));
}

/** Bytes `usage` leaves; Infinity when unlimited (or no owner row). */
export function roomIn(usage: Usage | undefined): number {
  if (!usage || usage.quotaBytes <= 0) return Number.POSITIVE_INFINITY;
  return Math.max(0, usage.quotaBytes - usage.usedBytes);
}

export async function adjustUsage(sql: Sql, ownerType: OwnerType, ownerUuid: string, deltaBytes: number): Promise<void> {
  if (deltaBytes === 0) return;
  await sql.run(`UPDATE ${OWNER_TABLE[ownerType]} SET disk_used = disk_used + ? WHERE uuid = ?`, [deltaBytes, ownerUuid]);
}

/** One reference per file entry, counted per blob. */
export async function addEntryRefs(sql: Sql, entries: readonly TreeEntry[]): Promise<void> {
  const refsByHash = new Map<string, { sizeBytes: number; count: number }>();
  for (const entry of entries) {
    if (entry.blobHash === null) continue;
    const refs = refsByHash.get(entry.blobHash);
    if (refs) refs.count += 1;
    else refsByHash.set(entry.blobHash, { sizeBytes: entry.size, count: 1 });
  }
  for (const [hash, refs] of refsByHash) await addBlobRef(sql, hash, refs.sizeBytes, refs.count);
}

// ---- blob ledger

/**
 * The database side of the blob backends (blobs/blob-backend.ts BlobLedger): which blobs rows
 * refer to, and the intents of uploads and deletes (migration 011). Each method is one statement
 * or one transaction, so the check and the marker of beginDelete and beginUpload cannot
 * interleave, in this process or another instance on the same database.
 */

interface IntentRow {
  id: string;
  hash: string;
  key: string;
  upload_id: string | null;
  expires: number;
}

/**
 * `durable` makes what the connection committed survive a power cut (the caller's Durability:
 * a WAL fsync on SQLite, nothing on PostgreSQL); the storage layer only passes it on.
 */
export function storageBlobLedger(sql: Sql, durable: () => Promise<void>): BlobLedger {
  return {
    isReferenced: (hash) => isBlobReferenced(sql, hash),
    durable,
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
      ).map(intentOf),
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
    objects: adoptedObjects(sql),
  };
}

const intentOf = (row: IntentRow): UploadIntent => ({ id: row.id, hash: row.hash, key: row.key, uploadId: row.upload_id ?? undefined, expiresMs: row.expires });

/** Table blob_objects (migration 023) and the fixed-id intents of chunked uploads on S3. */
function adoptedObjects(sql: Sql): AdoptedObjects {
  return {
    keyOf: async (hash) => ((await sql.get('SELECT key FROM blob_objects WHERE hash = ?', [hash])) as { key: string } | undefined)?.key,
    hashOf: async (key) => ((await sql.get('SELECT hash FROM blob_objects WHERE key = ?', [key])) as { hash: string } | undefined)?.hash,
    adopt: (hash, key, replacing) =>
      sql.transaction(async (tx) => {
        if (replacing !== undefined) await tx.run('UPDATE blob_objects SET key = ? WHERE hash = ? AND key = ?', [key, hash, replacing]);
        await tx.run('INSERT INTO blob_objects (hash, key) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING', [hash, key]);
        return ((await tx.get('SELECT key FROM blob_objects WHERE hash = ?', [hash])) as { key: string }).key;
      }),
    forget: async (hash) => {
      await sql.run('DELETE FROM blob_objects WHERE hash = ?', [hash]);
    },
    unreferenced: (limit) => sql.all<{ hash: string; key: string }>('SELECT o.hash, o.key FROM blob_objects o WHERE NOT EXISTS (SELECT 1 FROM blobs b WHERE b.hash = o.hash) ORDER BY o.hash LIMIT ?', [limit]),
    claimUpload: (id, hash, key, nowMs, expiresMs) =>
      sql.transaction(async (tx) => {
        await tx.run("INSERT INTO blob_intents (id, kind, hash, key, created, expires) VALUES (?, 'upload', ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING", [id, hash, key, nowMs, expiresMs]);
        return intentOf((await tx.get('SELECT id, hash, key, upload_id, expires FROM blob_intents WHERE id = ?', [id])) as IntentRow);
      }),
    setUploadId: (id, uploadId) =>
      sql.transaction(async (tx) => {
        await tx.run('UPDATE blob_intents SET upload_id = ? WHERE id = ? AND upload_id IS NULL', [uploadId, id]);
        return ((await tx.get('SELECT upload_id FROM blob_intents WHERE id = ?', [id])) as { upload_id: string | null } | undefined)?.upload_id ?? undefined;
      }),
    upload: async (id) => {
      const row = (await sql.get("SELECT id, hash, key, upload_id, expires FROM blob_intents WHERE id = ? AND kind = 'upload'", [id])) as IntentRow | undefined;
      return row ? intentOf(row) : undefined;
    },
    renewUpload: (id, nowMs, expiresMs) =>
      sql.transaction(async (tx) => {
        await tx.run("UPDATE blob_intents SET expires = ? WHERE id = ? AND kind = 'upload' AND expires > ?", [expiresMs, id, nowMs]);
        const row = (await tx.get("SELECT id, hash, key, upload_id, expires FROM blob_intents WHERE id = ? AND kind = 'upload' AND expires > ?", [id, nowMs])) as IntentRow | undefined;
        return row ? intentOf(row) : undefined;
      }),
  };
}
