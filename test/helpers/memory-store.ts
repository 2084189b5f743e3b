/**
 * An in-memory server of the interface behind the StoreClient contract: the only fake allowed
 * (docs: STYLE §4), for unit tests of the bridge core (test/unit/bridge/). It passes the same
 * contract suite as the real store over both transports (test/contract/store-client.test.ts), so
 * what the bridge sees of it is what it sees of a store: the same records, the same StoreError
 * kinds, codes and statuses (built by classify(), as local-client.ts builds them), the same tree
 * rules (docs/store-semantics.md "Names", "Nodes", "Upload": trash with its origin, "delete for
 * good" folders, groups as owners, quota over every revision, revisions sharing their bytes).
 * Left out: shares and links (the derived views list only stars), 2FA, app passwords, retention.
 *
 * Beside the interface: `admin` (users, groups, memberships, WebDrive endpoints: what a suite
 * does through /api/admin on a real store), `failOn` (fault injection: the Nth call of a method
 * fails as an unreachable store would, nothing changed), `writes` (the mutating calls made, in
 * order) and `snapshot` (an owner's whole tree as lines, hidden names included, to compare).
 */
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { isMacSideEntry } from '../../src/common/side-files.js';
import { ocChecksumMismatch } from '../../src/common/oc-checksum.js';
import {
  classify,
  StoreError,
  type Download,
  type DownloadOptions,
  type GroupEntry,
  type ListFolderOptions,
  type NodeDetails,
  type SearchResult,
  type NodeEntry,
  type NodeId,
  type StoreClient,
  type StoreSession,
  type UploadResult,
  type UploadTarget,
} from '../../src/store-client/contract.js';

const TOP_KINDS = ['home', 'incoming', 'trash', 'public_shares', 'private_shares', 'favorites', 'shared_with_you'] as const;
type TopKind = (typeof TOP_KINDS)[number];
const DERIVED: ReadonlySet<TopKind> = new Set(['public_shares', 'private_shares', 'favorites', 'shared_with_you']);
type Permission = 'read' | 'write' | 'delete' | 'download';
const ALL: readonly Permission[] = ['read', 'write', 'delete', 'download'];
const DAY_MS = 24 * 3600 * 1000;
const LATEST = '999999999999999';

interface Revision {
  revision: number;
  bytes: Buffer;
  createdMs: number;
  uploaderId: string;
  sha1: string;
  md5: string;
}

interface MemNode {
  /** A UUID, or `<top>:<owner>` for a top-level folder. */
  id: string;
  ownerType: 'User' | 'Group';
  ownerId: string;
  parent: string | null;
  top: TopKind | null;
  name: string;
  kind: 'file' | 'folder';
  createdMs: number;
  updatedMs: number;
  revisions: Revision[];
  skipTrash: boolean;
  /** Set while the node lies directly in a trash folder. */
  trashed?: { from: string; name: string; atMs: number };
}

interface MemUser {
  id: string;
  email: string;
  password: string;
  fullname: string;
  quotaBytes: number;
  isAdmin: boolean;
  isBuiltin: boolean;
  webdrive?: string;
}

interface Membership {
  nodePermissions: Permission[];
  isAdmin: boolean;
}

interface MemGroup {
  id: string;
  name: string;
  quotaBytes: number;
  members: Map<string, Membership>;
  webdrive?: { endpoint: string; showToMembers: boolean };
}

/** The StoreClient methods that change what the store holds. */
export const WRITE_METHODS = ['createFolder', 'rename', 'setStarred', 'moveInto', 'copyInto', 'remove', 'reviseFrom', 'restoreRevision', 'restoreFromTrash', 'setSkipTrash', 'upload'] as const;
export type WriteMethod = (typeof WRITE_METHODS)[number];
type Method = Exclude<keyof StoreClient, 'close' | 'groupCommit'>;

/** A mutating call as `writes` records it: the method and its nth call (1-based) since the store began. */
export interface WriteCall {
  method: WriteMethod;
  nth: number;
}

export interface MemoryStoreOptions {
  /** '1.0': what edition 1.0 lacks answers not-found `not_implemented`, as driveway's store does. */
  edition?: '3.0' | '1.0';
  /** store.hideMacSideFiles (default true): side files are kept but left out of listings unless asked for. */
  hideMacSideFiles?: boolean;
  /** Extension routes this store lacks (a foreign server's): answered not-found `not_implemented`. */
  lacks?: readonly Method[];
  now?: () => number;
}

export interface NewMemoryUser {
  email?: string;
  password?: string;
  fullname?: string;
  quotaBytes?: number;
}

export interface MemoryUser {
  uuid: string;
  email: string;
  password: string;
}

export const MEMORY_ADMIN_PASSWORD = 'Admin-Passw0rd';
export const MEMORY_USER_PASSWORD = 'User-Passw0rd';

