/**
 * The calls of a link's page (pages/link.tsx), as the person a link was sent to makes them, with
 * no session: GET /public/{token}[/{path}]?info, POST .../unlock (the password, answered by an
 * HttpOnly cookie for this link's path only, so the page never holds it), POST .../upload, and
 * the URLs of a file's bytes (download, preview) and of a folder's zip. The cookie goes with
 * every call (credentials: same-origin). docs/api.md "What a link's recipient sees".
 */
import type { LinkInfo, LinkUnlocked } from '../../store/schemas/public-links.js';
import { ApiError } from './client.js';
import { t } from '../strings/index.js';

export type { LinkInfo };

/** Where a link's page is: its token and the names below a shared folder. */
export interface LinkPlace {
  token: string;
  path: string[];
}

/** `/public/{token}/{name}/...`, each name escaped. */
export function linkPath({ token, path }: LinkPlace): string {
  return ['/public', encodeURIComponent(token), ...path.map(encodeURIComponent)].join('/');
}

/** The place of a page address `/public/{token}/{names...}` (names decoded; a broken escape kept as written). */
export function placeOf(pathname: string): LinkPlace {
  const [token = '', ...rest] = pathname.slice('/public/'.length).split('/');
  const decode = (segment: string) => {
    try {
      return decodeURIComponent(segment);
    } catch {
      return segment;
    }
  };
  return { token, path: rest.filter((segment) => segment !== '').map(decode) };
}

/** An error from an answer's envelope (or a network failure). */
async function failure(response: Response): Promise<ApiError> {
  const body = (await response.json().catch(() => ({}))) as { msg?: unknown; code?: unknown };
  const retry = Number(response.headers.get('retry-after'));
  return new ApiError(response.status, typeof body.code === 'string' ? body.code : 'internal', typeof body.msg === 'string' ? body.msg : '', Number.isFinite(retry) && retry > 0 ? retry : undefined);
}

async function call<T>(url: string, init: RequestInit = {}): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, credentials: 'same-origin', cache: 'no-store', headers: { accept: 'application/json', ...init.headers } });
  } catch {
    throw new ApiError(0, 'network', t.networkError);
  }
  if (!response.ok) throw await failure(response);
  return ((await response.json()) as { data: T }).data;
}

/** What the link shows at `place` (a 401 `unauthenticated`: it needs its password). */
export function linkInfo(place: LinkPlace): Promise<LinkInfo> {
  return call<LinkInfo>(`${linkPath(place)}?info`);
}

/** Sends the password; the store answers a cookie that opens this link (and only it) for an hour. */
export function unlockLink(token: string, password: string): Promise<LinkUnlocked> {
  return call<LinkUnlocked>(`${linkPath({ token, path: [] })}/unlock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password }) });
}

/** A file's bytes as an attachment. */
export const downloadUrl = (place: LinkPlace): string => `${linkPath(place)}?download=1`;
/** A file's bytes inline where the store allows it (passive types only, under its sandbox). */
export const previewUrl = (place: LinkPlace): string => `${linkPath(place)}?preview`;
/** A folder as a zip, streamed (built by the zip route of routes/public.ts). */
export const zipUrl = (place: LinkPlace): string => `${linkPath(place)}?download=zip`;

/** Whether the store sends a file inline, and as what: it decides (content-security.ts), the page asks with a HEAD. */
export async function linkPreviewKind(place: LinkPlace): Promise<'image' | 'text' | undefined> {
  try {
    const answer = await fetch(previewUrl(place), { method: 'HEAD', credentials: 'same-origin', cache: 'no-store' });
    if (!answer.ok || !/^inline\b/i.test(answer.headers.get('content-disposition') ?? '')) return undefined;
    const type = answer.headers.get('content-type') ?? '';
    return type.startsWith('image/') ? 'image' : type.startsWith('text/plain') ? 'text' : undefined;
  } catch {
    return undefined;
  }
}

export interface Sending {
  /** The name and size the store gave the new file (a clash gets a numbered name). */
  done: Promise<{ name: string; size: number }>;
  abort(): void;
}

/**
 * Sends one file to an upload link (POST /public/{token}/upload, multipart, part `file`),
 * reporting bytes sent; XMLHttpRequest, since fetch reports no upload progress. Not resumable: a
 * file whose sending breaks off is sent whole again.
 */
export function sendToLink(token: string, file: File, onProgress: (sent: number) => void): Sending {
  const xhr = new XMLHttpRequest();
  const done = new Promise<{ name: string; size: number }>((resolve, reject) => {
    xhr.open('POST', `${linkPath({ token, path: [] })}/upload`);
    xhr.setRequestHeader('accept', 'application/json');
    xhr.withCredentials = true;
    xhr.upload.onprogress = (event) => onProgress(event.loaded);
    xhr.onerror = () => reject(new ApiError(0, 'network', t.networkError));
    xhr.onabort = () => reject(new ApiError(0, 'aborted', ''));
    xhr.onload = () => {
      let body: { data?: { name: string; size: number }; msg?: unknown; code?: unknown } = {};
      try {
        body = JSON.parse(xhr.responseText) as typeof body;
      } catch {
        // An answer that is not JSON: said as a server error below.
      }
      if (xhr.status >= 200 && xhr.status < 300 && body.data) resolve(body.data);
      else reject(new ApiError(xhr.status, typeof body.code === 'string' ? body.code : 'internal', typeof body.msg === 'string' ? body.msg : ''));
    };
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
  return { done, abort: () => xhr.abort() };
}
