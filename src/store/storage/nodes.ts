/**
 * Node rows and the lookups every route shares: top-level folders, identifiers in both
 * forms (`home`, `home:<owner_uuid>`), children. Tree-changing operations (mkdir, rename,
 * move, copy, delete) live in storage/tree.ts; uploads in storage/files.ts.
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { sqliteConnectionOf } from './dialects/sqlite.js';
import type { Sql } from './sql.js';

export const TOP_LEVEL_KINDS = [
  'home',
  'incoming',
  'trash',
  'public_shares',
  'private_shares',
  'favorites',
  'shared_with_you',
] as const;
export type TopLevelKind = (typeof TOP_LEVEL_KINDS)[number];

/** Top-level folders whose content is computed (favorites) or managed by sharing: no writes into them. */
export const VIRTUAL_KINDS: ReadonlySet<TopLevelKind> = new Set(['favorites', 'public_shares', 'private_shares', 'shared_with_you']);

export type OwnerType = 'User' | 'Group';

export interface NodeRow {
  uuid: string;
  owner_uuid: string;
  owner_type: OwnerType;
  parent_uuid: string | null;
  top_kind: TopLevelKind | null;
  name: string;
  type: 'Dir' | 'File';
  created: number;
  updated: number;
  revision: number | null;
  size: number;
  trashed_from: string | null;
  trashed_name: string | null;
}

export function isTopLevelKind(value: string): value is TopLevelKind {
  return (TOP_LEVEL_KINDS as readonly string[]).includes(value);
}

export interface ParsedIdentifier {
  kind: 'uuid' | 'top';
  uuid?: string;
  top?: TopLevelKind;
  /** Owner named in a qualified identifier; undefined for the bare form. */
  owner?: string;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}

/** Parses a `{node_uuid}` path value; undefined when it is neither form. */
export function parseIdentifier(value: string): ParsedIdentifier | undefined {
  if (isUuid(value)) return { kind: 'uuid', uuid: value.toLowerCase() };
  const colon = value.indexOf(':');
  const name = colon === -1 ? value : value.slice(0, colon);
  if (!isTopLevelKind(name)) return undefined;
  if (colon === -1) return { kind: 'top', top: name };
  const owner = value.slice(colon + 1);
  if (!isUuid(owner)) return undefined;
  return { kind: 'top', top: name, owner: owner.toLowerCase() };
}

/** The identifier clients see for a node: its UUID, or the top-level form relative to the caller. */
export function publicId(node: Pick<NodeRow, 'uuid' | 'top_kind' | 'owner_uuid'>, callerUuid: string): string {
  if (node.top_kind === null) return node.uuid;
  return node.owner_uuid === callerUuid ? node.top_kind : `${node.top_kind}:${node.owner_uuid}`;
}

export async function createTopLevelFolders(sql: Sql, ownerType: OwnerType, ownerUuid: string, now: number): Promise<void> {
  for (const kind of TOP_LEVEL_KINDS) {
    await sql.run(
      `INSERT INTO nodes (uuid, owner_uuid, owner_type, parent_uuid, top_kind, name, type, created, updated)
       VALUES (?, ?, ?, NULL, ?, ?, 'Dir', ?, ?)`,
      [randomUUID(), ownerUuid, ownerType, kind, kind, now, now],
    );
  }
}

export async function getNode(sql: Sql, uuid: string): Promise<NodeRow | undefined> {
  return (await sql.get('SELECT * FROM nodes WHERE uuid = ?', [uuid])) as NodeRow | undefined;
}

export async function getTopLevel(sql: Sql, ownerUuid: string, kind: TopLevelKind): Promise<NodeRow | undefined> {
  return (await sql.get('SELECT * FROM nodes WHERE owner_uuid = ? AND top_kind = ?', [ownerUuid, kind])) as NodeRow | undefined;
}

export async function getChildByName(sql: Sql, parentUuid: string, name: string): Promise<NodeRow | undefined> {
  return (await sql.get('SELECT * FROM nodes WHERE parent_uuid = ? AND name = ?', [parentUuid, name])) as NodeRow | undefined;
}

export async function listChildren(sql: Sql, parentUuid: string): Promise<NodeRow[]> {
  return (await sql.all(`SELECT * FROM nodes WHERE parent_uuid = ? ORDER BY type = 'File', name`, [parentUuid])) as NodeRow[];
}

/** The chain from the top-level folder down to `node` (inclusive). */
export async function ancestry(sql: Sql, node: NodeRow): Promise<NodeRow[]> {
  const rows = (await sql.all(`WITH RECURSIVE chain(uuid, depth) AS (
         SELECT ?, 0
         UNION ALL
         SELECT n.parent_uuid, chain.depth + 1 FROM nodes n JOIN chain ON n.uuid = chain.uuid
         WHERE n.parent_uuid IS NOT NULL
       )
       SELECT nodes.* FROM chain JOIN nodes ON nodes.uuid = chain.uuid ORDER BY chain.depth DESC`, [node.uuid])) as NodeRow[];
  return rows;
}

