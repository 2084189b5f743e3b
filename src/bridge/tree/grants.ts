/**
 * Permissions and quota: what a user may do where (privileges), and how much room is left there
 * (quota), each answer remembered for a short TTL and shared by concurrent callers. Nothing is
 * granted that the store did not confirm (myaccess, ownership, the caller's Group entry); the
 * store still decides every operation it guards, this only answers early and saves calls. Writes
 * elsewhere call afterWrite, which outdates the quota they changed.
 */
import { LRUCache } from 'lru-cache';
import { StoreError, type GroupEntry, type NodeId } from '../../store-client/contract.js';
import { ExtensionRoute } from '../extension-route.js';
import { groupOfTop } from '../namespace.js';
import type { BridgeUser } from '../sessions.js';
import { withSession, type TreeContext } from './context.js';
import type { Resource } from './resource.js';

/** The node permissions (docs/api.md), as myaccess reports them. */
export type Privilege = 'read' | 'write' | 'delete' | 'download';
export const ALL_PRIVILEGES: ReadonlySet<Privilege> = new Set(['read', 'write', 'delete', 'download']);
/** The group share permissions that create a share (store access.ts SharePermission): holding one, a member may share on. */
const CREATES_SHARE: ReadonlySet<string> = new Set(['public_create', 'private_create', 'upload_link_create']);
const READ_ONLY: ReadonlySet<Privilege> = new Set(['read']);
const NONE: ReadonlySet<Privilege> = new Set();

/**
 * What the bridge knows a user may do on a tree. `confirmed`: what the store said (myaccess, the
 * user's own tree, or the Group entry). `passed`: what the bridge lets through to the store for
 * the operations the store guards itself; equal to `confirmed` unless the store has no myaccess.
 */
interface Granted {
  confirmed: ReadonlySet<Privilege>;
  passed: ReadonlySet<Privilege>;
}
const OWN: Granted = { confirmed: ALL_PRIVILEGES, passed: ALL_PRIVILEGES };
const MADE_UP: Granted = { confirmed: READ_ONLY, passed: READ_ONLY };
/** myaccess answered 404 for this node: unknown to the user, so nothing. */
const NOTHING: Granted = { confirmed: NONE, passed: NONE };
/** A store without myaccess, where nothing else tells: the store decides what it guards, the bridge allows nothing of its own. */
const UNCONFIRMED: Granted = { confirmed: NONE, passed: ALL_PRIVILEGES };

/**
 * Reported as available space when the store sets no limit (disk_quota 0): a large real number
 * (1 PiB), because 0 free makes Finder and other file managers refuse every copy
 * (docs/client-quirks.md §6b). PROPFIND's quota properties and OCS cloud/user both say it.
 */
export const UNLIMITED_AVAILABLE_BYTES = 2 ** 50;

export interface Quota {
  usedBytes: number;
  /** Infinity when the store reports no limit. */
  availableBytes: number;
}

export interface GrantsOptions {
  /** How long a quota answer is reused. */
  quotaTtlMs?: number | undefined;
  /** How long a myaccess answer is reused (a permission change shows after it). */
  privilegesTtlMs?: number | undefined;
}

export class Grants {
  private readonly quotas: LRUCache<string, Quota | 'none'>;
  private readonly granted: LRUCache<string, Promise<Granted>>;
  /** The caller's Group entries by user, for mayShare, remembered as long as myaccess answers. */
  private readonly groupSharing: LRUCache<string, Promise<GroupEntry[]>>;
  /** Whether the store answers myaccess (hasMyAccess). */
  private readonly myAccessRoute = new ExtensionRoute(() =>
    this.ctx.log?.warn('the store has no myaccess: LOCK and PROPPATCH are allowed only where ownership or a Group entry confirms write (docs/bridge-design.md)'),
  );

  constructor(
    private readonly ctx: TreeContext,
    options: GrantsOptions = {},
  ) {
    this.quotas = new LRUCache({ max: 10_000, ttl: options.quotaTtlMs ?? 5_000 });
    this.granted = new LRUCache({ max: 10_000, ttl: Math.max(1, options.privilegesTtlMs ?? 2_000) });
    this.groupSharing = new LRUCache({ max: 10_000, ttl: Math.max(1, options.privilegesTtlMs ?? 2_000) });
  }

