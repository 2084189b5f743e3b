/**
 * Wire shapes of the search extension (docs/extensions.md "Search", POST /api/search): the query
 * (where in the caller's drives, which conditions, in what order, which page) and the answer (a
 * page of directory entries, each with its path). Parsing turns the body into the storage's
 * SearchCondition; nothing here looks at the database.
 */
import { z } from 'zod';
import type { SearchCondition, SearchOrderKey } from '../storage/search.js';
import { dirEntrySchema, pathEntrySchema } from './nodes.js';

/** At most this many hits per page (docs/extensions.md "Search"). */
export const SEARCH_MAX_LIMIT = 1000;
export const SEARCH_DEFAULT_LIMIT = 100;
const MAX_CONDITIONS = 64;
const MAX_PATTERN = 255;

const bound = z.number({ error: 'bounds must be numbers' }).finite().min(0);
const comparison = z
  .strictObject({ gt: bound.optional(), gte: bound.optional(), lt: bound.optional(), lte: bound.optional(), eq: bound.optional() })
  .refine((c) => Object.keys(c).length > 0, 'a comparison needs gt, gte, lt, lte or eq');
const pattern = (key: string) => z.string({ error: `${key} must be a string` }).min(1, `${key} must not be empty`).max(MAX_PATTERN, `${key} must have at most ${MAX_PATTERN} characters`);

type WireCondition =
  | { and: WireCondition[] }
  | { or: WireCondition[] }
  | { not: WireCondition }
  | { name: string }
  | { name_contains: string }
  | { kind: 'file' | 'folder' }
  | { mime: string }
  | { size: z.infer<typeof comparison> }
  | { updated: z.infer<typeof comparison> }
  | { favorite: boolean }
  | { file_id: number };

const condition: z.ZodType<WireCondition> = z.lazy(() =>
  z.union(
    [
      z.strictObject({ and: z.array(condition).max(MAX_CONDITIONS) }),
      z.strictObject({ or: z.array(condition).max(MAX_CONDITIONS) }),
      z.strictObject({ not: condition }),
      z.strictObject({ name: pattern('name') }),
      z.strictObject({ name_contains: pattern('name_contains') }),
      z.strictObject({ kind: z.enum(['file', 'folder'], { error: "kind must be 'file' or 'folder'" }) }),
      z.strictObject({ mime: pattern('mime') }),
      z.strictObject({ size: comparison }),
      z.strictObject({ updated: comparison }),
      z.strictObject({ favorite: z.boolean({ error: 'favorite must be a boolean' }) }),
      z.strictObject({ file_id: z.number().int().positive() }),
    ],
    { error: 'each condition is one of and, or, not, name, name_contains, kind, mime, size, updated, favorite, file_id' },
  ),
);

export const searchBodySchema = z.strictObject({
  /** Folders (node ids, top-level forms included) the hits must lie below; none: every drive of the caller. */
  scope: z.array(z.string().min(1)).max(64, 'at most 64 scope folders').optional(),
  where: condition.optional(),
  order: z
    .array(z.strictObject({ by: z.enum(['name', 'updated', 'size', 'kind'], { error: "order by is one of name, updated, size, kind" }), desc: z.boolean().optional() }))
    .max(4)
    .optional(),
  limit: z.number().int().min(1, 'limit must be 1 or more').max(SEARCH_MAX_LIMIT, `limit must be at most ${SEARCH_MAX_LIMIT}`).optional(),
  offset: z.number().int().min(0).max(1_000_000).optional(),
  /** Search the caller's trash (and their groups') as well. */
  trash: z.boolean().optional(),
});
export type SearchBody = z.infer<typeof searchBodySchema>;

/** The storage's condition of a wire condition (snake_case keys become the storage's). */
export function toCondition(c: WireCondition): SearchCondition {
  if ('and' in c) return { and: c.and.map(toCondition) };
  if ('or' in c) return { or: c.or.map(toCondition) };
  if ('not' in c) return { not: toCondition(c.not) };
  if ('name_contains' in c) return { nameContains: c.name_contains };
  if ('file_id' in c) return { fileId: c.file_id };
  return c;
}

export function orderOf(body: SearchBody): Array<{ by: SearchOrderKey; desc: boolean }> {
  return (body.order ?? []).map((o) => ({ by: o.by, desc: o.desc === true }));
}

/** A hit: its directory entry and its path from its top-level folder (inclusive) down to it (inclusive). */
export const searchHitSchema = dirEntrySchema.extend({ path: z.array(pathEntrySchema) });
export const searchAnswerSchema = z.object({ hits: z.array(searchHitSchema), more: z.boolean() });
export type SearchAnswer = z.infer<typeof searchAnswerSchema>;
