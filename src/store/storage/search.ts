/**
 * Search (issue 32, docs/extensions.md "Search"): the nodes of given owners whose conditions hold,
 * answered from indexes, not a walk of the tree. The name goes through the name index of
 * migration 032 (SQLite: the FTS5 trigram table `node_names`; PostgreSQL: pg_trgm on
 * LOWER(name)); the owners through `nodes_owner`. Each candidate is then walked UP to its
 * top-level folder (one step per level, from each distinct parent folder once) to learn which
 * top-level folder it lies in (trash is left out unless asked) and whether it lies in the scope.
 * The cost is the candidates' folders times their depth, never the size of the drive; a query
 * without a name condition (only a type, a size, a date) has every node of the owners as
 * candidates: a scan of their rows, still no walk down.
 */
import { types as MIME_TYPES } from 'mime-types';
import type { Sql } from './sql.js';
import { binaryOrder, jsonValues } from './portable.js';
import { ancestry, type NodeRow } from './nodes.js';
import { likeMatches } from './like-match.js';

export type Comparison = { gt?: number; gte?: number; lt?: number; lte?: number; eq?: number };

/** The conditions, as the REST extension takes them (schemas/search.ts). */
export type SearchCondition =
  | { and: SearchCondition[] }
  | { or: SearchCondition[] }
  | { not: SearchCondition }
  /** A LIKE pattern (`%` any run, `_` one character), case-insensitive. */
  | { name: string }
  /** A plain substring of the name, case-insensitive (no wildcard). */
  | { nameContains: string }
  | { kind: 'file' | 'folder' }
  /** A content type, or a LIKE pattern of one (`image/%`): from the name, as every door says it. */
  | { mime: string }
  | { size: Comparison }
  | { updated: Comparison }
  | { favorite: boolean }
  | { fileId: number };

export type SearchOrderKey = 'name' | 'updated' | 'size' | 'kind';

export interface SearchQuery {
  /** Whose nodes: the caller, and groups whose nodes the caller may read. */
  owners: readonly string[];
  /** Top-level folders the hits lie in (`home`, `incoming`; `trash` only when asked). */
  tops: readonly string[];
  /** Folder UUIDs a hit must lie below (any of them); none: anywhere in the owners' tops. */
  scopes: readonly string[];
  where: SearchCondition | undefined;
  order: ReadonlyArray<{ by: SearchOrderKey; desc: boolean }>;
  limit: number;
  offset: number;
  /** Whose stars `favorite` means. */
  callerUuid: string;
}

/** Every extension whose type matches `pattern` (a LIKE pattern of a type). */
function extensionsOf(pattern: string): string[] {
  return Object.entries(MIME_TYPES)
    .filter(([, type]) => likeMatches(pattern, type))
    .map(([ext]) => ext);
}

const FOLDER_MIME = 'httpd/unix-directory';

/** The SQL of one condition on the candidate `n`, its parameters pushed onto `params`. */
function compile(sql: Sql, c: SearchCondition, params: unknown[], callerUuid: string): string {
  if ('and' in c) return c.and.length === 0 ? '1 = 1' : `(${c.and.map((x) => compile(sql, x, params, callerUuid)).join(' AND ')})`;
  if ('or' in c) return c.or.length === 0 ? '1 = 0' : `(${c.or.map((x) => compile(sql, x, params, callerUuid)).join(' OR ')})`;
  if ('not' in c) return `NOT ${compile(sql, c.not, params, callerUuid)}`;
  if ('name' in c) return nameLike(sql, c.name, params);
  if ('nameContains' in c) {
    const text = c.nameContains;
    // The index narrows by the trigrams (a `%` or `_` in the text only widens it), the position decides.
    const like = nameLike(sql, `%${text}%`, params);
    params.push(text.toLowerCase());
    return `(${like} AND ${sql.dialect === 'sqlite' ? 'INSTR(LOWER(n.name), ?)' : 'STRPOS(LOWER(n.name), ?)'} > 0)`;
  }
  if ('kind' in c) return c.kind === 'folder' ? "n.type = 'Dir'" : "n.type = 'File'";
  if ('mime' in c) {
    const pattern = c.mime.toLowerCase();
    const parts: string[] = [];
    if (likeMatches(pattern, FOLDER_MIME)) parts.push("n.type = 'Dir'");
    const exts = extensionsOf(pattern);
    if (exts.length > 0) {
      params.push(JSON.stringify(exts.map((e) => `.${e}`)));
      // The name's end after its last dot, compared with the list (one parameter for any count).
      const lastDot = sql.dialect === 'sqlite' ? "LOWER(REPLACE(n.name, RTRIM(n.name, REPLACE(n.name, '.', '')), ''))" : "LOWER(SUBSTRING(n.name FROM '[^.]*$'))";
      parts.push(`(n.type = 'File' AND '.' || ${lastDot} IN (${jsonValues(sql)}) AND n.name LIKE '%.%')`);
    }
    return parts.length === 0 ? '1 = 0' : `(${parts.join(' OR ')})`;
  }
  if ('size' in c) return compare("CASE WHEN n.type = 'File' THEN n.size ELSE 0 END", c.size, params);
  if ('updated' in c) return compare('n.updated', c.updated, params);
  if ('favorite' in c) {
    params.push(callerUuid);
    return `${c.favorite ? '' : 'NOT '}EXISTS (SELECT 1 FROM stars s WHERE s.user_uuid = ? AND s.node_uuid = n.uuid)`;
  }
  params.push(c.fileId);
  return 'n.file_id = ?';
}

