/** The `/api/nodes/{node_uuid}` operations: one function per operation of docs/api.md "Nodes". */
import { z } from 'zod';
import type { StoreHttp } from './http.js';
import { MAC_SIDE_FILES_HEADER } from '../common/side-files.js';
import { kindOf, parseWith, seg, toMs } from './parse.js';
import { dataEnvelope, dirEntrySchema, nodeDetailsSchema, pathEntrySchema, permissionsSchema, restoredSchema, revisionRecordSchema } from './schemas.js';
import type { FileChecksums, NodeDetails, NodeEntry, NodeId, PathEntry, Removal, RestoredNode, RevisionEntry, StoreSession, UploadResult } from './types.js';

/** A store's checksums in lower case; undefined when it sent none. */
function checksumsOf(sums: { sha1: string; md5?: string | undefined } | undefined): FileChecksums | undefined {
  if (!sums) return undefined;
  return sums.md5 === undefined ? { sha1: sums.sha1.toLowerCase() } : { sha1: sums.sha1.toLowerCase(), md5: sums.md5.toLowerCase() };
}

/** A folder's tree version and recursive size, when the store sends them. */
function treeOf(row: { tree_etag?: string | undefined; tree_size?: number | undefined }): Pick<NodeEntry, 'treeEtag' | 'treeSizeBytes'> {
  return { ...(row.tree_etag !== undefined ? { treeEtag: row.tree_etag } : {}), ...(row.tree_size !== undefined ? { treeSizeBytes: Math.max(0, row.tree_size) } : {}) };
}

async function postOperation(http: StoreHttp, s: StoreSession, node: NodeId, body: Record<string, unknown>, operation: string, signal?: AbortSignal): Promise<void> {
  await http.call({ method: 'POST', path: `/api/nodes/${seg(node)}`, token: s.token, json: body, signal }, operation);
}

/** A Directory entry (docs/api.md; as parsed, or as an in-process store hands it over) in the bridge's terms. */
export function toNodeEntry(row: {
  uuid: string;
  name: string;
  type: string;
  is_starred: boolean;
  size?: number | undefined;
  updated?: number | undefined;
  revision?: number | undefined;
  checksums?: { sha1: string; md5?: string | undefined } | undefined;
  trashed?: { from_path?: string | null | undefined; name: string; at?: number | null | undefined } | undefined;
  file_id?: number | undefined;
  tree_etag?: string | undefined;
  tree_size?: number | undefined;
}): NodeEntry {
  const kind = kindOf(row.type);
  const entry: NodeEntry = {
    id: row.uuid as NodeId,
    name: row.name,
    kind,
    sizeBytes: kind === 'file' ? Math.max(0, row.size ?? 0) : 0,
    updatedMs: toMs(row.updated) ?? 0,
    isStarred: row.is_starred,
  };
  if (kind === 'file' && row.revision !== undefined) entry.revision = row.revision;
  const checksums = kind === 'file' ? checksumsOf(row.checksums) : undefined;
  if (checksums) entry.checksums = checksums;
  if (row.file_id !== undefined) entry.fileId = row.file_id;
  if (kind === 'folder') Object.assign(entry, treeOf(row));
  if (row.trashed) {
    const { from_path: fromPath, at } = row.trashed;
    entry.trashed = {
      originalName: row.trashed.name,
      ...(typeof fromPath === 'string' ? { fromPath: fromPath.split('/').filter((s) => s !== '') } : {}),
      ...(typeof at === 'number' ? { deletedMs: at } : {}),
    };
  }
  return entry;
}

/** Node details (docs/api.md) in the bridge's terms. */
export function toNodeDetails(d: {
  uuid: string;
  name: string;
  type: string;
  owner_type: string;
  owner_uuid: string;
  owner_fullname: string;
  created?: number | undefined;
  updated?: number | undefined;
  checksums?: { sha1: string; md5?: string | undefined } | undefined;
  skip_trash?: boolean | undefined;
  file_id?: number | undefined;
  tree_etag?: string | undefined;
  tree_size?: number | undefined;
}): NodeDetails {
  const checksums = checksumsOf(d.checksums);
  return {
    ...(kindOf(d.type) === 'folder' ? treeOf(d) : {}),
    ...(checksums ? { checksums } : {}),
    ...(d.file_id !== undefined ? { fileId: d.file_id } : {}),
    ...(d.skip_trash === true ? { skipTrash: true } : {}),
    id: d.uuid as NodeId,
    name: d.name,
    kind: kindOf(d.type),
    ownerType: d.owner_type === 'Group' ? 'Group' : 'User',
    ownerId: d.owner_uuid,
    ownerFullname: d.owner_fullname,
    createdMs: toMs(d.created),
    updatedMs: toMs(d.updated),
  };
}