  /**
   * What the user may do to `resource`: everything in their own tree (the store still decides,
   * this only saves a call); in another owner's tree (a group's), what myaccess on that tree's
   * top-level folder says; below `shared_with_you`, what myaccess on the shared node says (asked
   * once per TTL and shared by concurrent callers); only `read` on the root and the virtual
   * collections. Nothing is granted that the store did not confirm: a myaccess that answers 404
   * for this node grants nothing; a store without myaccess at all confirms only what follows from
   * ownership and from the caller's Group entry (grantsWithoutMyAccess). `passedToStore` asks
   * instead what the bridge lets through to the store for an operation the store itself guards
   * (PUT, MKCOL, DELETE, MOVE, COPY, GET): there a store without myaccess decides alone, and its
   * 403 reaches the client as one. LOCK and PROPPATCH, which only the bridge guards, and PROPFIND's
   * report ask what is confirmed.
   */
  async privileges(user: BridgeUser, resource: Resource, options: { exact?: boolean; passedToStore?: boolean } = {}): Promise<ReadonlySet<Privilege>> {
    const granted = await this.grantsOf(user, resource, options.exact ?? false);
    return options.passedToStore ? granted.passed : granted.confirmed;
  }

  private grantsOf(user: BridgeUser, resource: Resource, exact: boolean): Promise<Granted> {
    if (resource.kind === 'root' || resource.kind === 'virtual' || !resource.top) return Promise.resolve(MADE_UP);
    // A group's top-level folder decides for its tree. In a share, what holds for the shared node
    // may not hold below it (a writable share lets the recipient delete below it, never the shared
    // node itself): `exact` asks the resource's own node, else the shared node answers for all.
    const shared = resource.shareRoot === undefined ? undefined : exact ? resource.entry.id : resource.shareRoot;
    const asked = shared ?? (resource.top.id.includes(':') ? resource.top.id : undefined);
    if (asked === undefined) return Promise.resolve(OWN);
    return this.myAccessOf(user, asked, shared === undefined ? groupOfTop(resource.top.id) : undefined);
  }

  /** Every remembered myaccess answer is stale (shares or memberships changed elsewhere). */
  forget(): void {
    this.granted.clear();
    this.groupSharing.clear();
  }

  /**
   * Whether the user may share `resource` on (ownCloud's R): a node of their own tree, as its
   * owner (the store lets only a user's node's owner manage its shares); a node of a group's tree,
   * as the group's administrator or a member holding a share permission that creates a link or a
   * private share (the caller's Group entry, one listGroups per TTL); never what reached them
   * through a private share, a top-level folder, the trash's entries (the store shares none of
   * those), the root or the made-up collections.
   */
  async mayShare(user: BridgeUser, resource: Resource): Promise<boolean> {
    if (resource.kind !== 'node' || !resource.top || resource.top.name === 'trash' || resource.shareRoot !== undefined) return false;
    const groupId = groupOfTop(resource.top.id);
    if (groupId === undefined) return true;
    const key = user.userId;
    let groups = this.groupSharing.get(key);
    if (!groups) {
      groups = withSession(user, (s) => this.ctx.client.listGroups(s)).catch((err: unknown) => {
        this.groupSharing.delete(key);
        if (err instanceof StoreError && (err.kind === 'not-found' || err.kind === 'forbidden' || err.kind === 'invalid')) return [];
        throw err;
      });
      this.groupSharing.set(key, groups);
    }
    const entry = (await groups).find((g) => g.id === groupId);
    return entry !== undefined && (entry.isAdmin || entry.sharePermissions.some((p) => CREATES_SHARE.has(p)));
  }

  /**
   * myaccess of one node, asked once per TTL and shared by concurrent callers. `groupId`: the
   * group whose tree the node is the top of (what a store without myaccess is asked instead).
   */
  private myAccessOf(user: BridgeUser, node: NodeId, groupId: string | undefined): Promise<Granted> {
    const key = `${user.userId}\0${node}`;
    const cached = this.granted.get(key);
    if (cached) return cached;
    const asked = this.askMyAccess(user, node, groupId).catch((err: unknown) => {
      this.granted.delete(key);
      throw err;
    });
    this.granted.set(key, asked);
    return asked;
  }

  private async askMyAccess(user: BridgeUser, node: NodeId, groupId: string | undefined): Promise<Granted> {
    if (this.myAccessRoute.isAbsent) return this.grantsWithoutMyAccess(user, groupId);
    let granted: string[];
    try {
      granted = await withSession(user, (s) => this.ctx.client.myAccess(s, node));
    } catch (err) {
      if (!(err instanceof StoreError && err.kind === 'not-found')) throw err;
      // Either the store has no such route, or this node is unknown to this user (deleted since
      // it was listed, a share ended): only the second grants nothing, and the two 404s look alike.
      if (await this.hasMyAccess(user, err)) return NOTHING;
      return this.grantsWithoutMyAccess(user, groupId);
    }
    this.myAccessRoute.markPresent();
    const confirmed = new Set(granted.filter((p): p is Privilege => ALL_PRIVILEGES.has(p as Privilege))) as ReadonlySet<Privilege>;
    return { confirmed, passed: confirmed };
  }

