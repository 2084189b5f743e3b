/**
 * Search (docs/extensions.md "Search"): the caller's nodes, and their groups' where the
 * membership reads, in their `home` and `incoming` (and trash when asked), below the scope
 * folders when given; never another user's, a group's the caller is not in, or what reaches the
 * caller only through a private share. The hits pass access.ts once more (entriesOf) and come
 * with their paths. The query is answered from the name index (storage/search.ts).
 */
import type { StoreContext } from '../context.js';
import { resolveNodeAccess } from '../access.js';
import { invalid } from '../envelope.js';
import type { AuthenticatedUser } from '../sessions.js';
import { publicId } from '../storage/nodes.js';
import { searchNodes } from '../storage/search.js';
import { orderOf, searchBodySchema, SEARCH_DEFAULT_LIMIT, toCondition, type SearchAnswer } from '../schemas/search.js';
import { parseInput } from './input.js';
import { entriesOf } from './nodes.js';

const SEARCHED_TOPS = ['home', 'incoming'];

export async function searchDrives(ctx: StoreContext, caller: AuthenticatedUser, body: unknown): Promise<SearchAnswer> {
  const query = parseInput(searchBodySchema, body);
  const { sql } = ctx.storage;
  const memberships = (await sql.all('SELECT group_uuid, is_admin, node_permissions FROM group_members WHERE user_uuid = ?', [caller.userUuid])) as Array<{
    group_uuid: string;
    is_admin: number;
    node_permissions: string;
  }>;
  const owners = [caller.userUuid, ...memberships.filter((m) => m.is_admin === 1 || (JSON.parse(m.node_permissions) as string[]).includes('read')).map((m) => m.group_uuid)];
  const scopes: string[] = [];
  for (const id of query.scope ?? []) {
    const { node, access } = await resolveNodeAccess(sql, caller, id, 'read');
    if (node.type !== 'Dir') throw invalid('a search scope must be a folder');
    // Reached through a private share: not one of the drives a search covers.
    if (access.viaShare !== undefined || !owners.includes(node.owner_uuid)) throw invalid('a search scope must lie in your drives or your groups\' drives');
    scopes.push(node.uuid);
  }
  const { hits, more } = await searchNodes(sql, {
    owners,
    tops: query.trash === true ? [...SEARCHED_TOPS, 'trash'] : SEARCHED_TOPS,
    scopes,
    where: query.where && toCondition(query.where),
    order: orderOf(query),
    limit: query.limit ?? SEARCH_DEFAULT_LIMIT,
    offset: query.offset ?? 0,
    callerUuid: caller.userUuid,
  });
  const entries = await entriesOf(ctx, caller, hits.map((h) => h.node));
  const chains = new Map(hits.map((h) => [h.node.uuid, h.chain]));
  return {
    hits: entries.map((entry) => ({ ...entry, path: (chains.get(entry.uuid) ?? []).map((row) => ({ name: row.name, uuid: publicId(row, caller.userUuid) })) })),
    more,
  };
}
