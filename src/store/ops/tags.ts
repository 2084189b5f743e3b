/**
 * A group's tags (docs/api.md "Groups for members"): members list them; members holding the `create`
 * tag permission, and group administrators, create them. A tag's class must be one of
 * `store.tagClasses`; its name is unique in the group, case-insensitively.
 */
import { withSql, type StoreContext } from '../context.js';
import { insertTag, tagsOf, type TagRow } from '../storage/groups.js';
import { conflict, forbidden, invalid } from '../envelope.js';
import { resolveGroup } from '../access.js';
import { tagSchema, tagsQuerySchema, type TagRecord } from '../schemas/groups.js';
import type { AuthenticatedUser } from '../sessions.js';
import { parseInput } from './input.js';

const record = (row: TagRow): TagRecord => ({ name: row.name, class: row.class, creator_uuid: row.creator_uuid, created: row.created });

/** The group's tags by name; `limit` (0 or absent: all) caps how many. */
export async function listTags(ctx: StoreContext, caller: AuthenticatedUser, groupUuid: string, query: unknown): Promise<TagRecord[]> {
  const { group } = await resolveGroup(ctx.storage.sql, caller, groupUuid, 'member');
  const { limit } = parseInput(tagsQuerySchema, query);
  return (await tagsOf(ctx.storage.sql, group.uuid, limit ?? 0)).map(record);
}

export async function createTag(ctx: StoreContext, caller: AuthenticatedUser, groupUuid: string, body: unknown): Promise<TagRecord> {
  return ctx.storage.sql.transaction(async (tx) => {
    const { group, membership, isGroupAdmin } = await resolveGroup(tx, caller, groupUuid, 'member');
    if (!isGroupAdmin && !membership?.tagPermissions.includes('create')) throw forbidden('the create tag permission is required');
    const input = parseInput(tagSchema, body);
    const classes = ctx.config.store.tagClasses;
    if (!classes.includes(input.class)) throw invalid(`class: unknown tag class ${JSON.stringify(input.class)}; allowed: ${classes.join(', ')}`);
    const row: TagRow = { name: input.name, class: input.class, creator_uuid: caller.userUuid, created: ctx.clock.now() };
    if (!(await insertTag(tx, group.uuid, { name: row.name, class: row.class, creatorUuid: caller.userUuid, nowMs: row.created }))) {
      throw conflict('name: the group has a tag of this name', 'tag_exists');
    }
    return record(row);
  });
}