/**
 * Top-level kinds by node, per SQLite connection (installTopKindCache). Uploads, new folders,
 * copies and moves ask for every request whether their target lies under trash or a virtual
 * folder; the ancestry walk that answers it cost ~35 µs, twice per small upload. Sound because a
 * TEMP trigger of the connection empties the map whenever any node changes parent (in a
 * transaction that commits or rolls back alike), and entries are learnt only outside
 * transactions, from committed rows, and only when no reparenting happened between the walk and
 * the learning (the generation). Bounded: emptied when it holds TOP_KIND_CACHE_LIMIT nodes (~100
 * bytes each). PostgreSQL has no such trigger for another instance's moves: there every answer
 * is walked.
 */
interface TopKindCache {
  kinds: Map<string, TopLevelKind | null>;
  generation: number;
}
const topKindCaches = new WeakMap<Database.Database, TopKindCache>();
const TOP_KIND_CACHE_LIMIT = 20_000;

/** Lets topKindOf remember answers on this SQLite connection (openDatabase calls it). */
export function installTopKindCache(db: Database.Database): void {
  const cache: TopKindCache = { kinds: new Map(), generation: 0 };
  db.function('driveway_node_reparented', { deterministic: false, varargs: false }, () => {
    cache.kinds.clear();
    cache.generation += 1;
    return null;
  });
  db.exec(`CREATE TEMP TRIGGER IF NOT EXISTS node_reparented AFTER UPDATE OF parent_uuid ON main.nodes
           WHEN OLD.parent_uuid IS NOT NEW.parent_uuid
           BEGIN SELECT driveway_node_reparented(); END`);
  topKindCaches.set(db, cache);
}

/** The kind of the top-level folder `node` lives under (its own for a top-level folder). */
export async function topKindOf(sql: Sql, node: Pick<NodeRow, 'uuid' | 'parent_uuid' | 'top_kind'>): Promise<TopLevelKind | null> {
  if (node.parent_uuid === null) return node.top_kind;
  const connection = sql.dialect === 'sqlite' ? sqliteConnectionOf(sql) : undefined;
  const cache = connection && topKindCaches.get(connection);
  const known = cache?.kinds.get(node.uuid);
  if (known !== undefined) return known;
  const generation = cache?.generation;
  const chain = await ancestry(sql, node as NodeRow);
  const kind = chain[0]?.top_kind ?? null;
  if (cache && !sql.inTransaction && cache.generation === generation) {
    if (cache.kinds.size >= TOP_KIND_CACHE_LIMIT) cache.kinds.clear();
    cache.kinds.set(node.uuid, kind);
  }
  return kind;
}

/** True when `candidate` is `ancestor` or lies below it. */
export async function isSelfOrDescendant(sql: Sql, ancestorUuid: string, candidateUuid: string): Promise<boolean> {
  const row = (await sql.get(`WITH RECURSIVE up(uuid) AS (
         SELECT ?
         UNION ALL
         SELECT n.parent_uuid FROM nodes n JOIN up ON n.uuid = up.uuid WHERE n.parent_uuid IS NOT NULL
       )
       SELECT 1 AS hit FROM up WHERE uuid = ? LIMIT 1`, [candidateUuid, ancestorUuid]));
  return row !== undefined;
}

/** Every node below `root` (exclusive), parents before children. */
export async function descendants(sql: Sql, rootUuid: string): Promise<NodeRow[]> {
  return (await sql.all(`WITH RECURSIVE sub(uuid, depth) AS (
         SELECT uuid, 1 FROM nodes WHERE parent_uuid = ?
         UNION ALL
         SELECT n.uuid, sub.depth + 1 FROM nodes n JOIN sub ON n.parent_uuid = sub.uuid
       )
       SELECT nodes.* FROM sub JOIN nodes ON nodes.uuid = sub.uuid ORDER BY sub.depth`, [rootUuid])) as NodeRow[];
}

/** Marks a folder as changed (its listing differs now). */
export async function touch(sql: Sql, uuid: string, now: number): Promise<void> {
  (await sql.run('UPDATE nodes SET updated = ? WHERE uuid = ?', [now, uuid]));
}

/**
 * The nodes `candidates` (a subquery selecting node UUIDs, with `params`) names, except those
 * lying in trash: one walk up from each to its top-level folder. Folders first, by name.
 */
export async function outsideTrash(sql: Sql, candidates: string, ...params: unknown[]): Promise<NodeRow[]> {
  return (await sql.all(`WITH RECURSIVE up(start, uuid, parent) AS (
         SELECT n.uuid, n.uuid, n.parent_uuid FROM nodes n WHERE n.uuid IN (${candidates})
         UNION ALL
         SELECT up.start, p.uuid, p.parent_uuid FROM up JOIN nodes p ON p.uuid = up.parent
       )
       SELECT n.* FROM up
       JOIN nodes top ON top.uuid = up.uuid
       JOIN nodes n ON n.uuid = up.start
       WHERE up.parent IS NULL AND (top.top_kind IS NULL OR top.top_kind <> 'trash')
       ORDER BY n.type = 'File', n.name, n.uuid`, [...params])) as NodeRow[];
}
