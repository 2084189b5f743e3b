/**
 * `/versions/` as kinds of collections (the names and ids are versions-view.ts's): the view's
 * root (`home`, `incoming`, and `groups` when the caller has groups), its `groups` and a group's
 * (that group's `home` and `incoming`), a mirrored folder (what the real folder holds: its
 * folders as folders, each file as a folder named like it) and a file's revisions (files named
 * by their time). Everything here is read-only and made up (virtual).
 *
 * A mirrored folder follows the real folder's cached listing (so a file written a moment ago is
 * there); a file's revisions are cached like a folder, forgotten when this bridge writes the
 * file (forgetRevisions) and otherwise after the cache's TTL. Over a store without the revision
 * listing (docs/extensions.md "Trash and revisions from a client") a file's folder is empty.
 */
import { StoreError, type NodeEntry, type NodeId, type RevisionEntry } from '../../store-client/contract.js';
import type { Listing, MetadataCache } from '../metadata-cache.js';
import { folder, GROUP_PREFIX } from '../namespace.js';
import type { BridgeUser } from '../sessions.js';
import {
  MIRROR_PREFIX,
  REVISIONS_PREFIX,
  revisionId,
  revisionNames,
  revisionsIdOf,
  VERSIONS_GROUP_PREFIX,
  VERSIONS_GROUPS_PREFIX,
  VERSIONS_ROOT_PREFIX,
} from '../versions-view.js';
import { listedChild, madeUpMember, type Collection } from './collection.js';
import { withSession, type TreeContext } from './context.js';
import type { Resource } from './resource.js';

/** After a write to a file (a PUT, a save, a restore): its revisions are outdated for every user. */
export function forgetRevisions(cache: MetadataCache, file: NodeId): void {
  cache.forget(revisionsIdOf(file));
}

/** What the view reads of the drive. */
export interface VersionsSources {
  /** A store folder's listing, as the tree caches it. */
  listing(user: BridgeUser, folder: NodeId): Promise<Listing>;
  /** `/groups/`: the caller's groups as the tree names them (ids `group:<uuid>`); undefined without groups. */
  groups(user: BridgeUser): Promise<Listing | undefined>;
}

/** A kind of the view whose listing is cached under its own id, from `entries`. */
abstract class CachedView implements Collection {
  constructor(protected readonly ctx: TreeContext) {}

  protected abstract entries(user: BridgeUser, id: NodeId): Promise<readonly NodeEntry[]>;

  children(user: BridgeUser, id: NodeId): Promise<Listing> {
    return this.ctx.cache.load(user.userId, id, () => this.entries(user, id));
  }

  child(user: BridgeUser, id: NodeId, name: string): Promise<NodeEntry | undefined> {
    return listedChild(this, user, id, name);
  }

  members(user: BridgeUser, parent: Resource, entries: readonly NodeEntry[]): Resource[] {
    return entries.map((entry) => madeUpMember(user, parent, entry));
  }
}

/** `/versions/`. */
class VersionsRoot extends CachedView {
  constructor(
    ctx: TreeContext,
    private readonly sources: VersionsSources,
  ) {
    super(ctx);
  }

  protected async entries(user: BridgeUser): Promise<readonly NodeEntry[]> {
    const tops = [folder(`${MIRROR_PREFIX}home`, 'home'), folder(`${MIRROR_PREFIX}incoming`, 'incoming')];
    const groups = await this.sources.groups(user);
    return groups && groups.entries.length > 0 ? [...tops, folder(`${VERSIONS_GROUPS_PREFIX}${user.userId}`, 'groups')] : tops;
  }
}

/** `/versions/groups/`. */
class VersionsGroups extends CachedView {
  constructor(
    ctx: TreeContext,
    private readonly sources: VersionsSources,
  ) {
    super(ctx);
  }

