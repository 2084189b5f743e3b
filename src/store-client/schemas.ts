/**
 * zod shapes of the interface's records (docs/api.md "Records") as they arrive on the wire (snake_case), tolerant of extra
 * keys and of the small variations other servers of the interface show (numbers sent as
 * strings, missing counters). Everything is normalised to camelCase types at this boundary.
 */
import { z } from 'zod';

const num = z.coerce.number();
const optionalNum = z.preprocess((v) => (v === null || v === '' ? undefined : v), z.coerce.number().optional());
const bool = z.preprocess((v) => (v === 1 || v === '1' || v === 'true' ? true : v === 0 || v === '0' || v === 'false' ? false : v), z.boolean());

export const envelopeSchema = z.object({ status: z.string(), msg: z.string().optional().default('') }).loose();

export const sessionSchema = z
  .object({
    uuid: z.string(),
    token: z.string().min(1),
    status: z.string().optional(),
    msg: z.string().optional(),
    is_admin: bool.optional().default(false),
    fullname: z.string().optional().default(''),
    fileaccesskey: z.string().optional().default(''),
    avatar: z.string().nullable().optional(),
  })
  .loose();

/** The checksums extension (docs/extensions.md "Checksums"); a store without it sends none. */
const checksumsSchema = z
  .object({ sha1: z.string().regex(/^[0-9a-fA-F]{40}$/), md5: z.string().regex(/^[0-9a-fA-F]{32}$/).optional().catch(undefined) })
  .loose()
  .optional()
  .catch(undefined);

/** The numeric file id extension (docs/extensions.md "Numeric file ids"); anything but a positive safe integer is as if absent. */
const fileIdSchema = z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional().catch(undefined);

/** A trash entry's facts; anything malformed is as if absent (a foreign store's field of that name means nothing here). */
const trashedSchema = z
  .object({ from_path: z.string().nullable().optional(), name: z.string(), at: z.number().nullable().optional() })
  .loose()
  .optional()
  .catch(undefined);

/** The tree version extension (docs/extensions.md "Tree versions and sizes"); malformed is as if absent. */
const treeEtagSchema = z.string().min(1).max(200).optional().catch(undefined);
const treeSizeSchema = z.number().int().nonnegative().optional().catch(undefined);

export const nodeDetailsSchema = z
  .object({
    name: z.string(),
    type: z.string(),
    uuid: z.string(),
    owner_type: z.string().optional().default('User'),
    owner_uuid: z.string().optional().default(''),
    owner_fullname: z.string().optional().default(''),
    created: optionalNum,
    updated: optionalNum,
    checksums: checksumsSchema,
    skip_trash: z.boolean().optional().catch(undefined),
    file_id: fileIdSchema,
    tree_etag: treeEtagSchema,
    tree_size: treeSizeSchema,
  })
  .loose();

export const pathEntrySchema = z.object({ name: z.string(), uuid: z.string() }).loose();

export const dirEntrySchema = z
  .object({
    uuid: z.string(),
    name: z.string(),
    type: z.string(),
    is_starred: bool.optional().default(false),
    public_shares: optionalNum,
    private_shares: optionalNum,
    comment_count: optionalNum,
    size: optionalNum,
    updated: optionalNum,
    revision: optionalNum,
    checksums: checksumsSchema,
    trashed: trashedSchema,
    file_id: fileIdSchema,
    tree_etag: treeEtagSchema,
    tree_size: treeSizeSchema,
  })
  .loose();

/** A revision listing's record (an extension: docs/extensions.md "Trash and revisions from a client"). */
export const revisionRecordSchema = z
  .object({
    revision: z.number().int(),
    size: z.number(),
    created: z.number(),
    uploader_uuid: z.string().nullable().optional(),
    uploader_fullname: z.string().nullable().optional(),
    checksums: checksumsSchema,
  })
  .loose();

export const restoredSchema = z.object({ uuid: z.string(), name: z.string(), parent: z.string(), parent_path: z.string() }).loose();

export const uploadTokenSchema = z.object({ token: z.string().min(1), status: z.string().optional(), msg: z.string().optional() }).loose();

export const userProfileSchema = z
  .object({
    uuid: z.string(),
    fullname: z.string().optional().default(''),
    email: z.string().optional().default(''),
    is_active: bool.optional().default(true),
    is_admin: bool.optional().default(false),
    avatar: z.string().nullable().optional(),
    disk_quota: num.optional().default(0),
    disk_used: num.optional().default(0),
    twofa: bool.optional().default(false),
    created: optionalNum,
    pass_expires: optionalNum,
  })
  .loose();

export const permissionsSchema = z.array(z.string());

const stringList = z.preprocess((v) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : v ?? []), z.array(z.string()));

/** docs/api.md "Group entry". */
export const groupEntrySchema = z
  .object({
    group_uuid: z.string(),
    group_name: z.string(),
    is_admin: bool.optional().default(false),
    node_permissions: stringList,
    tag_permissions: stringList,
    share_permissions: stringList,
    avatar: z.string().nullable().optional(),
  })
  .loose();

/** `{status, msg, data}` where data has the given shape. */
export function dataEnvelope<T extends z.ZodType>(data: T) {
  return z.object({ status: z.string().optional(), msg: z.string().optional(), data }).loose();
}

/** A notification (an extension: docs/extensions.md "Notifications"). */
export const notificationRecordSchema = z
  .object({
    id: z.number().int(),
    kind: z.string(),
    object_type: z.string().optional().default(''),
    object_id: z.string().optional().default(''),
    subject: z.string().optional().default(''),
    params: z.record(z.string(), z.unknown()).optional().default({}),
    created: z.number().optional().default(0),
  })
  .loose();