  /**
   * Whether the store answers myaccess at all, learned once per store (then kept for the life of
   * this bridge): driveway's store names a route it lacks (`not_implemented`, e.g. edition 1.0);
   * of another server, the caller's own home is asked, which exists for every user, so a 404
   * there means the route is missing. A failure of that question (store unreachable) decides
   * nothing and is thrown.
   */
  private hasMyAccess(user: BridgeUser, refusal: StoreError): Promise<boolean> {
    return this.myAccessRoute.learn(refusal, () =>
      withSession(user, (s) => this.ctx.client.myAccess(s, 'home' as NodeId)).then(
        () => true,
        (err: unknown) => {
          if (err instanceof StoreError && err.kind === 'not-found') return false;
          throw err;
        },
      ),
    );
  }

  /**
   * A store without myaccess: what the interface still shows. In a group's tree, the caller's
   * Group entry (`node_permissions` of GET /api/groups) confirms what it lists; not a member, or
   * no groups to ask, confirms nothing. Below `shared_with_you` nothing the interface shows says
   * what a share grants: nothing is confirmed. Operations the store guards itself pass to it.
   */
  private async grantsWithoutMyAccess(user: BridgeUser, groupId: string | undefined): Promise<Granted> {
    if (groupId === undefined) return UNCONFIRMED;
    let groups: GroupEntry[];
    try {
      groups = await withSession(user, (s) => this.ctx.client.listGroups(s));
    } catch (err) {
      if (err instanceof StoreError && (err.kind === 'not-found' || err.kind === 'forbidden' || err.kind === 'invalid')) return UNCONFIRMED;
      throw err;
    }
    const permissions = groups.find((g) => g.id === groupId)?.nodePermissions ?? [];
    const confirmed = new Set(permissions.filter((p): p is Privilege => ALL_PRIVILEGES.has(p as Privilege))) as ReadonlySet<Privilege>;
    return { confirmed, passed: ALL_PRIVILEGES };
  }

  /**
   * The quota that applies where `resource` lies: a group's for its tree (GET /api/groups/{uuid},
   * whose record the interface leaves open: read when it carries disk_quota and disk_used), the user's
   * otherwise (GET /api/user). Undefined when the server says neither (edition 1.0, a foreign
   * group record without them): the quota properties are then answered 404.
   */
  async quota(user: BridgeUser, resource?: Resource): Promise<Quota | undefined> {
    const groupId = groupOfTop(resource?.top?.id);
    const key = groupId === undefined ? `user\0${user.userId}` : `group\0${user.userId}\0${groupId}`;
    const cached = this.quotas.get(key);
    if (cached) return cached === 'none' ? undefined : cached;
    let usage: { quotaBytes: number; usedBytes: number } | undefined;
    try {
      if (groupId === undefined) {
        const profile = await withSession(user, (s) => this.ctx.client.currentUser(s));
        usage = { quotaBytes: profile.diskQuotaBytes, usedBytes: profile.diskUsedBytes };
      } else {
        usage = await withSession(user, (s) => this.ctx.client.groupUsage(s, groupId));
      }
    } catch (err) {
      if (!(err instanceof StoreError && (err.kind === 'not-found' || err.kind === 'forbidden'))) throw err;
    }
    if (!usage) {
      this.quotas.set(key, 'none');
      return undefined;
    }
    const quota: Quota = {
      usedBytes: usage.usedBytes,
      availableBytes: usage.quotaBytes > 0 ? Math.max(0, usage.quotaBytes - usage.usedBytes) : Number.POSITIVE_INFINITY,
    };
    this.quotas.set(key, quota);
    return quota;
  }

  /**
   * After a write into the trees of `tops` the usage shown there is outdated: the user's own, and
   * the group's the write went into (as this user sees it; other members see it after the quota TTL).
   */
  afterWrite(user: BridgeUser, ...tops: Array<NodeId | undefined>): void {
    this.quotas.delete(`user\0${user.userId}`);
    for (const top of tops) {
      const groupId = groupOfTop(top);
      if (groupId !== undefined) this.quotas.delete(`group\0${user.userId}\0${groupId}`);
    }
  }
}