/** What a store route answers, thrown inside an operation and turned into the StoreError its answer would be. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A route this store lacks (an extension a foreign server does not have): its 404. */
const lacking = (): never => {
  throw new Refusal(404, 'not_found', 'no such endpoint');
};
const notFound = (msg = 'node not found'): Refusal => new Refusal(404, 'not_found', msg);
const forbidden = (msg: string, code = 'forbidden'): Refusal => new Refusal(403, code, msg);
const conflict = (msg: string, code = 'name_conflict'): Refusal => new Refusal(409, code, msg);
const invalid = (msg: string, code = 'invalid_request'): Refusal => new Refusal(400, code, msg);
const quotaExceeded = (): Refusal => new Refusal(507, 'quota_exceeded', 'disk quota exceeded');
const unauthenticated = (): Refusal => new Refusal(401, 'unauthenticated', 'invalid, expired or revoked token');
const absent = (): never => {
  throw new Refusal(404, 'not_implemented', 'no such endpoint in this store');
};

/** Methods (and their client operation names) a 1.0 store lacks. */
const EDITION_3: Partial<Record<Method, true>> = {
  logout: true,
  myAccess: true,
  reviseFrom: true,
  listRevisions: true,
  restoreRevision: true,
  restoreFromTrash: true,
  setSkipTrash: true,
  download: true,
  currentUser: true,
  userWebdrive: true,
  listGroups: true,
  groupWebdrive: true,
  groupUsage: true,
  thumbnail: true,
  listNotifications: true,
  getNotification: true,
  deleteNotification: true,
  deleteNotifications: true,
};

const OPERATIONS: Record<Method, string> = {
  login: 'auth.login',
  logout: 'auth.logout',
  listFolder: 'nodes.listFolder',
  details: 'nodes.details',
  detailsByFileId: 'nodes.detailsByFileId',
  search: 'search',
  path: 'nodes.path',
  myAccess: 'nodes.myAccess',
  createFolder: 'nodes.createFolder',
  rename: 'nodes.rename',
  setStarred: 'nodes.setStarred',
  moveInto: 'nodes.moveInto',
  copyInto: 'nodes.copyInto',
  remove: 'nodes.remove',
  reviseFrom: 'nodes.reviseFrom',
  listRevisions: 'nodes.listRevisions',
  restoreRevision: 'nodes.restoreRevision',
  restoreFromTrash: 'nodes.restoreFromTrash',
  setSkipTrash: 'nodes.setSkipTrash',
  upload: 'upload.send',
  download: 'resources.download',
  currentUser: 'user.current',
  userWebdrive: 'user.webdrive',
  listGroups: 'groups.list',
  groupWebdrive: 'groups.webdrive',
  groupUsage: 'groups.details',
  thumbnail: 'resources.thumbnail',
  listNotifications: 'notifications.list',
  getNotification: 'notifications.get',
  deleteNotification: 'notifications.delete',
  deleteNotifications: 'notifications.deleteAll',
  listMyShares: 'shares.list',
  createLink: 'shares.create',
  updateLink: 'shares.update',
  removeShare: 'shares.remove',
  shareCopyWith: 'nodes.shareCopyWith',
  listMyRequests: 'approvals.mine',
  withdrawRequest: 'approvals.withdraw',
  listOrgUsers: 'users.list',
};

function nameProblem(name: string): string | undefined {
  if (name.length === 0) return 'name must not be empty';
  if (Buffer.byteLength(name, 'utf8') > 255) return 'name must be at most 255 bytes of UTF-8';
  if (name.includes('/') || name.includes('\0')) return 'name must not contain "/" or NUL';
  if (name === '.' || name === '..') return 'name must not be "." or ".."';
  return undefined;
}

function assertValidName(name: string): void {
  const problem = nameProblem(name);
  if (problem) throw invalid(problem, 'invalid_name');
}

/** `name (n).ext` for files, `name (n)` for folders (docs/store-semantics.md "Trash numbering"). */
function numberedName(name: string, kind: 'file' | 'folder', n: number): string {
  const dot = kind === 'file' ? name.lastIndexOf('.') : -1;
  return dot > 0 ? `${name.slice(0, dot)} (${n})${name.slice(dot)}` : `${name} (${n})`;
}

