/**
 * createStoreClient(baseUrl): a typed client for ANY server of the File Management Service
 * interface (SPEC.md). It relies only on what SPEC shows; driveway's extensions (error `code`,
 * upload `data`, Range) are used when present and never required. Every failure is a StoreError.
 */
import type { Readable } from 'node:stream';
import * as admin from './admin.js';
import * as auth from './auth.js';
import * as downloads from './download.js';
import * as groups from './groups.js';
import { StoreHttp, type HttpOptions } from './http.js';
import * as nodes from './nodes.js';
import * as uploads from './upload.js';
import * as user from './user.js';
import type {
  Download,
  GroupEntry,
  NewUser,
  NodeDetails,
  NodeEntry,
  NodeId,
  PathEntry,
  StoreSession,
  UploadResult,
  UploadTarget,
  UserProfile,
  UserUpdate,
  WebdriveEndpoint,
} from './types.js';

/**
 * What the bridge relies on, whichever transport carries it: HTTP to any server of the
 * interface (createStoreClient), or the embedded store in the same process
 * (src/store/local-client.ts). Every failure is a StoreError with the same kinds either way.
 */
export interface StoreClient {
  /** `client` names who the store should record (login history, rate limit) when this caller relays a login. */
  login(username: string, password: string, options?: auth.LoginOptions): Promise<StoreSession>;
  logout(s: StoreSession): Promise<void>;
  listFolder(s: StoreSession, folder: NodeId, signal?: AbortSignal): Promise<NodeEntry[]>;
  details(s: StoreSession, node: NodeId, signal?: AbortSignal): Promise<NodeDetails>;
  path(s: StoreSession, node: NodeId, signal?: AbortSignal): Promise<PathEntry[]>;
  myAccess(s: StoreSession, node: NodeId, signal?: AbortSignal): Promise<string[]>;
  /** 204: no id returned; re-list the parent to learn it. */
  createFolder(s: StoreSession, parent: NodeId, name: string, signal?: AbortSignal): Promise<void>;
  rename(s: StoreSession, node: NodeId, newName: string, signal?: AbortSignal): Promise<void>;
  setStarred(s: StoreSession, node: NodeId, starred: boolean, signal?: AbortSignal): Promise<void>;
  moveInto(s: StoreSession, node: NodeId, folder: NodeId, signal?: AbortSignal): Promise<void>;
  copyInto(s: StoreSession, node: NodeId, folder: NodeId, signal?: AbortSignal): Promise<void>;
  remove(s: StoreSession, node: NodeId, signal?: AbortSignal): Promise<void>;
  upload(s: StoreSession, target: UploadTarget, body: Readable, sizeBytes?: number, signal?: AbortSignal): Promise<UploadResult>;
  download(s: StoreSession, file: NodeId, name: string, options?: downloads.DownloadOptions): Promise<Download>;
  currentUser(s: StoreSession, signal?: AbortSignal): Promise<UserProfile>;
  /** The caller's WebDrive endpoint; undefined when none. Throws not-found when the server has no such endpoint (1.0). */
  userWebdrive(s: StoreSession, signal?: AbortSignal): Promise<WebdriveEndpoint | undefined>;
  /** The caller's groups (SPEC Group entries). Throws not-found on a server without groups. */
  listGroups(s: StoreSession, signal?: AbortSignal): Promise<GroupEntry[]>;
  /** A group's endpoint as the caller may see it; undefined when none or hidden. */
  groupWebdrive(s: StoreSession, groupId: string, signal?: AbortSignal): Promise<WebdriveEndpoint | undefined>;
  /** A group's quota and usage, when its details say them (SPEC does not show the record). */
  groupUsage(s: StoreSession, groupId: string, signal?: AbortSignal): Promise<{ quotaBytes: number; usedBytes: number } | undefined>;
  close(): Promise<void>;
}

/** The HTTP transport, with what only HTTP has: the base URL, raw requests, the two upload steps apart, download URLs, and the administrator calls tests and tools use. */
export interface HttpStoreClient extends StoreClient {
  readonly baseUrl: string;
  /** The single request path; `requestRaw` is there for callers that need status and body as they are. */
  readonly http: StoreHttp;
  requestUploadToken(s: StoreSession, target: NodeId, signal?: AbortSignal): Promise<string>;
  uploadWithToken(token: string, name: string, body: Readable, sizeBytes?: number, signal?: AbortSignal): Promise<UploadResult>;
  downloadPath(s: StoreSession, file: NodeId, name: string, version?: number | string, mode?: 'download' | 'view'): string;
  createUser(s: StoreSession, input: NewUser, orgId?: string): Promise<string | undefined>;
  updateUser(s: StoreSession, userId: string, patch: UserUpdate): Promise<void>;
}

export function createStoreClient(baseUrl: string, options: HttpOptions = {}): HttpStoreClient {
  const http = new StoreHttp(baseUrl, options);
  return {
    baseUrl: http.baseUrl,
    http,
    login: (username, password, options) => auth.login(http, username, password, options),
    logout: (s) => auth.logout(http, s),
    listFolder: (s, folder, signal) => nodes.listFolder(http, s, folder, signal),
    details: (s, node, signal) => nodes.details(http, s, node, signal),
    path: (s, node, signal) => nodes.path(http, s, node, signal),
    myAccess: (s, node, signal) => nodes.myAccess(http, s, node, signal),
    createFolder: (s, parent, name, signal) => nodes.createFolder(http, s, parent, name, signal),
    rename: (s, node, newName, signal) => nodes.rename(http, s, node, newName, signal),
    setStarred: (s, node, starred, signal) => nodes.setStarred(http, s, node, starred, signal),
    moveInto: (s, node, folder, signal) => nodes.moveInto(http, s, node, folder, signal),
    copyInto: (s, node, folder, signal) => nodes.copyInto(http, s, node, folder, signal),
    remove: (s, node, signal) => nodes.remove(http, s, node, signal),
    requestUploadToken: (s, target, signal) => uploads.requestUploadToken(http, s, target, signal),
    uploadWithToken: (token, name, body, sizeBytes, signal) => uploads.uploadWithToken(http, token, name, body, sizeBytes, signal),
    upload: (s, target, body, sizeBytes, signal) => uploads.upload(http, s, target, body, sizeBytes, signal),
    download: (s, file, name, opts) => downloads.download(http, s, file, name, opts),
    downloadPath: (s, file, name, version, mode) => downloads.downloadPath(s, file, name, version, mode),
    currentUser: (s, signal) => user.currentUser(http, s, signal),
    userWebdrive: (s, signal) => user.userWebdrive(http, s, signal),
    listGroups: (s, signal) => groups.listGroups(http, s, signal),
    groupWebdrive: (s, groupId, signal) => groups.groupWebdrive(http, s, groupId, signal),
    groupUsage: (s, groupId, signal) => groups.groupUsage(http, s, groupId, signal),
    createUser: (s, input, orgId) => admin.createUser(http, s, input, orgId),
    updateUser: (s, userId, patch) => admin.updateUser(http, s, userId, patch),
    close: () => http.close(),
  };
}

export { StoreError, classify, type StoreErrorKind } from './errors.js';
export type { LoginOptions, RelayedClient } from './auth.js';
export { LATEST_VERSION } from './download.js';
export { StoreHttp, type RawRequest, type RawResponse } from './http.js';
export * from './types.js';
