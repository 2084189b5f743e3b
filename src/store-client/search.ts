/**
 * The search extension (docs/extensions.md "Search", POST /api/search): the caller's nodes by
 * name pattern, type, size, time, favorite and scope, one page at a time. A server without it
 * answers 404 (not-found): the caller decides what to do without it (the bridge answers SEARCH
 * 501, the web app filters the open folder only).
 */
import { z } from 'zod';
import type { StoreHttp } from './http.js';
import { parseWith } from './parse.js';
import { dataEnvelope, dirEntrySchema, pathEntrySchema } from './schemas.js';
import { toNodeEntry } from './nodes.js';
import type { NodeEntry, NodeId, PathEntry, StoreSession } from './types.js';

export type SearchBound = { gt?: number; gte?: number; lt?: number; lte?: number; eq?: number };

/** One condition of a search, as the wire names it (docs/extensions.md "Search"). */
export type SearchCondition =
  | { and: SearchCondition[] }
  | { or: SearchCondition[] }
  | { not: SearchCondition }
  | { name: string }
  | { name_contains: string }
  | { kind: 'file' | 'folder' }
  | { mime: string }
  | { size: SearchBound }
  | { updated: SearchBound }
  | { favorite: boolean }
  | { file_id: number };

export interface SearchQuery {
  /** Folders the hits must lie below (any of them); none: every drive of the caller. */
  scope?: NodeId[];
  where?: SearchCondition;
  order?: Array<{ by: 'name' | 'updated' | 'size' | 'kind'; desc?: boolean }>;
  limit?: number;
  offset?: number;
  trash?: boolean;
}

/** A hit: its entry, and its path from its top-level folder (inclusive) down to itself. */
export interface SearchHit extends NodeEntry {
  path: PathEntry[];
}

export interface SearchResult {
  hits: SearchHit[];
  /** Whether another page follows. */
  more: boolean;
}

const searchAnswerSchema = z.object({ hits: z.array(dirEntrySchema.extend({ path: z.array(pathEntrySchema) })), more: z.boolean() }).loose();

export function toSearchResult(data: z.infer<typeof searchAnswerSchema>): SearchResult {
  return {
    hits: data.hits.map((hit) => ({ ...toNodeEntry(hit), path: hit.path.map((e) => ({ id: e.uuid as NodeId, name: e.name })) })),
    more: data.more,
  };
}

export async function search(http: StoreHttp, s: StoreSession, query: SearchQuery, signal?: AbortSignal): Promise<SearchResult> {
  const operation = 'search';
  const res = await http.call({ method: 'POST', path: '/api/search', token: s.token, json: query, signal }, operation);
  return toSearchResult(parseWith(dataEnvelope(searchAnswerSchema), res.body, operation, res.status).data);
}
