/**
 * Avatars of users and groups (docs/api.md "Current user", `avatar`: a base64 data URL of a PNG or
 * JPEG, or an empty string for the default). The data URL's declared type is not trusted: the decoded bytes must be a PNG or
 * a JPEG (image-size reads their header: a well-kept parser beats hand-written magic numbers),
 * within `store.avatarMaxBytes` and 4096 pixels a side. Stored in the database (they are small)
 * and served by GET /avatars/<owner uuid>/<version> without a session, since an <img> tag cannot
 * send a bearer token; the version in the URL is derived from the bytes, so a changed picture has
 * a new URL and an old URL answers 404. Who may change whose avatar is decided by the caller.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { StoreContext } from '../context.js';
import { avatarRowAt, avatarVersionOf, deleteAvatar, putAvatar } from '../storage/users.js';
import type { Sql } from '../storage/sql.js';
import { invalid } from '../envelope.js';

export type AvatarType = 'image/png' | 'image/jpeg';

export interface Avatar {
  contentType: AvatarType;
  bytes: Buffer;
}

const MAX_SIDE_PX = 4096;

/** image-size, loaded at the first avatar (its CommonJS build: decodeAvatar is synchronous). */
let imageSizeOf: typeof import('image-size').imageSize | undefined;
function imageSize(bytes: Buffer): ReturnType<typeof import('image-size').imageSize> {
  imageSizeOf ??= (createRequire(import.meta.url)('image-size') as typeof import('image-size')).imageSize;
  return imageSizeOf(bytes);
}
const DATA_URL = /^data:([\w.+-]+\/[\w.+-]+)?(?:;[\w-]+=[\w.-]+)*;base64,([A-Za-z0-9+/\s]*={0,2})$/;

/**
 * Decodes an avatar value: '' means "back to the default" (null); otherwise a base64 data URL
 * whose bytes are a PNG or JPEG. `field` names the field in the 400 message.
 */
export function decodeAvatar(value: string, maxBytes: number, field = 'avatar'): Avatar | null {
  if (value === '') return null;
  const match = DATA_URL.exec(value.trim());
  if (!match) throw invalid(`${field}: must be a base64 data URL (data:image/png;base64,...) or an empty string`);
  const base64 = (match[2] ?? '').replace(/\s+/g, '');
  if (base64.length === 0) throw invalid(`${field}: the data URL holds no bytes`);
  if (Math.floor((base64.length * 3) / 4) > maxBytes + 2) throw invalid(`${field}: the image is larger than ${maxBytes} bytes`);
  const bytes = Buffer.from(base64, 'base64');
  if (bytes.length > maxBytes) throw invalid(`${field}: the image is larger than ${maxBytes} bytes`);
  let size: ReturnType<typeof imageSize>;
  try {
    size = imageSize(bytes);
  } catch {
    throw invalid(`${field}: the bytes are not a PNG or JPEG image`);
  }
  const contentType: AvatarType | undefined = size.type === 'png' ? 'image/png' : size.type === 'jpg' ? 'image/jpeg' : undefined;
  if (!contentType) throw invalid(`${field}: the bytes are not a PNG or JPEG image (found ${size.type ?? 'unknown'})`);
  if (!size.width || !size.height || size.width > MAX_SIDE_PX || size.height > MAX_SIDE_PX) {
    throw invalid(`${field}: the image must be 1 to ${MAX_SIDE_PX} pixels on each side`);
  }
  return { contentType, bytes };
}

/** Stores (or with null removes) an owner's avatar. Run inside the caller's transaction when it changes more. */
export async function storeAvatar(sql: Sql, ownerUuid: string, avatar: Avatar | null, nowMs: number): Promise<void> {
  if (avatar === null) {
    await deleteAvatar(sql, ownerUuid);
    return;
  }
  const version = createHash('sha256').update(avatar.bytes).digest('base64url').slice(0, 16);
  await putAvatar(sql, ownerUuid, { content_type: avatar.contentType, bytes: avatar.bytes, version, updated: nowMs });
}

/**
 * The avatar link of an owner: '' while they have none (clients show their default picture);
 * otherwise `/avatars/<owner>/<version>`, absolute when `store.publicUrl` is set, else a path
 * below the store's base URL (the `avatar` of docs/api.md "User profile").
 */
export async function avatarUrl(ctx: StoreContext, ownerUuid: string): Promise<string> {
  const version = await avatarVersionOf(ctx.storage.sql, ownerUuid);
  if (version === undefined) return '';
  const base = ctx.config.store.publicUrl?.replace(/\/+$/, '') ?? '';
  return `${base}/avatars/${ownerUuid}/${version}`;
}

export interface ServedAvatar {
  contentType: AvatarType;
  bytes: Buffer;
  version: string;
  updatedMs: number;
}

/** The avatar behind a link, or undefined when the owner has none or the version is not current. */
export async function avatarAt(sql: Sql, ownerUuid: string, version: string): Promise<ServedAvatar | undefined> {
  const row = await avatarRowAt(sql, ownerUuid, version);
  return row && { contentType: row.content_type as AvatarType, bytes: row.bytes, version: row.version, updatedMs: row.updated };
}
