/**
 * The one place that decides who may do what to a node. A caller who may not read a node
 * learns nothing about it: unknown and not-yours both answer 404 with the same message.
 * A caller who may read but lacks the permission asked for gets 403.
 * Today a node is the caller's when its owner is the caller; group ownership and group
 * permissions plug in here (TODO(#groups) when the groups issue lands).
 */
import type { AuthenticatedUser } from './sessions.js';
import type { Db } from './db/database.js';
import { getNode, getTopLevel, parseIdentifier, type NodeRow } from './db/nodes.js';
import { forbidden, notFound } from './envelope.js';

export type Permission = 'read' | 'write' | 'delete' | 'download';
export const ALL_PERMISSIONS: readonly Permission[] = ['read', 'write', 'delete', 'download'];

/** Permissions `caller` holds on `node`; empty when the node is not theirs to see. */
export function permissionsOn(_db: Db, caller: AuthenticatedUser, node: NodeRow): Permission[] {
  if (node.owner_type === 'User' && node.owner_uuid === caller.userUuid) return [...ALL_PERMISSIONS];
  return [];
}

/**
 * Resolves a `{node_uuid}` path value (UUID or top-level identifier, bare or qualified) to a
 * node the caller may read and that grants `permission`. Throws 404 when unknown or unreadable,
 * 403 when readable without the permission.
 */
export function resolveNode(db: Db, caller: AuthenticatedUser, identifier: string, permission: Permission = 'read'): NodeRow {
  const parsed = parseIdentifier(identifier);
  if (!parsed) throw notFound();
  const node =
    parsed.kind === 'uuid'
      ? getNode(db, parsed.uuid as string)
      : getTopLevel(db, parsed.owner ?? caller.userUuid, parsed.top as NonNullable<typeof parsed.top>);
  if (!node) throw notFound();
  const granted = permissionsOn(db, caller, node);
  if (!granted.includes('read')) throw notFound();
  if (!granted.includes(permission)) throw forbidden(`${permission} permission required`);
  return node;
}
