/**
 * What a verb handler receives. Handlers are plain async functions over Node's request and
 * response; they throw (StoreError, DavStatusError, HrefError, DavXmlError, LockError) and the
 * wrapper in server.ts answers with the status dav-errors.ts decides.
 */
import type { FileIds } from '../file-ids.js';
import type { Previews } from '../previews.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import type { PropertyRepository } from '../dead-properties.js';
import type { RenameAwayRepository } from '../../contracts/renamed-away.js';
import type { DavPathParts } from '../href.js';
import type { LockStore } from '../locks.js';
import type { MetadataCache } from '../metadata-cache.js';
import type { BridgeUser } from '../sessions.js';
import type { DavPath, StoreTree } from '../store-tree.js';
import type { SpaceRoute } from '../remote-dav.js';
import type { UploadService } from '../upload-service.js';
import type { BulkGate } from '../bulk-gate.js';

/**
 * Where the web app is, for the index page's link to its "Connect your drive" page: a known URL
 * (`store.publicUrl`), or the store of this process, reached at the host the person reached the
 * bridge by (the same machine) on the store's port.
 */
export type WebAppLocation = { url: string } | { port: number; https: boolean };

export interface BulkUploads {
  /** A private folder (0700) under the data folder: `<dataDir>/bulk`, one 0700 folder per request inside, files 0600. */
  stagingDir: string;
  gate: BulkGate;
}

export interface BridgeServices {
  tree: StoreTree;
  cache: MetadataCache;
  locks: LockStore;
  props: PropertyRepository;
  /** Saves by rename-away (rename-away.ts). */
  renamedAway: RenameAwayRepository;
  /** Numeric file ids: the store's, else the bridge's own (file-ids.ts). */
  fileIds: FileIds;
  /** The apps' previews from the store's thumbnails, and nc:has-preview (previews.ts). */
  previews: Previews;
  clock: Clock;
  log: Logger;
  /** Report quota properties to macOS >= 15.4 (it may stall mounting on them). */
  quotaForNewMacOS: boolean;
  /** Show macOS side files to Finder only (bridge.hideMacSideFiles). */
  hideMacSideFiles: boolean;
  /** Where the web app is, for the index page's link to it (index-page.ts); unknown: no link. */
  webApp?: WebAppLocation;
  /**
   * Several instances (a change feed): resolves once every change committed anywhere before the
   * call has reached this bridge's caches, so a request answered after a write through another
   * instance sees it. Absent on SQLite (one process: nothing to wait for).
   */
  changesSettled?: () => Promise<void>;
  /** Resumable uploads (bridge/uploads/): sessions, their parts, assembly. */
  uploads: UploadService;
  /** Bulk uploads (uploads/bulk.ts): where their large parts are staged, and how many run at once. */
  bulk: BulkUploads;
  /**
   * The bridge's absolute URL prefix for answers that must be absolute (a tus `Location`: rclone's
   * infinitescale vendor takes its scheme and host): `bridge.publicUrl`, or this listener's scheme
   * and the Host the request came by.
   */
  absoluteBase(req: IncomingMessage): string;
}

export interface DavContext {
  req: IncomingMessage;
  res: ServerResponse;
  /** Upper-case method. */
  method: string;
  /** The decoded request target. */
  target: DavPathParts;
  /** NFC lookup path ('/' root, no trailing slash). */
  path: DavPath;
  /**
   * Encoded href prefix answers are written under: '' for the drive at `/`, the space's root
   * (`/remote.php/dav/files/alice`) when the request came through remote-dav.ts's alias.
   */
  hrefBase: string;
  /** The `/remote.php/dav/<space>/<user>` route the request came through, if any. */
  route?: SpaceRoute;
  /** Answer hrefs in NFD (macOS WebDAVFS). */
  nfd: boolean;
  /** Host names that make an absolute Destination/If URL local. */
  hosts: string[];
  services: BridgeServices;
  log: Logger;
  /** Aborted when the client goes away: pass it down to store calls. */
  signal: AbortSignal;
  /** The authenticated user; throws (401) for anonymous requests. */
  user(): BridgeUser;
  /** Undefined for anonymous requests (only OPTIONS allows them). */
  maybeUser: BridgeUser | undefined;
}

export type VerbHandler = (ctx: DavContext) => Promise<void>;
