/**
 * The part of the drive that the bridge makes up rather than lists from the store: the root,
 * `/webdrive/` (mount points named by WebDrive endpoints) and `/groups/` (one collection per
 * group of the caller, each holding the group's top-level folders); the views below name
 * theirs. It learns endpoints and groups only through the interface (GET /api/user/webdrive,
 * GET /api/groups, GET /api/groups/{uuid}/webdrive) with the caller's own session, so an
 * endpoint or group the caller may not see simply does not exist here (404, nothing revealed).
 * Answers are cached per user in the metadata cache for its TTL, so a changed or deleted
 * endpoint is followed within the TTL.
 *
 * A server without these endpoints (edition 1.0, or one that lacks groups) gets no `groups`
 * collection and an empty `/webdrive/`: nothing here is required of a foreign server.
 *
 * Virtual collections have ids that are also their lock keys: `webdrive:<user>`,
 * `groups:<user>`, `group:<group uuid>` (never a store id: those are UUIDs or `<top>:<uuid>`).
 *
 * The other made-up names, each with its own module:
 * - `/versions/` (versions-view.ts): every kept revision, mirroring the drive, read-only; listed
 *   in the root for Finder and Explorer only.
 * - `/restore/<name>` (RESTORE below, verbs/move.ts): never listed, only a MOVE's Destination,
 *   which puts a trash entry back where it was deleted from.
 * - `/remote.php/dav/versions/` and `/remote.php/dav/trashbin/` (nextcloud-restore.ts):
 *   Nextcloud's names for the same two things.
 */
import { StoreError, type GroupEntry, type NodeEntry, type NodeId, type StoreClient, type StoreSession } from '../store-client/contract.js';
import { normalizeName } from './href.js';
import type { Listing, MetadataCache } from './metadata-cache.js';
import type { BridgeUser } from './sessions.js';

export const TOP_LEVEL = ['home', 'incoming', 'trash', 'public_shares', 'private_shares', 'favorites', 'shared_with_you'] as const;
export type TopLevelName = (typeof TOP_LEVEL)[number];

/**
 * Top-level folders whose entries are derived from other folders, not stored in them: the
 * caller's starred nodes, the owner's nodes with links or private shares, the nodes shared with
 * the caller. An entry there is a node that lives elsewhere (often another owner's), so the
 * bridge never deletes, moves, locks or patches through such an entry or folder (docs/bridge-design.md).
 */
export const DERIVED_VIEWS: ReadonlySet<TopLevelName> = new Set(['favorites', 'public_shares', 'private_shares', 'shared_with_you']);

export const WEBDRIVE = 'webdrive';
/**
 * `/restore/<any name>`: the Destination of a MOVE that puts a trash entry back where it was
 * deleted from (Nextcloud's `trashbin/<user>/restore/<name>`); nothing is ever there to list.
 */
export const RESTORE = 'restore';
export const GROUPS = 'groups';

export function isTopLevelName(name: string): name is TopLevelName {
  return (TOP_LEVEL as readonly string[]).includes(name);
}

/** The top-level folder an id names: `home` for `home` and `home:<owner>`; undefined for a UUID. */
export function topLevelOfId(id: string): TopLevelName | undefined {
  const name = id.split(':', 1)[0] as string;
  return isTopLevelName(name) ? name : undefined;
}

/** The id of another top-level folder of the same owner: `trash` for `home`, `trash:<g>` for `home:<g>`. */
export function siblingTopId(topId: NodeId, top: TopLevelName): NodeId {
  const colon = topId.indexOf(':');
  return (colon === -1 ? top : `${top}${topId.slice(colon)}`) as NodeId;
}

export type VirtualKind = 'webdrive' | 'groups' | 'group';

/** Which virtual collection an id names, with the group's UUID for a group. */
export function virtualOf(id: string): { kind: VirtualKind; groupId?: string } | undefined {
  if (id.startsWith('webdrive:')) return { kind: 'webdrive' };
  if (id.startsWith('groups:')) return { kind: 'groups' };
  if (id.startsWith('group:')) return { kind: 'group', groupId: id.slice('group:'.length) };
  return undefined;
}

/** A collection's entry: virtual collections and top-level folders carry no size or star. */
export function folder(id: string, name: string, updatedMs = 0): NodeEntry {
  return { id: id as NodeId, name, kind: 'folder', sizeBytes: 0, updatedMs, isStarred: false };
}

/**
 * A group name as a path segment: no `/`, no control characters, not `.` or `..`, NFC, at most
 * 255 bytes. Names equal after this, compared case-insensitively (Finder and Explorer do), get
 * the group UUID's first 8 characters appended, so every group keeps a stable, distinct name.
 */
export function groupSegments(groups: readonly GroupEntry[]): Map<string, GroupEntry> {
  const safe = (name: string): string => {
    let s = normalizeName(name).replace(/[\u0000-\u001f\u007f/\\]/g, '_').trim();
    if (s === '' || s === '.' || s === '..') s = `group ${s}`.trim();
    while (Buffer.byteLength(s, 'utf8') > 240) s = Array.from(s).slice(0, -1).join('');
    return s;
  };
  const byFolded = new Map<string, GroupEntry[]>();
  for (const group of [...groups].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    const key = safe(group.name).toLowerCase();
    const same = byFolded.get(key);
    if (same) same.push(group);
    else byFolded.set(key, [group]);
  }
  const out = new Map<string, GroupEntry>();
  for (const same of byFolded.values()) {
    same.forEach((group, index) => {
      const base = safe(group.name);
      out.set(index === 0 ? base : `${base} (${group.id.replace(/[^0-9a-zA-Z]/g, '').slice(0, 8)})`, group);
    });
  }
  return out;
}

