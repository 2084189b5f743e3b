/**
 * What the bridge relies on of a store, with no transport attached: the StoreClient interface,
 * the one error type and the normalised records. The bridge imports only this (and the HTTP
 * client, index.ts, when it serves a store at a URL), so a bridge wired to the embedded store
 * in-process never loads the HTTP client and undici.
 */
import type { Readable } from 'node:stream';
import type { LoginOptions } from './auth.js';
import type { DownloadOptions } from './download.js';
import type { ListFolderOptions } from './nodes.js';
import type { SearchQuery, SearchResult } from './search.js';
import type { CreatedLink, LinkChanges, LinkInput, OrgUser, ShareLink, ShareRequest } from './shares.js';
import type {
  Download,
  GroupEntry,
  NodeDetails,
  NodeEntry,
  NodeId,
  PathEntry,
  Removal,
  RestoredNode,
  RevisionEntry,
  StoreSession,
  Thumbnail,
  ThumbnailSize,
  UploadOptions,
  UploadResult,
  UploadTarget,
  UserProfile,
  WebdriveEndpoint,
  NotificationEntry,
} from './types.js';

/**
 * What the bridge relies on, whichever transport carries it: HTTP to any server of the
 * interface (createStoreClient), or the embedded store in the same process
 * (src/store/local-client.ts). Every failure is a StoreError with the same kinds either way.
 */
export interface StoreClient {
  /** `client` names who the store should record (login history, rate limit) when this caller relays a login. */
  login(username: string, password: string, options?: LoginOptions): Promise<StoreSession>;
  logout(s: StoreSession): Promise<void>;
  listFolder(s: StoreSession, folder: NodeId, signal?: AbortSignal, options?: ListFolderOptions): Promise<NodeEntry[]>;
  details(s: StoreSession, node: NodeId, signal?: AbortSignal): Promise<NodeDetails>;
  /**
   * An extension (docs/extensions.md "Numeric file ids"): the details of the node with numeric
   * id `fileId`, when the caller may read it. Not-found otherwise, and from a server without it.
   */
  detailsByFileId(s: StoreSession, fileId: number, signal?: AbortSignal): Promise<NodeDetails>;
  path(s: StoreSession, node: NodeId, signal?: AbortSignal): Promise<PathEntry[]>;
  myAccess(s: StoreSession, node: NodeId, signal?: AbortSignal): Promise<string[]>;
  /** 204: no id returned; re-list the parent to learn it. */
  createFolder(s: StoreSession, parent: NodeId, name: string, signal?: AbortSignal): Promise<void>;
  rename(s: StoreSession, node: NodeId, newName: string, signal?: AbortSignal): Promise<void>;
  setStarred(s: StoreSession, node: NodeId, starred: boolean, signal?: AbortSignal): Promise<void>;
  moveInto(s: StoreSession, node: NodeId, folder: NodeId, signal?: AbortSignal): Promise<void>;
  copyInto(s: StoreSession, node: NodeId, folder: NodeId, signal?: AbortSignal): Promise<void>;
  /** DELETE: into the trash, or for good; `forGood` when the store says which (driveway's does). */
  remove(s: StoreSession, node: NodeId, signal?: AbortSignal): Promise<Removal>;
  /**
   * An extension (docs/extensions.md "Revision from another file"): the latest revision of file
   * `from` becomes the next revision of file `file`, sharing its bytes; `consume` takes `from`
   * away. A server without it answers not-found (driveway 1.0: code `not_implemented`).
   */
  reviseFrom(s: StoreSession, file: NodeId, from: NodeId, options: { consume: boolean }, signal?: AbortSignal): Promise<UploadResult>;
  /**
   * Extensions (docs/extensions.md "Trash and revisions from a client"); a server without them
   * answers not-found (driveway 1.0: `not_implemented`). listRevisions: every kept revision,
   * oldest first. restoreRevision: a kept revision becomes the next one. restoreFromTrash: a
   * trash entry goes back where it was deleted from. setSkipTrash: deletes below a folder skip
   * the trash (or no longer).
   */
  listRevisions(s: StoreSession, file: NodeId, signal?: AbortSignal): Promise<RevisionEntry[]>;
  restoreRevision(s: StoreSession, file: NodeId, revision: number, signal?: AbortSignal): Promise<UploadResult>;
  restoreFromTrash(s: StoreSession, node: NodeId, signal?: AbortSignal): Promise<RestoredNode>;
  setSkipTrash(s: StoreSession, folder: NodeId, on: boolean, signal?: AbortSignal): Promise<void>;
  upload(s: StoreSession, target: UploadTarget, body: Readable | Buffer, sizeBytes?: number, signal?: AbortSignal, options?: UploadOptions): Promise<UploadResult>;
  download(s: StoreSession, file: NodeId, name: string, options?: DownloadOptions): Promise<Download>;
  currentUser(s: StoreSession, signal?: AbortSignal): Promise<UserProfile>;
  /** The caller's WebDrive endpoint; undefined when none. Throws not-found when the server has no such endpoint (1.0). */
  userWebdrive(s: StoreSession, signal?: AbortSignal): Promise<WebdriveEndpoint | undefined>;
  /** The caller's groups (Group entries, docs/api.md). Throws not-found on a server without groups. */
  listGroups(s: StoreSession, signal?: AbortSignal): Promise<GroupEntry[]>;
  /** A group's endpoint as the caller may see it; undefined when none or hidden. */
  groupWebdrive(s: StoreSession, groupId: string, signal?: AbortSignal): Promise<WebdriveEndpoint | undefined>;
  /** A group's quota and usage, when its details say them (the interface leaves the record open). */
  groupUsage(s: StoreSession, groupId: string, signal?: AbortSignal): Promise<{ quotaBytes: number; usedBytes: number } | undefined>;
  close(): Promise<void>;
  // h32-bulk: group commit.
  /**
   * Runs `work`, whose calls of this client each commit as alone, and resolves once everything
   * they wrote is durable, by one fsync for all of them rather than one per call (the in-process
   * store's Durability.group). Absent (the HTTP transport: every request is durable before it is
   * answered, and concurrent ones share the store's fsync): the caller runs `work` itself.
   */
  groupCommit?<T>(work: () => Promise<T>): Promise<T>;
  // h32-preview
  /**
   * An extension (docs/extensions.md "Thumbnails for the bridge"): the thumbnail of file `file`'s
   * latest revision at `px`, readable exactly as its download. Not-found when none can be made
   * (not an image the store decodes), from a store without thumbnails, and for a session without
   * a file access key (a bearer token's); forbidden where the download is.
   */
  thumbnail(s: StoreSession, file: NodeId, px: ThumbnailSize, signal?: AbortSignal): Promise<Thumbnail>;
  // h32-search
  /**
   * An extension (docs/extensions.md "Search"): a page of the caller's nodes matching `query`
   * in their drives and their groups'. Not-found from a server without it.
   */
  search(s: StoreSession, query: SearchQuery, signal?: AbortSignal): Promise<SearchResult>;
  // h32-notif: the caller's notifications, an extension (docs/extensions.md "Notifications"): newest
  // first; one by id, deleted one or all. Another user's id is not-found; so is every call to a
  // server without them (the bridge then answers an empty list).
  listNotifications(s: StoreSession, signal?: AbortSignal): Promise<NotificationEntry[]>;
  getNotification(s: StoreSession, id: number, signal?: AbortSignal): Promise<NotificationEntry>;
  deleteNotification(s: StoreSession, id: number, signal?: AbortSignal): Promise<void>;
  deleteNotifications(s: StoreSession, signal?: AbortSignal): Promise<void>;

