/**
 * What the made-up collections above the store's folders read: top-level folders by id (one
 * details call each: the interface lists none of them) and the caller's groups. A server without
 * a top-level folder, or without groups, simply does not show them.
 */
import { createHash } from 'node:crypto';
import { StoreError, type GroupEntry, type NodeEntry, type NodeId } from '../../store-client/contract.js';
import { folder } from '../namespace.js';
import type { BridgeUser } from '../sessions.js';
import { withSession, type TreeContext } from './context.js';

/** The top-level folders whose ids are given (bare for the caller's own) with their names, dated by their details. */
export async function topFolders(ctx: TreeContext, user: BridgeUser, ids: Array<[string, NodeId]>): Promise<NodeEntry[]> {
  const found = await Promise.all(
    ids.map(async ([name, id]): Promise<NodeEntry | undefined> => {
      try {
        const d = await withSession(user, (s) => ctx.client.details(s, id));
        return { ...folder(id, name, d.updatedMs ?? 0), ...treeFieldsOf(d) };
      } catch (err) {
        // A server without this top-level folder simply does not show it, nor is one shown whose
        // details the caller may not read (a group membership without `read`): the collections
        // above derive their ETags from these, and one refusal must not refuse them all.
        if (err instanceof StoreError && (err.kind === 'not-found' || err.kind === 'invalid' || err.kind === 'forbidden')) return undefined;
        throw err;
      }
    }),
  );
  return found.filter((e): e is NodeEntry => e !== undefined);
}

/** The tree version and recursive size a store gave (driveway's: docs/extensions.md "Tree versions and sizes"), as entry fields. */
export function treeFieldsOf(from: Pick<NodeEntry, 'treeEtag' | 'treeSizeBytes'> | undefined): Pick<NodeEntry, 'treeEtag' | 'treeSizeBytes'> {
  return { ...(from?.treeEtag !== undefined ? { treeEtag: from.treeEtag } : {}), ...(from?.treeSizeBytes !== undefined ? { treeSizeBytes: from.treeSizeBytes } : {}) };
}

/**
 * What a made-up collection shows of its members' tree versions: a digest of theirs (or of their
 * times, over a store without tree versions), and the sum of the sizes known.
 */
export function derivedTreeFields(entries: readonly NodeEntry[]): Pick<NodeEntry, 'treeEtag' | 'treeSizeBytes'> {
  const digest = createHash('sha1');
  let size = 0;
  for (const entry of entries) {
    digest.update(`${entry.id}\0${entry.treeEtag ?? entry.updatedMs}\n`);
    size += entry.treeSizeBytes ?? 0;
  }
  return { treeEtag: digest.digest('hex').slice(0, 20), treeSizeBytes: size };
}

/** The caller's groups, or undefined when the server has none to offer (edition 1.0, no groups). */
export async function groupsOf(ctx: TreeContext, user: BridgeUser): Promise<GroupEntry[] | undefined> {
  try {
    return await withSession(user, (s) => ctx.client.listGroups(s));
  } catch (err) {
    if (err instanceof StoreError && (err.kind === 'not-found' || err.kind === 'invalid' || err.kind === 'forbidden')) return undefined;
    throw err;
  }
}