  protected async entries(user: BridgeUser): Promise<readonly NodeEntry[]> {
    const groups = await this.sources.groups(user);
    return (groups?.entries ?? []).map((g) => folder(`${VERSIONS_GROUP_PREFIX}${g.id.slice(GROUP_PREFIX.length)}`, g.name, g.updatedMs));
  }
}

/** `/versions/groups/<name>/`. */
class VersionsGroup extends CachedView {
  protected async entries(_user: BridgeUser, id: NodeId): Promise<readonly NodeEntry[]> {
    const groupId = id.slice(VERSIONS_GROUP_PREFIX.length);
    return [folder(`${MIRROR_PREFIX}home:${groupId}`, 'home'), folder(`${MIRROR_PREFIX}incoming:${groupId}`, 'incoming')];
  }
}

/** A file's revisions as files; none over a store without the revision listing. */
class FileRevisions extends CachedView {
  protected async entries(user: BridgeUser, id: NodeId): Promise<readonly NodeEntry[]> {
    const file = id.slice(REVISIONS_PREFIX.length) as NodeId;
    const { client } = this.ctx;
    let revisions: RevisionEntry[];
    let name: string;
    try {
      [revisions, name] = await withSession(user, (s) => Promise.all([client.listRevisions(s, file), client.details(s, file).then((d) => d.name)]));
    } catch (err) {
      // No such route (a foreign store, edition 1.0), or the file is gone meanwhile: nothing to show.
      if (err instanceof StoreError && (err.kind === 'not-found' || err.httpStatus === 405 || err.httpStatus === 501)) return [];
      throw err;
    }
    const names = revisionNames(name, revisions);
    return revisions.map((r, i) => ({
      id: revisionId(file, r.revision),
      name: names[i] as string,
      kind: 'file',
      sizeBytes: r.sizeBytes,
      updatedMs: r.createdMs,
      revision: r.revision,
      isStarred: false,
      ...(r.checksums ? { checksums: r.checksums } : {}),
    }));
  }
}

/** A mirrored folder's listing, remembered per listing object of the real folder and its patch count. */
interface Mirror {
  changes: number;
  listing: Listing;
}

/** A mirrored folder: `versions-of:<real folder id>`. */
class MirroredFolder implements Collection {
  /** Mirrors by the real folder's listing: as fresh as it (the metadata cache keeps it so), one object while it holds. */
  private readonly mirrors = new WeakMap<Listing, Mirror>();

  constructor(private readonly sources: VersionsSources) {}

  async children(user: BridgeUser, id: NodeId): Promise<Listing> {
    const real = await this.sources.listing(user, id.slice(MIRROR_PREFIX.length) as NodeId);
    const known = this.mirrors.get(real);
    if (known && known.changes === real.changes) return known.listing;
    const entries = real.entries.map((e) => folder(e.kind === 'folder' ? `${MIRROR_PREFIX}${e.id}` : revisionsIdOf(e.id), e.name, e.updatedMs));
    const listing: Listing = { entries, byName: new Map(entries.map((e) => [e.name.normalize('NFC'), e])), changes: 0 };
    this.mirrors.set(real, { changes: real.changes, listing });
    return listing;
  }

  child(user: BridgeUser, id: NodeId, name: string): Promise<NodeEntry | undefined> {
    return listedChild(this, user, id, name);
  }

  members(user: BridgeUser, parent: Resource, entries: readonly NodeEntry[]): Resource[] {
    return entries.map((entry) => madeUpMember(user, parent, entry));
  }
}

/** The view's kinds by the id prefix each owns. */
export function versionsKinds(ctx: TreeContext, sources: VersionsSources): Array<[string, Collection]> {
  return [
    [VERSIONS_ROOT_PREFIX, new VersionsRoot(ctx, sources)],
    [VERSIONS_GROUPS_PREFIX, new VersionsGroups(ctx, sources)],
    [VERSIONS_GROUP_PREFIX, new VersionsGroup(ctx)],
    [MIRROR_PREFIX, new MirroredFolder(sources)],
    [REVISIONS_PREFIX, new FileRevisions(ctx)],
  ];
}
