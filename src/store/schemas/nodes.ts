/**
 * Wire shapes of the /api/nodes/{node_uuid} group (docs/api.md "Nodes"): the POST operation body and
 * the records answered by details, path and dirlist. Parsing turns the body into a
 * camelCase NodeOperation; nothing here looks at the database.
 */
import { z } from 'zod';
import { commentField, recipientList } from './shares.js';

export const OPERATION_KEYS = ['new_dir', 'new_name', 'starred', 'copy_to', 'move_to', 'share_copy_with'] as const;
type OperationKey = (typeof OPERATION_KEYS)[number];

export type NodeOperation =
  | { op: 'newDir'; name: string }
  | { op: 'rename'; name: string }
  | { op: 'star'; starred: boolean }
  | { op: 'copyTo'; target: string }
  | { op: 'moveTo'; target: string }
  | { op: 'shareCopyWith'; recipients: string[]; comment: string };

const target = (key: string) => z.string({ error: `${key} must be a string` }).min(1, `${key} must not be empty`);

const operationSchemas: Record<OperationKey, z.ZodType<NodeOperation>> = {
  new_dir: z
    .strictObject({ new_dir: z.string({ error: 'new_dir must be a string' }) })
    .transform((b): NodeOperation => ({ op: 'newDir', name: b.new_dir })),
  new_name: z
    .strictObject({ new_name: z.string({ error: 'new_name must be a string' }) })
    .transform((b): NodeOperation => ({ op: 'rename', name: b.new_name })),
  starred: z
    .strictObject({ starred: z.boolean({ error: 'starred must be a boolean' }) })
    .transform((b): NodeOperation => ({ op: 'star', starred: b.starred })),
  copy_to: z.strictObject({ copy_to: target('copy_to') }).transform((b): NodeOperation => ({ op: 'copyTo', target: b.copy_to })),
  move_to: z.strictObject({ move_to: target('move_to') }).transform((b): NodeOperation => ({ op: 'moveTo', target: b.move_to })),
  // `comment` (an extension) goes to the approvers when the share needs approval.
  share_copy_with: z
    .strictObject({ share_copy_with: recipientList('share_copy_with'), comment: commentField('comment').optional() })
    .transform((b): NodeOperation => ({ op: 'shareCopyWith', recipients: b.share_copy_with, comment: b.comment ?? '' })),
};

export type BodyParse = { ok: true; operation: NodeOperation } | { ok: false; problem: string };

const EXACTLY_ONE = `the body must carry exactly one of ${OPERATION_KEYS.join(', ')}`;

/**
 * One body, one operation: several operation keys would leave their order open, so they are
 * refused, as are unknown keys (docs/store-semantics.md, "Nodes").
 */
export function parseNodeOperation(body: unknown): BodyParse {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, problem: 'the body must be a JSON object' };
  const present = OPERATION_KEYS.filter((key) => Object.hasOwn(body, key));
  const key = present[0];
  if (present.length !== 1 || key === undefined) return { ok: false, problem: EXACTLY_ONE };
  const parsed = operationSchemas[key].safeParse(body);
  if (parsed.success) return { ok: true, operation: parsed.data };
  const issue = parsed.error.issues[0];
  const problem = issue?.code === 'unrecognized_keys' ? `unknown key(s): ${issue.keys.join(', ')}` : (issue?.message ?? EXACTLY_ONE);
  return { ok: false, problem };
}

export const nodeParamsSchema = z.object({ id: z.string().min(1) });
/** A numeric file id in a path (docs/extensions.md "Numeric file ids"): decimal digits, no sign, within a safe integer. */
export const fileIdParamsSchema = z.object({
  file_id: z
    .string()
    .regex(/^[1-9]\d{0,15}$/)
    .transform(Number)
    .pipe(z.number().int().positive().max(Number.MAX_SAFE_INTEGER)),
});

const nodeType = z.enum(['Dir', 'File']);
const epochMs = z.number().int();

/**
 * SHA-1 and MD5 (hex) of a file's latest revision: an extension (docs/extensions.md "Checksums").
 * `md5` is absent for the moment after a large upload until it is known (ops/md5-later.ts).
 */
export const checksumsSchema = z.object({ sha1: z.string(), md5: z.string().optional() });
export type Checksums = z.infer<typeof checksumsSchema>;

/** The checksums a blob row publishes: each one once known, none without SHA-1 (a blob not yet backfilled). */
export function publishedChecksums(sha1: string | null, md5: string | null): Checksums | undefined {
  if (sha1 === null) return undefined;
  return md5 === null ? { sha1 } : { sha1, md5 };
}

/** Folders: a version of everything below that changes with any change there, and the recursive size (docs/extensions.md "Tree versions and sizes"). */
const treeFields = { tree_etag: z.string().optional(), tree_size: z.number().int().optional() };

/** docs/api.md "Node details". */
export const nodeDetailsSchema = z.object({
  name: z.string(),
  type: nodeType,
  uuid: z.string(),
  owner_type: z.enum(['User', 'Group']),
  owner_uuid: z.string(),
  owner_fullname: z.string(),
  created: epochMs,
  updated: epochMs,
  checksums: checksumsSchema.optional(),
  /** A folder marked "delete for good" (docs/extensions.md "Trash and revisions from a client"); absent otherwise. */
  skip_trash: z.literal(true).optional(),
  /** The node's numeric id, stable and never reused (docs/extensions.md "Numeric file ids"). */
  file_id: z.number().int().positive().optional(),
  ...treeFields,
});
export type NodeDetails = z.infer<typeof nodeDetailsSchema>;

/** docs/api.md "Path entry": top-level folders carry their identifier as uuid. */
export const pathEntrySchema = z.object({ name: z.string(), uuid: z.string() });
export type PathEntry = z.infer<typeof pathEntrySchema>;

/** docs/api.md "Directory entry": `size` in bytes (0 for folders), `revision` only on files. */
export const dirEntrySchema = z.object({
  uuid: z.string(),
  name: z.string(),
  type: nodeType,
  is_starred: z.boolean(),
  public_shares: z.number().int(),
  private_shares: z.number().int(),
  comment_count: z.number().int(),
  size: z.number().int(),
  updated: epochMs,
  revision: z.number().int().optional(),
  checksums: checksumsSchema.optional(),
  /** The node's numeric id, stable and never reused (docs/extensions.md "Numeric file ids"). */
  file_id: z.number().int().positive().optional(),
  /** An entry of a trash folder: where it came from and when it was deleted (docs/extensions.md "Trash and revisions from a client"). */
  trashed: z
    .object({ from: z.string().nullable(), from_path: z.string().nullable(), name: z.string(), at: epochMs.nullable() })
    .optional(),
  ...treeFields,
});
export type DirEntry = z.infer<typeof dirEntrySchema>;

/** docs/api.md "Node access permissions". */
export const accessSchema = z.array(z.enum(['read', 'write', 'delete', 'download']));