export interface NamespaceOptions {
  client: StoreClient;
  cache: MetadataCache;
  withSession: <T>(user: BridgeUser, call: (session: StoreSession) => Promise<T>) => Promise<T>;
}

export class Namespace {
  private readonly client: StoreClient;
  private readonly cache: MetadataCache;
  private readonly withSession: NamespaceOptions['withSession'];

  constructor(options: NamespaceOptions) {
    this.client = options.client;
    this.cache = options.cache;
    this.withSession = options.withSession;
  }

  rootKey(user: BridgeUser): string {
    return `root:${user.userId}`;
  }

  webdriveId(user: BridgeUser): NodeId {
    return `webdrive:${user.userId}` as NodeId;
  }

  groupsId(user: BridgeUser): NodeId {
    return `groups:${user.userId}` as NodeId;
  }

  /** The caller's groups, or undefined when the server has none to offer (edition 1.0, no groups). */
  private async groupsOf(user: BridgeUser): Promise<GroupEntry[] | undefined> {
    try {
      return await this.withSession(user, (s) => this.client.listGroups(s));
    } catch (err) {
      if (err instanceof StoreError && (err.kind === 'not-found' || err.kind === 'invalid' || err.kind === 'forbidden')) return undefined;
      throw err;
    }
  }

  /** The top-level folders whose ids are given (bare for the caller's own), dated by their details. */
  private async topFolders(user: BridgeUser, ids: Array<[string, NodeId]>): Promise<NodeEntry[]> {
    const found = await Promise.all(
      ids.map(async ([name, id]): Promise<NodeEntry | undefined> => {
        try {
          const d = await this.withSession(user, (s) => this.client.details(s, id));
          return folder(id, name, d.updatedMs ?? 0);
        } catch (err) {
          // A server without this top-level folder simply does not show it.
          if (err instanceof StoreError && (err.kind === 'not-found' || err.kind === 'invalid')) return undefined;
          throw err;
        }
      }),
    );
    return found.filter((e): e is NodeEntry => e !== undefined);
  }

  /** `/`: the seven top-level folders (one details call each: the interface lists none of them), and `groups` when the server has groups. */
  root(user: BridgeUser): Promise<Listing> {
    return this.cache.load(user.userId, this.rootKey(user), async () => {
      const [tops, groups] = await Promise.all([
        this.topFolders(user, TOP_LEVEL.map((t) => [t, t as NodeId])),
        this.groupsOf(user),
      ]);
      if (groups === undefined) return tops;
      const latest = tops.reduce((max, e) => Math.max(max, e.updatedMs), 0);
      return [...tops, folder(this.groupsId(user), GROUPS, latest)];
    });
  }

  /** `/webdrive/`: the endpoints the caller may mount, each a folder whose id is the owner's home. */
  webdrive(user: BridgeUser): Promise<Listing> {
    return this.cache.load(user.userId, this.webdriveId(user), async () => {
      const [own, groups] = await Promise.all([
        this.withSession(user, (s) => this.client.userWebdrive(s)).catch((err: unknown) => {
          if (err instanceof StoreError && (err.kind === 'not-found' || err.kind === 'forbidden')) return undefined;
          throw err;
        }),
        this.groupsOf(user),
      ]);
      const homes: Array<[string, NodeId]> = [];
      if (own) homes.push([own.endpoint, 'home' as NodeId]);
      const groupEndpoints = await Promise.all(
        (groups ?? []).map(async (g) => [g, await this.withSession(user, (s) => this.client.groupWebdrive(s, g.id))] as const),
      );
      for (const [group, endpoint] of groupEndpoints) if (endpoint) homes.push([endpoint.endpoint, `home:${group.id}` as NodeId]);
      return this.topFolders(user, homes);
    });
  }

  /** `/groups/`: one folder per group of the caller, with a unique, path-safe name. */
  groups(user: BridgeUser): Promise<Listing> {
    return this.cache.load(user.userId, this.groupsId(user), async () => {
      const groups = (await this.groupsOf(user)) ?? [];
      const named = [...groupSegments(groups)];
      const homes = await this.topFolders(user, named.map(([, g]) => [g.id, `home:${g.id}` as NodeId]));
      const updated = new Map(homes.map((h) => [h.name, h.updatedMs]));
      return named.map(([name, g]) => folder(`group:${g.id}`, name, updated.get(g.id) ?? 0));
    });
  }

  /** `/groups/<name>/`: the group's top-level folders (`home:<group>`, ...). */
  group(user: BridgeUser, groupId: string): Promise<Listing> {
    return this.cache.load(user.userId, `group:${groupId}`, () => this.topFolders(user, TOP_LEVEL.map((t) => [t, `${t}:${groupId}` as NodeId])));
  }

  /** The listing of a virtual collection, by its id. */
  list(user: BridgeUser, id: NodeId): Promise<Listing> {
    const virtual = virtualOf(id);
    if (!virtual) throw new Error(`${id} is not a virtual collection`);
    if (virtual.kind === 'webdrive') return this.webdrive(user);
    if (virtual.kind === 'groups') return this.groups(user);
    return this.group(user, virtual.groupId as string);
  }
}