export interface ListFolderOptions {
  /** Ask for macOS side files too (MAC_SIDE_FILES_HEADER; a foreign store lists everything anyway). */
  macSideFiles?: boolean;
}

export async function listFolder(http: StoreHttp, s: StoreSession, folder: NodeId, signal?: AbortSignal, options: ListFolderOptions = {}): Promise<NodeEntry[]> {
  const operation = 'nodes.listFolder';
  // driveway's extension (docs/extensions.md); a foreign store ignores the header and lists everything.
  const headers = options.macSideFiles ? { [MAC_SIDE_FILES_HEADER]: '1' } : undefined;
  const res = await http.call({ method: 'GET', path: `/api/nodes/${seg(folder)}/dirlist`, token: s.token, signal, ...(headers ? { headers } : {}) }, operation);
  return parseWith(dataEnvelope(z.array(dirEntrySchema)), res.body, operation, res.status).data.map(toNodeEntry);
}

export async function details(http: StoreHttp, s: StoreSession, node: NodeId, signal?: AbortSignal): Promise<NodeDetails> {
  const operation = 'nodes.details';
  const res = await http.call({ method: 'GET', path: `/api/nodes/${seg(node)}`, token: s.token, signal }, operation);
  return toNodeDetails(parseWith(dataEnvelope(nodeDetailsSchema), res.body, operation, res.status).data);
}

export async function detailsByFileId(http: StoreHttp, s: StoreSession, fileId: number, signal?: AbortSignal): Promise<NodeDetails> {
  const operation = 'nodes.detailsByFileId';
  const res = await http.call({ method: 'GET', path: `/api/nodes/by-file-id/${fileId}`, token: s.token, signal }, operation);
  return toNodeDetails(parseWith(dataEnvelope(nodeDetailsSchema), res.body, operation, res.status).data);
}

export async function path(http: StoreHttp, s: StoreSession, node: NodeId, signal?: AbortSignal): Promise<PathEntry[]> {
  const operation = 'nodes.path';
  const res = await http.call({ method: 'GET', path: `/api/nodes/${seg(node)}/path`, token: s.token, signal }, operation);
  return parseWith(dataEnvelope(z.array(pathEntrySchema)), res.body, operation, res.status).data.map((e) => ({ id: e.uuid as NodeId, name: e.name }));
}

export async function myAccess(http: StoreHttp, s: StoreSession, node: NodeId, signal?: AbortSignal): Promise<string[]> {
  const operation = 'nodes.myAccess';
  const res = await http.call({ method: 'GET', path: `/api/nodes/${seg(node)}/myaccess`, token: s.token, signal }, operation);
  return parseWith(dataEnvelope(permissionsSchema), res.body, operation, res.status).data;
}

const revisedSchema = z.object({ uuid: z.string(), revision: z.number(), size: z.number() });

/** POST /api/nodes/{file}/revisions (an extension: docs/extensions.md); not-found from a server without it. Never retried: it is no idempotent call. */
export async function reviseFrom(http: StoreHttp, s: StoreSession, file: NodeId, from: NodeId, options: { consume: boolean }, signal?: AbortSignal): Promise<UploadResult> {
  const operation = 'nodes.reviseFrom';
  const res = await http.call({ method: 'POST', path: `/api/nodes/${seg(file)}/revisions`, token: s.token, json: { from, consume: options.consume }, signal }, operation);
  const data = parseWith(dataEnvelope(revisedSchema), res.body, operation, res.status).data;
  return { id: data.uuid as NodeId, revision: data.revision, sizeBytes: data.size };
}

/** A revision listing record in the bridge's terms. */
export function toRevisionEntry(r: { revision: number; size: number; created: number; uploader_uuid?: string | null | undefined; uploader_fullname?: string | null | undefined; checksums?: { sha1: string; md5?: string | undefined } | undefined }): RevisionEntry {
  const checksums = checksumsOf(r.checksums);
  return {
    revision: r.revision,
    sizeBytes: Math.max(0, r.size),
    createdMs: toMs(r.created) ?? 0,
    ...(r.uploader_uuid ? { uploaderId: r.uploader_uuid } : {}),
    ...(r.uploader_fullname ? { uploaderName: r.uploader_fullname } : {}),
    ...(checksums ? { checksums } : {}),
  };
}

