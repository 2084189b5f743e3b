/**
 * The dead property contract shared by the bridge and the storage layer (docs/scale-out.md
 * "Bridge state"): dead properties (RFC 4918 §4, §9.2) and client modification times per node
 * key, which the store's interface can keep neither of. The bridge programs against
 * PropertyRepository; store/storage/dav-properties.ts implements it over SQL (the store's
 * database under `npm start`, shared by every instance; the bridge's own `bridge.sqlite` for a
 * bridge alone). A property set through one path or by one user is seen through every path and
 * by every user of the node. No state and no I/O here.
 *
 * Bounded (issue 14, finding 7: a user with a 1,000-byte quota grew the bridge's file by 21 MB): a
 * node carries at most `maxBytesPerNode` bytes (64 KiB) and `maxPropertiesPerNode` properties, and
 * all nodes charged to one owner at most `maxBytesPerOwner` (64 MiB). A property's bytes are its
 * XML, namespace and name in UTF-8. Real clients stay far below: Windows sets four Win32*
 * properties (about 450 bytes) per file it uploads, Cyberduck one or two dates, Finder none (its
 * extended attributes travel as `._` files); 64 MiB holds Windows' properties for ~140,000 files.
 */

export interface DeadProperty {
  readonly ns: string;
  readonly local: string;
  /** The whole property element as the client sent it (dav-xml.ts serializes it). */
  readonly xml: string;
}

export type DeadPropertyChange =
  | { readonly op: 'set'; readonly ns: string; readonly local: string; readonly xml: string }
  | { readonly op: 'remove'; readonly ns: string; readonly local: string };

export class DeadPropertyLimitError extends Error {
  constructor(
    readonly kind: 'too-many-properties' | 'too-large' | 'owner-full',
    message: string,
  ) {
    super(message);
    this.name = 'DeadPropertyLimitError';
  }
}

export interface DeadPropertyStoreOptions {
  /** Properties one node may carry. Default 1000. */
  maxPropertiesPerNode?: number;
  /** Bytes of properties one node may carry. Default 64 KiB (config `bridge.deadPropsMaxBytesPerNode`). */
  maxBytesPerNode?: number;
  /** Bytes of properties all nodes of one owner may carry. Default 64 MiB (`bridge.deadPropsMaxBytesPerOwner`). */
  maxBytesPerOwner?: number;
}

/**
 * What the verbs need of dead properties and client mtimes. Methods throw DeadPropertyLimitError
 * where said (507 for the properties set), or a storage error (5xx; 503 when the database is
 * unavailable).
 */
export interface PropertyRepository {
  /**
   * Grows with every change made through this repository: a reader caching something derived
   * from them (a PROPFIND body) compares it to know it is still exact. Changes made by another
   * instance do not move it: such a cache must also expire (propfind.ts: with the listing).
   */
  readonly version: number;
  /** Another instance changed properties or client mtimes (a change feed said so): moves `version`. */
  noteOutsideChange(): void;
  /** Every dead property of a node, ordered by namespace and name. */
  list(id: string): Promise<DeadProperty[]>;
  /** Dead properties of many nodes in one query (a Depth 1 PROPFIND); nodes without any are absent. */
  listMany(ids: readonly string[]): Promise<Map<string, DeadProperty[]>>;
  get(id: string, ns: string, local: string): Promise<DeadProperty | undefined>;
  /**
   * Applies PROPPATCH instructions in order, all or nothing (RFC 4918 §9.2), charging the node's
   * properties to `owner` ('' charges nobody: tests and tools only). Throws
   * DeadPropertyLimitError (nothing applied) when the node or the owner would pass a limit.
   */
  apply(id: string, changes: readonly DeadPropertyChange[], owner?: string): Promise<void>;
  set(id: string, prop: DeadProperty): Promise<void>;
  remove(id: string, ns: string, local: string): Promise<void>;
  /**
   * Gives `toId` the dead properties and client mtime of `fromId`, replacing what it had (COPY:
   * the destination is a new resource, RFC 4918 §9.8.2), charged to `owner`. Returns false and
   * changes nothing when that would pass the owner's limit (the copy then has no properties).
   */
  copy(fromId: string, toId: string, owner?: string): Promise<boolean>;
  /** Forgets a node's properties and mtime (DELETE, or a node replaced by COPY/MOVE). */
  drop(id: string): Promise<void>;
  dropMany(ids: readonly string[]): Promise<void>;
  getMtime(id: string): Promise<number | undefined>;
  /** Client mtimes of many nodes in one query; nodes without one are absent. */
  getMtimes(ids: readonly string[]): Promise<Map<string, number>>;
  /** Records a client-set modification time (ms since the epoch, whole milliseconds). */
  setMtime(id: string, mtimeMs: number): Promise<void>;
  clearMtime(id: string): Promise<void>;
  /** Bytes of properties charged to `owner` ('' is charged to nobody). */
  ownerBytes(owner: string): Promise<number>;
}