function compare(column: string, cmp: Comparison, params: unknown[]): string {
  const ops: Array<[keyof Comparison, string]> = [['gt', '>'], ['gte', '>='], ['lt', '<'], ['lte', '<='], ['eq', '=']];
  const parts: string[] = [];
  for (const [key, op] of ops) {
    const value = cmp[key];
    if (value === undefined) continue;
    params.push(value);
    parts.push(`${column} ${op} ?`);
  }
  return parts.length === 0 ? '1 = 1' : `(${parts.join(' AND ')})`;
}

/**
 * A case-insensitive LIKE on the name through the index. SQLite: the FTS5 trigram table answers
 * LIKE itself (case folded, no escape character); PostgreSQL: LOWER(name) LIKE LOWER(?) with no
 * escape character either (ESCAPE ''), so `\` means itself in both.
 */
function nameLike(sql: Sql, pattern: string, params: unknown[]): string {
  if (sql.dialect === 'sqlite') {
    params.push(pattern);
    return 'n.file_id IN (SELECT rowid FROM node_names WHERE node_names.name LIKE ?)';
  }
  params.push(pattern.toLowerCase());
  return "LOWER(n.name) LIKE ? ESCAPE ''";
}

const ORDER_COLUMNS: Record<SearchOrderKey, (sql: Sql) => string> = {
  name: (sql) => binaryOrder(sql, 'n.name'),
  updated: () => 'n.updated',
  size: () => "CASE WHEN n.type = 'File' THEN n.size ELSE 0 END",
  kind: () => "CASE WHEN n.type = 'Dir' THEN 0 ELSE 1 END",
};

/**
 * One page of hits (limit + 1 rows are read: `more` says whether another page follows), each
 * with its chain from the top-level folder down (inclusive). The walk up starts from the
 * candidates' distinct parent folders, not from each candidate: a query by type alone has every
 * file as a candidate, and files share a few folders (100,000 files in 100 folders walk 100
 * chains). A candidate is a hit when its parent's walk reached a wanted top-level folder, through
 * a scope when there is one (the scope folder itself is not its own hit: its parent is outside).
 */
export async function searchNodes(sql: Sql, q: SearchQuery): Promise<{ hits: Array<{ node: NodeRow; chain: NodeRow[] }>; more: boolean }> {
  if (q.owners.length === 0 || q.tops.length === 0) return { hits: [], more: false };
  const conditionParams: unknown[] = [];
  const where = q.where ? compile(sql, q.where, conditionParams, q.callerUuid) : '1 = 1';
  const scoped = q.scopes.length > 0;
  const scopes = JSON.stringify(q.scopes);
  const inScope = (earlier: string): string => (scoped ? `CASE WHEN ${earlier}p.uuid IN (${jsonValues(sql)}) THEN 1 ELSE 0 END` : '0');
  const order = [...q.order.map((o) => `${ORDER_COLUMNS[o.by](sql)} ${o.desc ? 'DESC' : 'ASC'}`), `${binaryOrder(sql, 'n.name')} ASC`, 'n.file_id ASC'];
  // In the order the statement names them.
  const params: unknown[] = [JSON.stringify(q.owners), ...conditionParams, ...(scoped ? [scopes, scopes] : []), JSON.stringify(q.tops), q.limit + 1, q.offset];
  const rows = (await sql.all(
    `WITH RECURSIVE cand(uuid, parent) AS (
       SELECT n.uuid, n.parent_uuid FROM nodes n
       WHERE n.owner_uuid IN (${jsonValues(sql)}) AND n.parent_uuid IS NOT NULL AND ${where}
     ),
     up(start, uuid, parent, inscope) AS (
       SELECT p.uuid, p.uuid, p.parent_uuid, ${inScope('')} FROM nodes p WHERE p.uuid IN (SELECT parent FROM cand)
       UNION ALL
       SELECT up.start, p.uuid, p.parent_uuid, ${inScope('up.inscope = 1 OR ')}
       FROM up JOIN nodes p ON p.uuid = up.parent
     ),
     placed(folder) AS (
       SELECT up.start FROM up JOIN nodes top ON top.uuid = up.uuid
       WHERE up.parent IS NULL AND top.top_kind IN (${jsonValues(sql)})${scoped ? ' AND up.inscope = 1' : ''}
     )
     SELECT n.* FROM cand c
     JOIN placed ON placed.folder = c.parent
     JOIN nodes n ON n.uuid = c.uuid
     ORDER BY ${order.join(', ')}
     LIMIT ? OFFSET ?`,
    params,
  )) as NodeRow[];
  const more = rows.length > q.limit;
  const page = more ? rows.slice(0, q.limit) : rows;
  const hits = await Promise.all(page.map(async (node) => ({ node, chain: await ancestry(sql, node) })));
  return { hits, more };
}
