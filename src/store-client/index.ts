/**
 * createStoreClient(baseUrl): a typed client for ANY server of the File Management Service
 * interface (docs/api.md). It relies only on what the interface defines; driveway's extensions (error `code`,
 * upload `data`, Range) are used when present and never required. Every failure is a StoreError.
 */
import type { Readable } from 'node:stream';
import * as admin from './admin.js';
import * as auth from './auth.js';
import * as downloads from './download.js';
import * as groups from './groups.js';
import { StoreHttp, type HttpOptions } from './http.js';
import * as nodes from './nodes.js';
import { search } from './search.js';
import * as notifications from './notifications.js';
import * as shares from './shares.js';
import * as uploads from './upload.js';
import * as user from './user.js';
import type { NewUser, NodeId, StoreSession, UploadResult, UserUpdate } from './types.js';
import type { StoreClient } from './contract.js';

export type { StoreClient } from './contract.js';

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
    listFolder: (s, folder, signal, options) => nodes.listFolder(http, s, folder, signal, options),
    details: (s, node, signal) => nodes.details(http, s, node, signal),
    detailsByFileId: (s, fileId, signal) => nodes.detailsByFileId(http, s, fileId, signal),
    path: (s, node, signal) => nodes.path(http, s, node, signal),
    myAccess: (s, node, signal) => nodes.myAccess(http, s, node, signal),
    createFolder: (s, parent, name, signal) => nodes.createFolder(http, s, parent, name, signal),
    rename: (s, node, newName, signal) => nodes.rename(http, s, node, newName, signal),
    setStarred: (s, node, starred, signal) => nodes.setStarred(http, s, node, starred, signal),
    moveInto: (s, node, folder, signal) => nodes.moveInto(http, s, node, folder, signal),
    copyInto: (s, node, folder, signal) => nodes.copyInto(http, s, node, folder, signal),
    remove: (s, node, signal) => nodes.remove(http, s, node, signal),
    reviseFrom: (s, file, from, options, signal) => nodes.reviseFrom(http, s, file, from, options, signal),
    listRevisions: (s, file, signal) => nodes.listRevisions(http, s, file, signal),
    restoreRevision: (s, file, revision, signal) => nodes.restoreRevision(http, s, file, revision, signal),
    restoreFromTrash: (s, node, signal) => nodes.restoreFromTrash(http, s, node, signal),
    setSkipTrash: (s, folder, on, signal) => nodes.setSkipTrash(http, s, folder, on, signal),
    search: (s, query, signal) => search(http, s, query, signal),
    requestUploadToken: (s, target, signal) => uploads.requestUploadToken(http, s, target, signal),
    uploadWithToken: (token, name, body, sizeBytes, signal) => uploads.uploadWithToken(http, token, name, body, sizeBytes, signal),
    upload: (s, target, body, sizeBytes, signal, options) => uploads.upload(http, s, target, body, sizeBytes, signal, options),
    download: (s, file, name, opts) => downloads.download(http, s, file, name, opts),
    downloadPath: (s, file, name, version, mode) => downloads.downloadPath(s, file, name, version, mode),
    currentUser: (s, signal) => user.currentUser(http, s, signal),
    userWebdrive: (s, signal) => user.userWebdrive(http, s, signal),
    listGroups: (s, signal) => groups.listGroups(http, s, signal),
    groupWebdrive: (s, groupId, signal) => groups.groupWebdrive(http, s, groupId, signal),
    groupUsage: (s, groupId, signal) => groups.groupUsage(http, s, groupId, signal),
    listMyShares: (s, signal) => shares.listMyShares(http, s, signal),
    createLink: (s, node, input, signal) => shares.createLink(http, s, node, input, signal),
    updateLink: (s, share, changes, signal) => shares.updateLink(http, s, share, changes, signal),
    removeShare: (s, share, signal) => shares.removeShare(http, s, share, signal),
    shareCopyWith: (s, node, recipients, signal) => shares.shareCopyWith(http, s, node, recipients, signal),
    listMyRequests: (s, signal) => shares.listMyRequests(http, s, signal),
    withdrawRequest: (s, request, signal) => shares.withdrawRequest(http, s, request, signal),
    listOrgUsers: (s, signal) => shares.listOrgUsers(http, s, signal),
    createUser: (s, input, orgId) => admin.createUser(http, s, input, orgId),
    updateUser: (s, userId, patch) => admin.updateUser(http, s, userId, patch),
    close: () => http.close(),
    thumbnail: (s, file, px, signal) => downloads.thumbnail(http, s, file, px, signal),
    listNotifications: (s, signal) => notifications.listNotifications(http, s, signal),
    getNotification: (s, id, signal) => notifications.getNotification(http, s, id, signal),
    deleteNotification: (s, id, signal) => notifications.deleteNotification(http, s, id, signal),
    deleteNotifications: (s, signal) => notifications.deleteNotifications(http, s, signal),
  };
}

export { StoreError, classify, type StoreErrorKind } from './errors.js';
export type { LoginOptions, RelayedClient } from './auth.js';
export { LATEST_VERSION } from './download.js';
export { StoreHttp, type RawRequest, type RawResponse } from './http.js';
export * from './types.js';
