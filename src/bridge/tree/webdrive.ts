/**
 * `/webdrive/`: the WebDrive endpoints the caller may mount, each a folder whose id is the
 * owner's home (`home`, or `home:<group>` for a group's endpoint the caller is shown), learned
 * through GET /api/user/webdrive and GET /api/groups/{uuid}/webdrive with the caller's session.
 */
import { StoreError, type NodeEntry, type NodeId } from '../../store-client/contract.js';
import type { Listing } from '../metadata-cache.js';
import { webdriveId } from '../namespace.js';
import type { BridgeUser } from '../sessions.js';
import { listedChild, topMember, type Collection } from './collection.js';
import { withSession, type TreeContext } from './context.js';
import type { Resource } from './resource.js';
import { groupsOf, topFolders } from './top-folders.js';

export class Webdrive implements Collection {
  constructor(private readonly ctx: TreeContext) {}

  children(user: BridgeUser): Promise<Listing> {
    const { client } = this.ctx;
    return this.ctx.cache.load(user.userId, webdriveId(user.userId), async () => {
      const [own, groups] = await Promise.all([
        withSession(user, (s) => client.userWebdrive(s)).catch((err: unknown) => {
          if (err instanceof StoreError && (err.kind === 'not-found' || err.kind === 'forbidden')) return undefined;
          throw err;
        }),
        groupsOf(this.ctx, user),
      ]);
      const homes: Array<[string, NodeId]> = [];
      if (own) homes.push([own.endpoint, 'home' as NodeId]);
      const groupEndpoints = await Promise.all((groups ?? []).map(async (g) => [g, await withSession(user, (s) => client.groupWebdrive(s, g.id))] as const));
      for (const [group, endpoint] of groupEndpoints) if (endpoint) homes.push([endpoint.endpoint, `home:${group.id}` as NodeId]);
      return topFolders(this.ctx, user, homes);
    });
  }

  child(user: BridgeUser, id: NodeId, name: string): Promise<NodeEntry | undefined> {
    return listedChild(this, user, id, name);
  }

  members(user: BridgeUser, parent: Resource, entries: readonly NodeEntry[]): Resource[] {
    return entries.map((entry) => topMember(user, parent, entry));
  }
}