async function bytesOf(body: Readable | Buffer): Promise<Buffer> {
  if (Buffer.isBuffer(body)) return body;
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

export class MemoryStore {
  readonly client: StoreClient;
  /** The mutating calls that were made (attempted), in order. */
  readonly writes: WriteCall[] = [];
  private readonly nodes = new Map<string, MemNode>();
  private readonly users = new Map<string, MemUser>();
  private readonly groups = new Map<string, MemGroup>();
  private readonly sessions = new Map<string, { userId: string; expiresAtMs: number }>();
  /** userId -> starred node ids. */
  private readonly stars = new Map<string, Set<string>>();
  private readonly calls = new Map<Method, number>();
  private readonly faults: Array<{ method: Method; nth: number; error?: Error }> = [];
  private readonly edition: '3.0' | '1.0';
  private readonly lacks: ReadonlySet<Method>;
  private readonly hideMacSideFiles: boolean;
  /** Ids are UUID-shaped and counted, so two stores built by the same calls hold the same ids. */
  private lastId = 0;
  private readonly now: () => number;
  private lastMs = 0;

  constructor(options: MemoryStoreOptions = {}) {
    this.edition = options.edition ?? '3.0';
    this.lacks = new Set(options.lacks ?? []);
    this.hideMacSideFiles = options.hideMacSideFiles ?? true;
    this.now = options.now ?? Date.now;
    const admin = this.createUser({ email: 'admin', password: MEMORY_ADMIN_PASSWORD, fullname: 'Administrator' });
    Object.assign(admin, { isAdmin: true, isBuiltin: true });
    this.client = this.makeClient();
  }

  /**
   * Makes call `nth` (1-based, counted since the store began) of `method` fail, as a store that
   * could not be reached: StoreError `unavailable` (or `error`), nothing changed.
   */
  failOn(method: Method, nth: number, error?: Error): void {
    this.faults.push({ method, nth, ...(error ? { error } : {}) });
  }

  /** How many calls of `method` were made so far. */
  callsOf(method: Method): number {
    return this.calls.get(method) ?? 0;
  }

  /** What an administrator does through /api/admin and the members' routes on a real store. */
  readonly admin = {
    addUser: (options: NewMemoryUser = {}): MemoryUser => {
      const user = this.createUser({
        email: options.email ?? `user-${this.lastId + 1}@example.test`,
        password: options.password ?? MEMORY_USER_PASSWORD,
        fullname: options.fullname ?? 'Test User',
        quotaBytes: options.quotaBytes ?? 0,
      });
      return { uuid: user.id, email: user.email, password: user.password };
    },
    addGroup: (name: string, quotaBytes = 0): string => {
      const id = this.newId();
      this.groups.set(id, { id, name, quotaBytes, members: new Map() });
      this.addTops('Group', id);
      return id;
    },
    addMember: (groupId: string, userId: string, permissions: { nodePermissions?: Permission[]; isAdmin?: boolean } = {}): void => {
      this.groupOf(groupId).members.set(userId, { nodePermissions: permissions.nodePermissions ?? [...ALL], isAdmin: permissions.isAdmin ?? false });
    },
    setUserWebdrive: (userId: string, endpoint: string): void => {
      this.userOf(userId).webdrive = endpoint;
    },
    setGroupWebdrive: (groupId: string, endpoint: string, showToMembers: boolean): void => {
      this.groupOf(groupId).webdrive = { endpoint, showToMembers };
    },
  };

  /**
   * Every node of `ownerId` (a user or a group) as `<top>/<path> <kind> <id>[ r<revisions>: <latest
   * bytes>][ (deleted from <folder> as <name>)]`, sorted, hidden names and trash included.
   */
  snapshot(ownerId: string): string[] {
    const lines: string[] = [];
    const walk = (node: MemNode, prefix: string): void => {
      for (const child of this.childrenOf(node.id)) {
        const path = `${prefix}/${child.name}`;
        const content = child.kind === 'file' ? ` r${child.revisions.map((r) => r.revision).join(',')}: ${this.latest(child).bytes.toString('utf8')}` : '';
        const from = child.trashed && this.nodes.get(child.trashed.from);
        const origin = child.trashed ? ` (deleted from ${from ? this.ancestry(from).map((n) => n.name).join('/') : 'a folder now gone'} as ${child.trashed.name})` : '';
        lines.push(`${path} ${child.kind} ${child.id}${content}${origin}`);
        walk(child, path);
      }
    };
    for (const top of TOP_KINDS) {
      const node = this.nodes.get(`${top}:${ownerId}`);
      if (node && !DERIVED.has(top)) walk(node, top);
    }
    return lines.sort();
  }

  private newId(): string {
    this.lastId += 1;
    return `00000000-0000-4000-8000-${String(this.lastId).padStart(12, '0')}`;
  }

  private createUser(fields: { email: string; password: string; fullname: string; quotaBytes?: number }): MemUser {
    const user: MemUser = { id: this.newId(), quotaBytes: 0, isAdmin: false, isBuiltin: false, ...fields };
    this.users.set(user.id, user);
    this.addTops('User', user.id);
    return user;
  }

  private addTops(ownerType: 'User' | 'Group', ownerId: string): void {
    const now = this.now();
    for (const top of TOP_KINDS) {
      this.nodes.set(`${top}:${ownerId}`, { id: `${top}:${ownerId}`, ownerType, ownerId, parent: null, top, name: top, kind: 'folder', createdMs: now, updatedMs: now, revisions: [], skipTrash: false });
    }
  }

  private userOf(id: string): MemUser {
    const user = this.users.get(id);
    if (!user) throw new Error(`no user ${id}`);
    return user;
  }

  private groupOf(id: string): MemGroup {
    const group = this.groups.get(id);
    if (!group) throw new Error(`no group ${id}`);
    return group;
  }

  /** A time later than any before: `updated` changes visibly with every write. */
  private tick(): number {
    this.lastMs = Math.max(this.lastMs + 1, this.now());
    return this.lastMs;
  }

  // ----- the tree

  private childrenOf(id: string): MemNode[] {
    const out: MemNode[] = [];
    for (const node of this.nodes.values()) if (node.parent === id) out.push(node);
    return out.sort((a, b) => (a.kind !== b.kind ? (a.kind === 'folder' ? -1 : 1) : byteOrder(a.name, b.name)));
  }

  private childNamed(folder: string, name: string): MemNode | undefined {
    for (const node of this.nodes.values()) if (node.parent === folder && node.name === name) return node;
    return undefined;
  }

  private ancestry(node: MemNode): MemNode[] {
    const chain: MemNode[] = [node];
    let current = node;
    while (current.parent !== null) {
      current = this.nodes.get(current.parent) as MemNode;
      chain.unshift(current);
    }
    return chain;
  }

  private topOf(node: MemNode): TopKind {
    return this.ancestry(node)[0]?.top as TopKind;
  }

  private isSelfOrDescendant(node: MemNode, of: MemNode): boolean {
    return this.ancestry(of).some((n) => n.id === node.id);
  }

  private subtree(node: MemNode): MemNode[] {
    const out = [node];
    for (const child of this.childrenOf(node.id)) out.push(...this.subtree(child));
    return out;
  }

  private latest(file: MemNode): Revision {
    return file.revisions[file.revisions.length - 1] as Revision;
  }

  private touch(id: string | null): void {
    const node = id === null ? undefined : this.nodes.get(id);
    if (node) node.updatedMs = this.tick();
  }

  private usedBytes(ownerId: string): number {
    let used = 0;
    for (const node of this.nodes.values()) if (node.ownerId === ownerId) for (const r of node.revisions) used += r.bytes.length;
    return used;
  }

  private roomOf(owner: Pick<MemNode, 'ownerType' | 'ownerId'>): number {
    const quota = owner.ownerType === 'User' ? this.userOf(owner.ownerId).quotaBytes : this.groupOf(owner.ownerId).quotaBytes;
    return quota > 0 ? quota - this.usedBytes(owner.ownerId) : Number.POSITIVE_INFINITY;
  }

  private assertRoom(owner: Pick<MemNode, 'ownerType' | 'ownerId'>, bytes: number): void {
    if (bytes > this.roomOf(owner)) throw quotaExceeded();
  }

  private subtreeBytes(node: MemNode): number {
    return this.subtree(node).reduce((sum, n) => sum + n.revisions.reduce((s, r) => s + r.bytes.length, 0), 0);
  }

  // ----- access (as access.ts, without shares)

  private accessTo(caller: MemUser, node: MemNode): readonly Permission[] | undefined {
    if (node.ownerType === 'User') return node.ownerId === caller.id ? ALL : undefined;
    if (caller.isBuiltin) return ALL;
    const membership = this.groups.get(node.ownerId)?.members.get(caller.id);
    if (!membership) return undefined;
    return membership.isAdmin ? ALL : ALL.filter((p) => membership.nodePermissions.includes(p));
  }

  /** A `{node_uuid}` (UUID or top-level identifier, bare or qualified) the caller sees and that grants `permission`. */
  private resolve(caller: MemUser, identifier: string, permission: Permission | 'visible' = 'read'): { node: MemNode; granted: readonly Permission[] } {
    const id = (TOP_KINDS as readonly string[]).includes(identifier) ? `${identifier}:${caller.id}` : identifier;
    const node = this.nodes.get(id);
    if (!node) throw notFound();
    const granted = this.accessTo(caller, node);
    if (!granted) throw notFound();
    if (permission !== 'visible' && !granted.includes(permission)) throw forbidden(`${permission} permission required`);
    return { node, granted };
  }

  private publicId(node: MemNode, caller: MemUser): NodeId {
    return (node.top !== null && node.ownerType === 'User' && node.ownerId === caller.id ? node.top : node.id) as NodeId;
  }

  private assertNotTopLevel(node: MemNode, verb: string): void {
    if (node.top !== null) throw forbidden(`a top-level folder cannot be ${verb}`, 'top_level_immutable');
  }

  /** A folder new entries may enter: not a file, not trash or a derived folder. */
  private assertWritableFolder(target: MemNode): void {
    if (target.kind !== 'folder') throw conflict('the target is not a folder', 'not_a_folder');
    this.assertUploadable(target);
  }

  private assertUploadable(node: MemNode): void {
    const top = this.topOf(node);
    if (DERIVED.has(top) || top === 'trash') throw forbidden(`nothing can be placed in ${top}`, 'virtual_folder');
  }

  private assertNameFree(folder: string, name: string): void {
    if (this.childNamed(folder, name)) throw conflict(`"${name}" exists in the target folder`);
  }

  /**
   * The node and target folder of a move_to or copy_to, as the store checks them: `write` (move)
   * or `read` (copy) on the node, `write` on the target, leaving an owner needs `delete` (move) or
   * `download` (copy); no top-level folder, no trash or derived folder, not into itself.
   */
  private transfer(caller: MemUser, id: string, folder: string, operation: 'move' | 'copy'): { node: MemNode; target: MemNode } {
    const { node, granted } = this.resolve(caller, id, operation === 'move' ? 'write' : 'read');
    const { node: target } = this.resolve(caller, folder, 'write');
    const leaving = operation === 'move' ? 'delete' : 'download';
    if (node.ownerId !== target.ownerId && !granted.includes(leaving)) throw forbidden(`${leaving} permission required to ${operation} a node to another owner`);
    this.assertNotTopLevel(node, operation === 'move' ? 'moved' : 'copied');
    this.assertWritableFolder(target);
    if (this.isSelfOrDescendant(node, target)) throw conflict(`a folder cannot be ${operation === 'move' ? 'moved' : 'copied'} into itself or its descendants`, 'move_into_self');
    return { node, target };
  }

  private giveToOwner(node: MemNode, receiver: MemNode): void {
    this.assertRoom(receiver, this.subtreeBytes(node));
    for (const n of this.subtree(node)) {
      n.ownerType = receiver.ownerType;
      n.ownerId = receiver.ownerId;
    }
  }

  private entryOf(node: MemNode, caller: MemUser): NodeEntry {
    const entry: NodeEntry = {
      id: this.publicId(node, caller),
      name: node.name,
      kind: node.kind,
      sizeBytes: node.kind === 'file' ? this.latest(node).bytes.length : 0,
      updatedMs: node.updatedMs,
      isStarred: this.stars.get(caller.id)?.has(node.id) ?? false,
    };
    if (node.kind === 'file') {
      const latest = this.latest(node);
      entry.revision = latest.revision;
      entry.checksums = { sha1: latest.sha1, md5: latest.md5 };
    }
    if (node.trashed) {
      const origin = this.nodes.get(node.trashed.from);
      const shown = origin && origin.ownerId === node.ownerId && this.topOf(origin) !== 'trash';
      entry.trashed = { originalName: node.trashed.name, deletedMs: node.trashed.atMs, ...(shown ? { fromPath: this.ancestry(origin).map((n) => n.name) } : {}) };
    }
    return entry;
  }

  private newRevision(file: MemNode, bytes: Buffer, caller: MemUser): Revision {
    const revision: Revision = {
      revision: (file.revisions[file.revisions.length - 1]?.revision ?? 0) + 1,
      bytes,
      createdMs: this.tick(),
      uploaderId: caller.id,
      sha1: createHash('sha1').update(bytes).digest('hex'),
      md5: createHash('md5').update(bytes).digest('hex'),
    };
    file.revisions.push(revision);
    file.updatedMs = revision.createdMs;
    return revision;
  }

  /** Deletes for good: the subtree, its revisions and stars. */
  private purge(node: MemNode): void {
    for (const n of this.subtree(node)) {
      this.nodes.delete(n.id);
      for (const starred of this.stars.values()) starred.delete(n.id);
    }
    this.touch(node.parent);
  }

  private deletesSkipTrash(node: MemNode): boolean {
    return this.ancestry(node).slice(0, -1).some((n) => n.skipTrash);
  }

  // ----- the client

  private makeClient(): StoreClient {
    const op = <A extends unknown[], T>(method: Method, work: (...args: A) => T | Promise<T>) => {
      return async (...args: A): Promise<T> => {
        const operation = OPERATIONS[method];
        const nth = (this.calls.get(method) ?? 0) + 1;
        this.calls.set(method, nth);
        if ((WRITE_METHODS as readonly string[]).includes(method)) this.writes.push({ method: method as WriteMethod, nth });
        const fault = this.faults.find((f) => f.method === method && f.nth === nth);
        if (fault) throw fault.error ?? new StoreError('unavailable', operation, undefined, `injected fault: call ${nth} of ${method}`);
        try {
          if ((EDITION_3[method] && this.edition !== '3.0') || this.lacks.has(method)) throw new Refusal(404, 'not_implemented', `no such endpoint in edition ${this.edition}`);
          return await work(...args);
        } catch (err) {
          if (!(err instanceof Refusal)) throw err;
          throw classify(operation, err.status, { status: 'error', msg: err.message, code: err.code }) as StoreError;
        }
      };
    };
    /** An operation of a signed-in caller: the session's token must be live. */
    const as = <A extends unknown[], T>(method: Method, work: (caller: MemUser, ...args: A) => T | Promise<T>) =>
      op(method, (s: StoreSession, ...args: A) => work(this.callerOf(s), ...args));

    return {
      login: op('login', (username: string, password: string) => {
        const user = [...this.users.values()].find((u) => u.email.toLowerCase() === username.toLowerCase());
        if (!user || user.password !== password) throw new Refusal(401, 'unauthenticated', 'wrong username or password');
        const token = [randomBytes(12), randomBytes(24), randomBytes(32)].map((b) => b.toString('base64url')).join('.');
        const fileAccessKey = randomBytes(24).toString('base64url');
        const expiresAtMs = this.now() + DAY_MS;
        this.sessions.set(token, { userId: user.id, expiresAtMs });
        return { userId: user.id, token, fileAccessKey, isAdmin: user.isAdmin, fullname: user.fullname, expiresAtMs };
      }),
      logout: op('logout', (s: StoreSession) => {
        this.callerOf(s);
        this.sessions.delete(s.token);
      }),
      listFolder: as('listFolder', (caller, folder: NodeId, _signal?: AbortSignal, options?: ListFolderOptions) => {
        const { node } = this.resolve(caller, folder, 'read');
        if (node.kind !== 'folder') throw conflict('the node is not a folder', 'not_a_folder');
        let listed: MemNode[];
        if (node.top === 'favorites') {
          const starred = this.stars.get(caller.id) ?? new Set<string>();
          listed = [...this.nodes.values()].filter((n) => starred.has(n.id) && n.ownerId === node.ownerId && this.topOf(n) !== 'trash' && this.accessTo(caller, n)?.includes('read'));
        } else if (node.top !== null && DERIVED.has(node.top)) {
          listed = [];
        } else {
          listed = this.childrenOf(node.id);
        }
        const showSideFiles = !this.hideMacSideFiles || (options?.macSideFiles === true && !(node.top !== null && DERIVED.has(node.top)));
        return listed.filter((n) => showSideFiles || !isMacSideEntry({ name: n.name, isFile: n.kind === 'file' })).map((n) => this.entryOf(n, caller));
      }),
      details: as('details', (caller, id: NodeId): NodeDetails => {
        const { node } = this.resolve(caller, id, 'read');
        const owner = node.ownerType === 'User' ? this.userOf(node.ownerId).fullname : this.groupOf(node.ownerId).name;
        const latest = node.kind === 'file' ? this.latest(node) : undefined;
        return {
          ...(latest ? { checksums: { sha1: latest.sha1, md5: latest.md5 } } : {}),
          ...(node.skipTrash ? { skipTrash: true } : {}),
          id: this.publicId(node, caller),
          name: node.name,
          kind: node.kind,
          ownerType: node.ownerType,
          ownerId: node.ownerId,
          ownerFullname: owner,
          createdMs: node.createdMs,
          updatedMs: node.updatedMs,
        };
      }),
      // A store without numeric file ids (docs/extensions.md "Numeric file ids"): the bridge keeps its own.
      detailsByFileId: as('detailsByFileId', (): NodeDetails => {
        throw notFound();
      }),
      // A store without the search extension (docs/extensions.md "Search"): the bridge answers SEARCH 501.
      search: as('search', (): SearchResult => {
        throw new Refusal(404, 'not_implemented', 'no such endpoint');
      }),
      path: as('path', (caller, id: NodeId) => this.ancestry(this.resolve(caller, id, 'read').node).map((n) => ({ id: this.publicId(n, caller), name: n.name }))),
      myAccess: as('myAccess', (caller, id: NodeId) => [...this.resolve(caller, id, 'visible').granted]),
      createFolder: as('createFolder', (caller, parent: NodeId, name: string) => {
        assertValidName(name);
        const { node: folder } = this.resolve(caller, parent, 'write');
        this.assertWritableFolder(folder);
        this.assertNameFree(folder.id, name);
        const now = this.tick();
        const id = this.newId();
        this.nodes.set(id, { id, ownerType: folder.ownerType, ownerId: folder.ownerId, parent: folder.id, top: null, name, kind: 'folder', createdMs: now, updatedMs: now, revisions: [], skipTrash: false });
        this.touch(folder.id);
      }),
      rename: as('rename', (caller, id: NodeId, newName: string) => {
        assertValidName(newName);
        const { node } = this.resolve(caller, id, 'write');
        this.assertNotTopLevel(node, 'renamed');
        if (node.name === newName) return;
        this.assertNameFree(node.parent as string, newName);
        node.name = newName;
        this.touch(node.parent);
        if (node.kind === 'folder') this.touch(node.id);
      }),
      setStarred: as('setStarred', (caller, id: NodeId, starred: boolean) => {
        const { node } = this.resolve(caller, id, 'read');
        const mine = this.stars.get(caller.id) ?? new Set<string>();
        this.stars.set(caller.id, mine);
        if (!starred) {
          mine.delete(node.id);
          return;
        }
        this.assertNotTopLevel(node, 'starred');
        mine.add(node.id);
      }),
      moveInto: as('moveInto', (caller, id: NodeId, folder: NodeId) => {
        const { node, target } = this.transfer(caller, id, folder, 'move');
        const from = node.parent as string;
        if (from === target.id) return;
        this.assertNameFree(target.id, node.name);
        if (node.ownerId !== target.ownerId) this.giveToOwner(node, target);
        node.parent = target.id;
        delete node.trashed;
        this.touch(from);
        this.touch(target.id);
        if (node.kind === 'folder') this.touch(node.id);
      }),
      copyInto: as('copyInto', (caller, id: NodeId, folder: NodeId) => {
        const { node, target } = this.transfer(caller, id, folder, 'copy');
        this.assertNameFree(target.id, node.name);
        const copied = this.subtree(node);
        this.assertRoom(target, copied.reduce((sum, n) => sum + (n.kind === 'file' ? this.latest(n).bytes.length : 0), 0));
        const now = this.tick();
        const ids = new Map(copied.map((n) => [n.id, this.newId()]));
        for (const n of copied) {
          const latest = n.kind === 'file' ? this.latest(n) : undefined;
          this.nodes.set(ids.get(n.id) as string, {
            id: ids.get(n.id) as string,
            ownerType: target.ownerType,
            ownerId: target.ownerId,
            parent: n === node ? target.id : (ids.get(n.parent as string) as string),
            top: null,
            name: n.name,
            kind: n.kind,
            createdMs: now,
            updatedMs: now,
            revisions: latest ? [{ ...latest, revision: 1, createdMs: now, uploaderId: caller.id }] : [],
            skipTrash: false,
          });
        }
        this.touch(target.id);
      }),
      remove: as('remove', (caller, id: NodeId) => {
        const { node } = this.resolve(caller, id, 'delete');
        this.assertNotTopLevel(node, 'deleted');
        if (this.topOf(node) === 'trash' || this.deletesSkipTrash(node)) {
          this.purge(node);
          return { forGood: true };
        }
        const trash = this.nodes.get(`trash:${node.ownerId}`) as MemNode;
        let name = node.name;
        for (let n = 2; this.childNamed(trash.id, name); n++) name = numberedName(node.name, node.kind, n);
        const from = node.parent as string;
        node.trashed = { from, name: node.name, atMs: this.tick() };
        node.parent = trash.id;
        node.name = name;
        this.touch(from);
        this.touch(trash.id);
        return { forGood: false };
      }),
      reviseFrom: as('reviseFrom', (caller, file: NodeId, from: NodeId, options: { consume: boolean }): UploadResult => {
        const { node: destination } = this.resolve(caller, file, 'write');
        if (destination.kind !== 'file') throw conflict('the destination is not a file', 'not_a_folder');
        this.assertUploadable(destination);
        const { node: source, granted } = this.resolve(caller, from, 'read');
        for (const needed of options.consume ? (['download', 'delete'] as const) : (['download'] as const)) {
          if (!granted.includes(needed)) throw forbidden(`${needed} permission required on the source`);
        }
        if (source.kind !== 'file') throw conflict('the source is not a file', 'not_a_folder');
        if (source.id === destination.id) throw invalid('the source and the destination are the same file');
        const bytes = this.latest(source).bytes;
        const freed = options.consume && source.ownerId === destination.ownerId ? this.subtreeBytes(source) : 0;
        this.assertRoom(destination, bytes.length - freed);
        const made = this.newRevision(destination, bytes, caller);
        if (options.consume) this.purge(source);
        return { id: destination.id as NodeId, revision: made.revision, sizeBytes: bytes.length };
      }),
      listRevisions: as('listRevisions', (caller, file: NodeId) => {
        const { node } = this.resolve(caller, file, 'read');
        if (node.kind !== 'file') throw conflict('the node is not a file', 'not_a_folder');
        return node.revisions.map((r) => ({ revision: r.revision, sizeBytes: r.bytes.length, createdMs: r.createdMs, uploaderId: r.uploaderId, uploaderName: this.users.get(r.uploaderId)?.fullname, checksums: { sha1: r.sha1, md5: r.md5 } }));
      }),
      restoreRevision: as('restoreRevision', (caller, file: NodeId, revision: number): UploadResult => {
        const { node } = this.resolve(caller, file, 'write');
        if (node.kind !== 'file') throw conflict('the node is not a file', 'not_a_folder');
        this.assertUploadable(node);
        const kept = node.revisions.find((r) => r.revision === revision);
        if (!kept) throw notFound(`revision ${revision} of this file is not kept`);
        this.assertRoom(node, kept.bytes.length);
        const made = this.newRevision(node, kept.bytes, caller);
        return { id: node.id as NodeId, revision: made.revision, sizeBytes: kept.bytes.length };
      }),
      restoreFromTrash: as('restoreFromTrash', (caller, id: NodeId) => {
        const { node } = this.resolve(caller, id, 'write');
        const parent = node.parent === null ? undefined : this.nodes.get(node.parent);
        if (parent?.top !== 'trash' || !node.trashed) throw conflict('only an entry of a trash folder can be restored', 'not_in_trash');
        const origin = this.nodes.get(node.trashed.from);
        const back = origin && origin.ownerId === node.ownerId && this.topOf(origin) !== 'trash' ? origin : (this.nodes.get(`home:${node.ownerId}`) as MemNode);
        const { node: target } = this.resolve(caller, this.publicId(back, caller), 'write');
        this.assertWritableFolder(target);
        let name = node.trashed.name;
        for (let n = 2; this.childNamed(target.id, name); n++) name = numberedName(node.trashed.name, node.kind, n);
        node.parent = target.id;
        node.name = name;
        delete node.trashed;
        this.touch(parent.id);
        this.touch(target.id);
        return { id: node.id as NodeId, name, parent: this.publicId(target, caller), parentPath: this.ancestry(target).map((n) => n.name) };
      }),
      setSkipTrash: as('setSkipTrash', (caller, folder: NodeId, on: boolean) => {
        const { node } = this.resolve(caller, folder, 'delete');
        if (node.kind !== 'folder') throw conflict('the node is not a folder', 'not_a_folder');
        const top = this.topOf(node);
        if (top !== 'home' && top !== 'incoming') throw forbidden(`a folder in ${top} cannot be marked`, 'virtual_folder');
        node.skipTrash = on;
      }),
      upload: as('upload', async (caller, target: UploadTarget, body: Readable | Buffer, _sizeBytes?: number, _signal?: AbortSignal, options?: { checksum?: string | undefined }): Promise<UploadResult> => {
        const { node } = this.resolve(caller, 'folder' in target ? target.folder : target.revisionOf, 'write');
        this.assertUploadable(node);
        if (node.kind === 'folder') assertValidName(target.name);
        const bytes = await bytesOf(body);
        const sha1 = createHash('sha1').update(bytes).digest('hex');
        const md5 = createHash('md5').update(bytes).digest('hex');
        if (options?.checksum !== undefined) {
          const wrong = ocChecksumMismatch(options.checksum, { sha1, md5 });
          if (wrong) throw invalid(`the content does not match its OC-Checksum ${wrong.algorithm}`, 'checksum_mismatch');
        }
        let file = node.kind === 'file' ? node : this.childNamed(node.id, target.name);
        if (file?.kind === 'folder') throw conflict(`"${target.name}" is a folder`);
        this.assertRoom(node, bytes.length);
        if (!file) {
          const now = this.tick();
          file = { id: this.newId(), ownerType: node.ownerType, ownerId: node.ownerId, parent: node.id, top: null, name: target.name, kind: 'file', createdMs: now, updatedMs: now, revisions: [], skipTrash: false };
          this.nodes.set(file.id, file);
          this.touch(node.id);
        }
        const made = this.newRevision(file, bytes, caller);
        return { id: file.id as NodeId, revision: made.revision, sizeBytes: bytes.length, checksums: { sha1, md5 } };
      }),
      download: as('download', (caller, file: NodeId, _name: string, options: DownloadOptions = {}): Download => {
        const { node } = this.resolve(caller, file, 'download');
        if (node.kind !== 'file') throw notFound();
        const version = options.version === undefined || String(options.version) === LATEST ? undefined : Number(options.version);
        if (version !== undefined && !Number.isSafeInteger(version)) throw invalid('the version is not a number');
        const revision = version === undefined ? this.latest(node) : node.revisions.find((r) => r.revision === version);
        if (!revision) throw notFound('no such revision');
        const total = revision.bytes.length;
        const { range } = options;
        const whole = !range || total === 0;
        if (!whole && range.start >= total) throw new Refusal(416, 'range_not_satisfiable', 'requested range not satisfiable');
        const bytes = whole ? revision.bytes : revision.bytes.subarray(range.start, Math.min(range.end ?? total - 1, total - 1) + 1);
        return {
          body: Readable.from(bytes.length > 0 ? [bytes] : [], { objectMode: false }),
          status: whole ? 200 : 206,
          totalBytes: total,
          contentLength: bytes.length,
          rangeHonoured: !whole,
          etag: `"${node.id}-${revision.revision}"`,
          lastModified: new Date(revision.createdMs).toUTCString(),
          contentType: 'application/octet-stream',
        };
      }),
      currentUser: as('currentUser', (caller) => ({
        id: caller.id,
        fullname: caller.fullname,
        email: caller.email,
        isActive: true,
        isAdmin: caller.isAdmin,
        diskQuotaBytes: caller.quotaBytes,
        diskUsedBytes: this.usedBytes(caller.id),
        twofa: false,
      })),
      userWebdrive: as('userWebdrive', (caller) => (caller.webdrive === undefined ? undefined : { endpoint: caller.webdrive })),
      listGroups: as('listGroups', (caller): GroupEntry[] =>
        [...this.groups.values()]
          .filter((g) => g.members.has(caller.id))
          .map((g) => {
            const m = g.members.get(caller.id) as Membership;
            return { id: g.id, name: g.name, isAdmin: m.isAdmin, nodePermissions: m.isAdmin ? [...ALL] : [...m.nodePermissions], tagPermissions: [], sharePermissions: [] };
          }),
      ),
      groupWebdrive: as('groupWebdrive', (caller, groupId: string) => {
        const group = this.groups.get(groupId);
        const member = group?.members.get(caller.id);
        if (!group?.webdrive || (!member && !caller.isBuiltin)) return undefined;
        if (!group.webdrive.showToMembers && !member?.isAdmin && !caller.isBuiltin) return undefined;
        return { endpoint: group.webdrive.endpoint, showUrlToGroupMembers: group.webdrive.showToMembers };
      }),
      groupUsage: as('groupUsage', (caller, groupId: string) => {
        const group = this.groups.get(groupId);
        if (!group || (!group.members.has(caller.id) && !caller.isBuiltin)) throw notFound('group not found');
        return { quotaBytes: group.quotaBytes, usedBytes: this.usedBytes(group.id) };
      }),
      close: async () => undefined,
      // A store that makes no thumbnails: 404 without driveway's code, as a foreign server's missing route.
      thumbnail: as('thumbnail', () => {
        throw new Refusal(404, '', 'not found');
      }),
      // A store without the notifications extension (a foreign one): every call is the missing route's 404.
      listNotifications: as('listNotifications', () => lacking()),
      getNotification: as('getNotification', () => lacking()),
      deleteNotification: as('deleteNotification', () => lacking()),
      deleteNotifications: as('deleteNotifications', () => lacking()),
      // No sharing here: a store without these endpoints, as the bridge's OCS sharing API meets a foreign one.
      listMyShares: as('listMyShares', () => absent()),
      createLink: as('createLink', () => absent()),
      updateLink: as('updateLink', () => absent()),
      removeShare: as('removeShare', () => absent()),
      shareCopyWith: as('shareCopyWith', () => absent()),
      listMyRequests: as('listMyRequests', () => absent()),
      withdrawRequest: as('withdrawRequest', () => absent()),
      listOrgUsers: as('listOrgUsers', () => absent()),
    };
  }

  /** The user a session's token belongs to; 401 for an unknown, revoked or expired token. */
  private callerOf(s: StoreSession): MemUser {
    const session = this.sessions.get(s.token);
    if (!session || session.expiresAtMs <= this.now()) throw unauthenticated();
    return this.userOf(session.userId);
  }
}
