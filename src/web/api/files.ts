/**
 * The file browser's calls (issue 24, item 4), all through the store's REST API (docs/api.md
 * "Nodes", "Upload", "View and download", "Groups for members") except one: a resumable upload
 * goes to the WebDAV bridge by tus (docs/bridge-design.md "tus 1.0") when the bridge answers the
 * folder's OPTIONS with Tus-Version to this origin (uploader.ts chooses, once per batch); otherwise SPEC's two-step upload (a token,
 * then the multipart POST) through XMLHttpRequest, the one browser API that reports upload
 * progress. A folder's path on the bridge comes from its breadcrumb (src/bridge/namespace.ts:
 * `<top-level>/...` for the caller's own tree, `groups/<group name>/<top-level>/...` for a group's).
 */
import type { GroupEntry } from '../../store/schemas/groups.js';
import { api, ApiError, bridgeAuthorization, endSession, errorText, fileAccessKey, SESSION_HEADERS } from './client.js';
import { groupFolderName } from './group-folder.js';
import { currentSession } from '../session.js';
import { t } from '../strings/index.js';

export interface Entry {
  uuid: string;
  name: string;
  type: 'Dir' | 'File';
  is_starred: boolean;
  size: number;
  updated: number;
  revision?: number;
}

export interface PathEntry {
  name: string;
  uuid: string;
}

export type { GroupEntry };

export type Access = ReadonlyArray<'read' | 'write' | 'delete' | 'download'>;

/** errorText, with words for what only the file calls meet: a full quota (507, which errorText counts as a server fault). */
export function filesErrorText(error: unknown): string {
  if (error instanceof ApiError && error.code === 'quota_exceeded') return t.files.quotaExceeded;
  return errorText(error);
}

const node = (id: string) => `/api/nodes/${encodeURIComponent(id)}`;

export const listFolder = (id: string) => api<Entry[]>('GET', `${node(id)}/dirlist`);
export const folderPath = (id: string) => api<PathEntry[]>('GET', `${node(id)}/path`);
export const myAccess = (id: string) => api<Access>('GET', `${node(id)}/myaccess`);
export const myGroups = () => api<GroupEntry[]>('GET', '/api/groups');
export const newFolder = (parent: string, name: string) => api('POST', node(parent), { new_dir: name });
export const rename = (id: string, name: string) => api('POST', node(id), { new_name: name });
export const moveTo = (id: string, folder: string) => api('POST', node(id), { move_to: folder });
export const copyTo = (id: string, folder: string) => api('POST', node(id), { copy_to: folder });
export const setStar = (id: string, starred: boolean) => api('POST', node(id), { starred });
export const toTrash = (id: string) => api('DELETE', node(id));
/** A hit of the store's search extension (docs/extensions.md "Search"): an entry and its path from its top-level folder. */
export interface SearchHit extends Entry {
  path: PathEntry[];
}
/** The caller's drives and their groups' searched by a part of the name (the filter box's whole-drive results). */
export const searchDrives = (text: string, limit: number) =>
  api<{ hits: SearchHit[]; more: boolean }>('POST', '/api/search', { where: { name_contains: text }, order: [{ by: 'kind' }, { by: 'name' }], limit });
export const webdrive = () => api<{ root_url?: string }>('GET', '/api/user/webdrive');

/** The latest revision's bytes as an attachment: SPEC's download path, the one URL a key may be in. */
export function downloadUrl(entry: Entry): string | undefined {
  const key = fileAccessKey();
  if (!key) return undefined;
  return `/resources/auth/download/${encodeURIComponent(key)}/${entry.uuid}/999999999999999/${encodeURIComponent(entry.name)}`;
}

/** The group id of a group drive's folder id (`home:<group>`), else undefined. */
export function ownerOf(topId: string): string | undefined {
  const colon = topId.indexOf(':');
  return colon === -1 ? undefined : topId.slice(colon + 1);
}

/** The folder's URL on the bridge, from its breadcrumb; undefined where the bridge has no such path. */
export function bridgeFolderUrl(rootUrl: string, crumbs: readonly PathEntry[], groups: readonly GroupEntry[]): string | undefined {
  const top = crumbs[0];
  if (!top) return undefined;
  const topName = top.uuid.split(':', 1)[0] ?? '';
  const owner = ownerOf(top.uuid);
  const segments: string[] = [];
  if (owner && owner !== currentSession()?.uuid) {
    const group = groups.find((g) => g.group_uuid === owner);
    const name = group && groupFolderName(group, groups);
    if (name === undefined) return undefined;
    segments.push('groups', name);
  }
  segments.push(topName, ...crumbs.slice(1).map((c) => c.name));
  return `${rootUrl.replace(/\/+$/, '')}/${segments.map(encodeURIComponent).join('/')}/`;
}

