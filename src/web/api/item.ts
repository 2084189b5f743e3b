/**
 * The calls of the details, trash and favorites pages (issue 24, item 4), all through the store's
 * REST API (docs/api.md "Nodes", "View and download"; docs/extensions.md "Checksums", "Trash and
 * revisions from a client"). View and download URLs carry the session's fileaccesskey in SPEC's
 * path, the one place a credential may be in a URL; everything else sends the bearer token.
 */
import type { GroupEntry } from '../../store/schemas/groups.js';
import type { Checksums, DirEntry, NodeDetails, PathEntry } from '../../store/schemas/nodes.js';
import { api, fileAccessKey } from './client.js';

export type { Checksums, PathEntry, GroupEntry };
/** A node's details (docs/api.md "Node details"). */
export type Details = NodeDetails;
/** A folder's entry (docs/api.md "Directory entry"), with where a trash entry came from. */
export type Entry = DirEntry;

export interface Revision {
  revision: number;
  size: number;
  created: number;
  uploader_uuid: string | null;
  uploader_fullname: string | null;
  checksums?: Checksums;
}

export type Access = ReadonlyArray<'read' | 'write' | 'delete' | 'download'>;

/** The literal SPEC gives for the latest revision in view and download paths. */
export const LATEST = 999999999999999;

const node = (id: string) => `/api/nodes/${encodeURIComponent(id)}`;

export const details = (id: string) => api<Details>('GET', node(id));
export const pathOf = (id: string) => api<PathEntry[]>('GET', `${node(id)}/path`);
export const listFolder = (id: string) => api<Entry[]>('GET', `${node(id)}/dirlist`);
export const accessOf = (id: string) => api<Access>('GET', `${node(id)}/myaccess`);
export const revisionsOf = (id: string) => api<Revision[]>('GET', `${node(id)}/revisions`);
export const restoreRevision = (id: string, revision: number) => api<{ revision: number }>('POST', `${node(id)}/revisions`, { revision });
export const setStar = (id: string, starred: boolean) => api('POST', node(id), { starred });
export const remove = (id: string) => api('DELETE', node(id));
export const restoreFromTrash = (id: string) => api<{ uuid: string; name: string; parent: string; parent_path: string }>('POST', `${node(id)}/restore`, {});
export const myGroups = () => api<GroupEntry[]>('GET', '/api/groups');

/** SPEC's view or download path of a file's revision (the latest by default); undefined without a key. */
export function fileUrl(kind: 'view' | 'download', file: { uuid: string; name: string }, revision: number = LATEST): string | undefined {
  const key = fileAccessKey();
  if (!key) return undefined;
  return `/resources/auth/${kind}/${encodeURIComponent(key)}/${encodeURIComponent(file.uuid)}/${revision}/${encodeURIComponent(file.name)}`;
}

/** The store's WebP thumbnail of a file's revision (docs/api.md "Thumbnails"), `px` 64, 256 or 1024; undefined without a key. */
export function thumbnailUrl(file: { uuid: string }, px: 64 | 256 | 1024, revision: number = LATEST): string | undefined {
  const key = fileAccessKey();
  if (!key) return undefined;
  return `/resources/auth/thumbnail/${encodeURIComponent(key)}/${encodeURIComponent(file.uuid)}/${revision}/${px}`;
}

/**
 * What a preview frame can show: the store decides (content-security.ts sends only passive types
 * inline), so the page asks it with a HEAD of the view path instead of keeping a second list of
 * types. Images and plain text are previewed; anything the store sends as an attachment is not.
 */
export async function previewKind(url: string): Promise<'image' | 'text' | undefined> {
  try {
    const answer = await fetch(url, { method: 'HEAD', credentials: 'omit', cache: 'no-store' });
    if (!answer.ok || !/^inline\b/i.test(answer.headers.get('content-disposition') ?? '')) return undefined;
    const type = answer.headers.get('content-type') ?? '';
    return type.startsWith('image/') ? 'image' : type.startsWith('text/plain') ? 'text' : undefined;
  } catch {
    return undefined;
  }
}