  // h32-share: sharing from the apps (the OCS sharing API: bridge/nextcloud/sharing.ts). Extensions
  // (docs/extensions.md "Sharing from the apps") but share_copy_with: a server without one answers
  // not-found (driveway 1.0: `not_implemented`) or a 405, and the bridge answers without it.
  /** GET /api/shares: the links and private shares the caller made (no tokens). */
  listMyShares(s: StoreSession, signal?: AbortSignal): Promise<ShareLink[]>;
  /** POST /api/nodes/{uuid}/shares: a public or upload link, or the approval request it waits in. */
  createLink(s: StoreSession, node: NodeId, input: LinkInput, signal?: AbortSignal): Promise<CreatedLink>;
  /** PUT /api/shares/{uuid}: a link's password, expiry, public or upload. */
  updateLink(s: StoreSession, share: string, changes: LinkChanges, signal?: AbortSignal): Promise<ShareLink>;
  /** DELETE /api/shares/{uuid}. */
  removeShare(s: StoreSession, share: string, signal?: AbortSignal): Promise<void>;
  /** share_copy_with (SPEC): a copy offered to each recipient (UUIDs), or `pendingId` when it waits for an approver. */
  shareCopyWith(s: StoreSession, node: NodeId, recipients: readonly string[], signal?: AbortSignal): Promise<{ pendingId?: string }>;
  /** GET /api/my_pending_shares: the caller's share requests, pending and decided. */
  listMyRequests(s: StoreSession, signal?: AbortSignal): Promise<ShareRequest[]>;
  /** DELETE /api/my_pending_shares/{uuid}: withdraws a pending request. */
  withdrawRequest(s: StoreSession, request: string, signal?: AbortSignal): Promise<void>;
  /** GET /api/users?format=short_active: the caller's organization's active users, to name a recipient. */
  listOrgUsers(s: StoreSession, signal?: AbortSignal): Promise<OrgUser[]>;
}

export { NO_FILE_ACCESS_KEY, StoreError, classify, type StoreErrorKind } from './errors.js';
export type { LoginOptions, RelayedClient } from './auth.js';
export type { DownloadOptions } from './download.js';
export type { ListFolderOptions } from './nodes.js';
export type { SearchCondition, SearchHit, SearchQuery, SearchResult } from './search.js';
export type { CreatedLink, LinkChanges, LinkInput, OrgUser, ShareLink, ShareRequest } from './shares.js';
export * from './types.js';
