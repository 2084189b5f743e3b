/** What callers of the store client (the bridge, tests, tools) rely on: normalised, camelCase. */
import type { Readable, Writable } from 'node:stream';

/** A node UUID or a top-level identifier ("home", "trash:<owner uuid>"). */
export type NodeId = string & { readonly brand: 'NodeId' };
export const nodeId = (value: string): NodeId => value as NodeId;

export type NodeKind = 'file' | 'folder';

export interface NodeEntry {
  id: NodeId;
  name: string;
  kind: NodeKind;
  sizeBytes: number;
  updatedMs: number;
  /** Present for files. */
  revision?: number;
  isStarred: boolean;
  /** SHA-1 and MD5 of the latest revision (lower-case hex), when the store publishes them (files). */
  checksums?: FileChecksums;
  /** An entry of a trash folder, when the store tells (docs/extensions.md "Trash and revisions from a client"). */
  trashed?: TrashFacts;
  /** The node's stable numeric id, when the store publishes one (docs/extensions.md "Numeric file ids"). */
  fileId?: number;
  /** Folders, from driveway's store: a version that changes with any change below, and the recursive size (docs/extensions.md "Tree versions and sizes"). */
  treeEtag?: string;
  treeSizeBytes?: number;
}

/** Where a trash entry came from and when it went (all optional: a store may know some). */
export interface TrashFacts {
  /** Its name before the deletion. */
  originalName: string;
  /** The folder it was deleted from as names from its top-level folder (`["home", "docs"]`); undefined when unknown. */
  fromPath?: string[];
  deletedMs?: number;
}

/** A kept revision of a file (the revision listing extension). */
export interface RevisionEntry {
  revision: number;
  sizeBytes: number;
  createdMs: number;
  uploaderId?: string;
  uploaderName?: string;
  checksums?: FileChecksums;
}

/** What a DELETE did, when the store says: into the trash, or gone for good (a node in trash, or below a "delete for good" folder). */
export interface Removal {
  forGood?: boolean;
}

/** Where a restore from trash put the node. */
export interface RestoredNode {
  id: NodeId;
  name: string;
  parent: NodeId;
  /** The folder as names from its top-level folder. */
  parentPath: string[];
}

/** A file's checksums as the store publishes them (docs/extensions.md "Checksums"). */
export interface FileChecksums {
  sha1: string;
  /** Absent until the store knows it (a large upload's MD5 comes just after its commit). */
  md5?: string;
}

export interface NodeDetails {
  id: NodeId;
  name: string;
  kind: NodeKind;
  ownerType: 'User' | 'Group';
  ownerId: string;
  ownerFullname: string;
  createdMs?: number;
  updatedMs?: number;
  /** As NodeEntry's. */
  checksums?: FileChecksums;
  /** A folder marked "delete for good" (an extension). */
  skipTrash?: boolean;
  /** As NodeEntry's. */
  fileId?: number;
  /** As NodeEntry's (folders). */
  treeEtag?: string;
  treeSizeBytes?: number;
}

export interface PathEntry {
  id: NodeId;
  name: string;
}

export interface StoreSession {
  userId: string;
  token: string;
  fileAccessKey: string;
  isAdmin: boolean;
  fullname: string;
  /** When the token ends (24 h after login: docs/api.md "Limits"); renew before. */
  expiresAtMs: number;
}

export interface UserProfile {
  id: string;
  fullname: string;
  email: string;
  isActive: boolean;
  isAdmin: boolean;
  avatar?: string;
  /** 0 means unlimited (docs/api.md "User profile"); negative values too. */
  diskQuotaBytes: number;
  diskUsedBytes: number;
  twofa: boolean;
  createdMs?: number;
  passExpiresMs?: number;
}

export interface ByteRange {
  start: number;
  /** Inclusive, as in HTTP; open-ended when absent. */
  end?: number;
}

export interface Download {
  /** The bytes as a stream. Read either this or `sendTo`, never both. */
  body: Readable;
  /**
   * Writes the bytes into `target` (not ending it), each write awaited before its buffer is
   * used again: what a transport offers when it can move the bytes with a few reused buffers
   * (the in-process store) instead of a stream that allocates one per read. Rejects when the
   * bytes cannot all be read, the target fails, or `signal` aborts.
   */
  sendTo?(target: Writable, signal?: AbortSignal): Promise<void>;
  /** Status the store answered (200 or 206). */
  status: number;
  /** Length of the whole file when known. */
  totalBytes?: number;
  /** Bytes in `body` when known. */
  contentLength?: number;
  /** False when a Range was asked for and the store sent the whole file (the caller must skip). */
  rangeHonoured: boolean;
  etag?: string;
  lastModified?: string;
  contentType?: string;
}

export type UploadTarget = { folder: NodeId; name: string } | { revisionOf: NodeId; name: string };

export interface UploadOptions {
  /**
   * The client's `OC-Checksum` claim (`SHA1:<hex>`, `MD5:<hex>`, several space-separated): an
   * upload whose bytes contradict it is refused (StoreError `invalid`, code `checksum_mismatch`)
   * and recorded nowhere (docs/extensions.md "Checksums").
   */
  checksum?: string | undefined;
}

export interface UploadResult {
  /** When the store says (driveway's does): the uploaded file's UUID, revision and size. */
  id?: NodeId;
  revision?: number;
  sizeBytes?: number;
  /** The new revision's checksums, when the store publishes them. */
  checksums?: FileChecksums;
  /** The file's numeric id, when the store publishes them (docs/extensions.md "Numeric file ids"). */
  fileId?: number;
}

export interface NewUser {
  fullname: string;
  email: string;
  password: string;
  diskQuotaBytes?: number;
  isActive?: boolean;
  isAdmin?: boolean;
  comment?: string;
}

export interface UserUpdate {
  fullname?: string;
  email?: string;
  password?: string;
  diskQuotaBytes?: number;
  isActive?: boolean;
  isAdmin?: boolean;
  twofa?: boolean;
  comment?: string;
}

/** docs/api.md "Group entry", normalised. */
export interface GroupEntry {
  id: string;
  name: string;
  /** The caller administers the group. */
  isAdmin: boolean;
  nodePermissions: string[];
  tagPermissions: string[];
  sharePermissions: string[];
  avatar?: string;
}

export interface WebdriveEndpoint {
  endpoint: string;
  /** Groups: whether non-admin members may see the URL (absent for users). */
  showUrlToGroupMembers?: boolean;
}

/** The sizes a thumbnail is made at (docs/extensions.md "Thumbnails for the bridge"): at most px x px. */
export type ThumbnailSize = 64 | 256 | 1024;

/** A thumbnail of a file's latest revision, whole (a few KiB to a few hundred). */
export interface Thumbnail {
  body: Buffer;
  /** The store's, changing with the revision; undefined when it sends none. */
  etag: string | undefined;
  contentType: string;
}

/** One of the caller's notifications (the notifications extension: docs/extensions.md "Notifications"). */
export interface NotificationEntry {
  id: number;
  /** What happened: copy_offered, approval_waiting, request_approved, request_rejected, quota_near, link_expiring (others may come). */
  kind: string;
  objectType: string;
  objectId: string;
  /** The store's words for it. */
  subject: string;
  params: Record<string, unknown>;
  createdMs: number;
}