/** GET /api/nodes/{file}/revisions (an extension); not-found from a server without it. */
export async function listRevisions(http: StoreHttp, s: StoreSession, file: NodeId, signal?: AbortSignal): Promise<RevisionEntry[]> {
  const operation = 'nodes.listRevisions';
  const res = await http.call({ method: 'GET', path: `/api/nodes/${seg(file)}/revisions`, token: s.token, signal }, operation);
  return parseWith(dataEnvelope(z.array(revisionRecordSchema)), res.body, operation, res.status).data.map(toRevisionEntry);
}

/** POST /api/nodes/{file}/revisions `{revision}` (an extension): a kept revision becomes the latest. Never retried. */
export async function restoreRevision(http: StoreHttp, s: StoreSession, file: NodeId, revision: number, signal?: AbortSignal): Promise<UploadResult> {
  const operation = 'nodes.restoreRevision';
  const res = await http.call({ method: 'POST', path: `/api/nodes/${seg(file)}/revisions`, token: s.token, json: { revision }, signal }, operation);
  const data = parseWith(dataEnvelope(revisedSchema), res.body, operation, res.status).data;
  return { id: data.uuid as NodeId, revision: data.revision, sizeBytes: data.size };
}

/** A restore result in the bridge's terms. */
export function toRestoredNode(d: { uuid: string; name: string; parent: string; parent_path: string }): RestoredNode {
  return { id: d.uuid as NodeId, name: d.name, parent: d.parent as NodeId, parentPath: d.parent_path.split('/').filter((s) => s !== '') };
}

/** POST /api/nodes/{id}/restore (an extension): a trash entry goes back where it was deleted from. Never retried. */
export async function restoreFromTrash(http: StoreHttp, s: StoreSession, node: NodeId, signal?: AbortSignal): Promise<RestoredNode> {
  const operation = 'nodes.restoreFromTrash';
  const res = await http.call({ method: 'POST', path: `/api/nodes/${seg(node)}/restore`, token: s.token, json: {}, signal }, operation);
  return toRestoredNode(parseWith(dataEnvelope(restoredSchema), res.body, operation, res.status).data);
}

/** PUT /api/nodes/{folder}/skip_trash (an extension): deletes below the folder skip the trash, or no longer. */
export async function setSkipTrash(http: StoreHttp, s: StoreSession, folder: NodeId, on: boolean, signal?: AbortSignal): Promise<void> {
  await http.call({ method: 'PUT', path: `/api/nodes/${seg(folder)}/skip_trash`, token: s.token, json: { skip_trash: on }, signal }, 'nodes.setSkipTrash');
}

/** 204 on success; the interface returns no id, so callers re-list the parent to learn it. */
export const createFolder = (http: StoreHttp, s: StoreSession, parent: NodeId, name: string, signal?: AbortSignal) =>
  postOperation(http, s, parent, { new_dir: name }, 'nodes.createFolder', signal);
export const rename = (http: StoreHttp, s: StoreSession, node: NodeId, newName: string, signal?: AbortSignal) =>
  postOperation(http, s, node, { new_name: newName }, 'nodes.rename', signal);
export const setStarred = (http: StoreHttp, s: StoreSession, node: NodeId, starred: boolean, signal?: AbortSignal) =>
  postOperation(http, s, node, { starred }, 'nodes.setStarred', signal);
export const moveInto = (http: StoreHttp, s: StoreSession, node: NodeId, folder: NodeId, signal?: AbortSignal) =>
  postOperation(http, s, node, { move_to: folder }, 'nodes.moveInto', signal);
export const copyInto = (http: StoreHttp, s: StoreSession, node: NodeId, folder: NodeId, signal?: AbortSignal) =>
  postOperation(http, s, node, { copy_to: folder }, 'nodes.copyInto', signal);

/** The header driveway's DELETE answers with: `for-good` or `trash` (docs/extensions.md "Trash and revisions from a client"). */
export const DELETED_HEADER = 'x-driveway-deleted';

/** DELETE; `forGood` when the store says the node is gone for good (undefined: it does not say). */
export async function remove(http: StoreHttp, s: StoreSession, node: NodeId, signal?: AbortSignal): Promise<Removal> {
  const res = await http.call({ method: 'DELETE', path: `/api/nodes/${seg(node)}`, token: s.token, signal }, 'nodes.remove');
  const said = res.headers[DELETED_HEADER];
  return said === 'for-good' ? { forGood: true } : said === 'trash' ? { forGood: false } : {};
}