export interface Progress {
  (sent: number, total: number): void;
}

function uploadFailure(status: number, body: unknown): ApiError {
  const envelope = (typeof body === 'object' && body !== null ? body : {}) as { msg?: unknown; code?: unknown };
  const msg = typeof envelope.msg === 'string' ? envelope.msg : '';
  const code = typeof envelope.code === 'string' ? envelope.code : status >= 500 ? 'internal' : 'invalid_request';
  return new ApiError(status, code, msg);
}

/** Step 1: the upload token (a flat answer, not in `data`, so not through api()). */
async function uploadToken(folder: string): Promise<string> {
  let response: Response;
  try {
    response = await fetch(`${node(folder)}/upload`, { headers: { accept: 'application/json', ...SESSION_HEADERS }, credentials: 'same-origin', cache: 'no-store' });
  } catch {
    throw new ApiError(0, 'network', t.networkError);
  }
  const body: unknown = await response.json().catch(() => undefined);
  if (response.status === 200 && typeof (body as { token?: unknown } | undefined)?.token === 'string') return (body as { token: string }).token;
  if (response.status === 401) endSession(t.signIn.sessionEnded, true);
  throw uploadFailure(response.status, body);
}

/** SPEC's two-step upload of one file into `folder` (as `name`, else its own), reporting bytes sent. */
export async function uploadTwoStep(folder: string, file: File, onProgress: Progress, signal?: AbortSignal, name = file.name): Promise<void> {
  const token = await uploadToken(folder);
  if (signal?.aborted) throw new ApiError(0, 'cancelled', 'cancelled');
  const form = new FormData();
  form.append('file', file, name);
  await new Promise<void>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `/upload/${encodeURIComponent(token)}`);
    xhr.responseType = 'json';
    xhr.setRequestHeader('accept', 'application/json');
    // The body is the multipart form: its bytes sent, as a share of the file's size.
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(Math.min(file.size, Math.round((event.loaded / event.total) * file.size)), file.size);
    };
    xhr.onload = () => {
      if (xhr.status === 200) {
        onProgress(file.size, file.size);
        resolve();
      } else reject(uploadFailure(xhr.status, xhr.response));
    };
    xhr.onerror = () => reject(new ApiError(0, 'network', t.networkError));
    xhr.onabort = () => reject(new ApiError(0, 'cancelled', 'cancelled'));
    signal?.addEventListener('abort', () => xhr.abort());
    xhr.send(form);
  });
}

/**
 * Whether this page may connect to `url` at all: the connect-src of the policy the store sends
 * with the app's page (src/store/web-app.ts). Asked first, so that a bridge on another origin
 * the policy does not name is never tried (the browser would refuse it and log a violation).
 */
async function policyAllows(url: string): Promise<boolean> {
  const origin = new URL(url, window.location.href).origin;
  if (origin === window.location.origin) return true;
  try {
    const page = await fetch('/', { headers: { accept: 'text/html' }, credentials: 'omit' });
    const policy = page.headers.get('content-security-policy');
    if (policy === null) return true;
    const directives = policy.split(';').map((d) => d.trim().split(/\s+/));
    const directive = directives.find((d) => d[0] === 'connect-src') ?? directives.find((d) => d[0] === 'default-src');
    return (directive ?? []).slice(1).some((source) => source === '*' || source.replace(/\/+$/, '') === origin);
  } catch {
    return false;
  }
}

/**
 * Whether the bridge takes tus uploads at `folderUrl` from this page: the page's policy lets it
 * connect there, and an OPTIONS (a CORS preflight goes first, as the Authorization header is not
 * a simple one) answers Tus-Version readable here. Any failure (the bridge without CORS for this
 * origin, a foreign server) means no, and the two-step upload is used.
 */
export async function offersTus(folderUrl: string): Promise<boolean> {
  const session = currentSession();
  if (!session || !(await policyAllows(folderUrl))) return false;
  try {
    const response = await fetch(folderUrl, { method: 'OPTIONS', headers: { authorization: await bridgeAuthorization() }, credentials: 'omit', cache: 'no-store' });
    return response.ok && (response.headers.get('tus-version') ?? '').split(',').some((v) => v.trim() === '1.0.0');
  } catch {
    return false;
  }
}
