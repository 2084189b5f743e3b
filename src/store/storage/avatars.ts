/** Avatar rows: one picture per owner (user or group), replaced whole; its version follows its bytes. */
import type { Sql } from './sql.js';

export interface AvatarRow {
  content_type: string;
  bytes: Buffer;
  version: string;
  updated: number;
}

export async function putAvatar(sql: Sql, ownerUuid: string, row: AvatarRow): Promise<void> {
  await sql.run(
    `INSERT INTO avatars (owner_uuid, content_type, bytes, version, updated) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT(owner_uuid) DO UPDATE SET content_type = excluded.content_type, bytes = excluded.bytes,
       version = excluded.version, updated = excluded.updated`,
    [ownerUuid, row.content_type, row.bytes, row.version, row.updated],
  );
}

export async function deleteAvatar(sql: Sql, ownerUuid: string): Promise<void> {
  await sql.run('DELETE FROM avatars WHERE owner_uuid = ?', [ownerUuid]);
}

/** The current version of the owner's avatar; undefined when there is none. */
export async function avatarVersionOf(sql: Sql, ownerUuid: string): Promise<string | undefined> {
  return (await sql.get<{ version: string }>('SELECT version FROM avatars WHERE owner_uuid = ?', [ownerUuid]))?.version;
}

/** The avatar of that version; undefined when the owner has none or another. */
export function avatarRowAt(sql: Sql, ownerUuid: string, version: string): Promise<AvatarRow | undefined> {
  return sql.get<AvatarRow>('SELECT content_type, bytes, version, updated FROM avatars WHERE owner_uuid = ? AND version = ?', [ownerUuid, version]);
}
