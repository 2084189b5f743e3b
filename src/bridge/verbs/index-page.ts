/**
 * The page a person sees when they open a collection's URL (their WebDrive URL, say) in a
 * browser: the path back up as links, the entries (folders first) with human sizes, dates and a
 * download link per file, sortable by name, size or date through plain links (`?sort=size&order=
 * desc`). No script and nothing loaded from elsewhere: one self-contained HTML document, served
 * with a Content-Security-Policy that allows only its inline style. DAV clients never GET a
 * collection; `rclone serve webdav`, Apache mod_autoindex and nginx autoindex answer the same way.
 */
import { escapeXmlAttr, escapeXmlText } from '../dav-xml.js';
import { childHref, encodeHref } from '../href.js';
import type { BridgeUser } from '../sessions.js';
import type { Resource } from '../store-tree.js';
import type { DavContext, WebAppLocation } from '../request/context.js';

/** What a Host header may hold: a name or address and a port, nothing else (no injection into the link). */
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** The URL of the web app's Connect page, or undefined when the web app's place is not known. */
export function connectPageUrl(web: WebAppLocation | undefined, hostHeader: string | undefined): string | undefined {
  return webAppPageUrl(web, hostHeader, '/connect');
}

/** The URL of the web app's page at `page` (an absolute path), or undefined when the web app's place is not known. */
export function webAppPageUrl(web: WebAppLocation | undefined, hostHeader: string | undefined, page: string): string | undefined {
  if (!web) return undefined;
  if ('url' in web) return `${web.url.replace(/\/+$/, '')}${page}`;
  if (!hostHeader || !HOST.test(hostHeader)) return undefined;
  const name = hostHeader.startsWith('[') ? hostHeader.slice(0, hostHeader.indexOf(']') + 1) : (hostHeader.split(':')[0] as string);
  return `${web.https ? 'https' : 'http'}://${name}:${web.port}${page}`;
}

type SortKey = 'name' | 'size' | 'modified';
type Order = 'asc' | 'desc';

/** The page's own policy: its inline style, nothing else (no script, no frame, no form). The empty
 * data: icon keeps the browser from asking the bridge for /favicon.ico. */
export const INDEX_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const UNITS = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

export function humanSize(bytes: number): string {
  if (bytes < 1024) return bytes === 1 ? '1 byte' : `${bytes} bytes`;
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value >= 100 ? Math.round(value) : value.toFixed(1)} ${UNITS[unit]}`;
}

/** `2026-11-24 05:46 UTC`: unambiguous for every reader, and sortable by eye. */
export function shortDate(ms: number): string {
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return '';
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function sortOf(url: string | undefined): { key: SortKey; order: Order } {
  const query = new URL(url ?? '/', 'http://bridge.invalid').searchParams;
  const raw = query.get('sort');
  const key: SortKey = raw === 'size' || raw === 'modified' ? raw : 'name';
  return { key, order: query.get('order') === 'desc' ? 'desc' : 'asc' };
}

interface Row {
  resource: Resource;
  name: string;
  isFolder: boolean;
  sizeBytes: number;
  modifiedMs: number;
}

function compareRows(a: Row, b: Row, key: SortKey): number {
  if (key === 'size' && a.sizeBytes !== b.sizeBytes) return a.sizeBytes - b.sizeBytes;
  if (key === 'modified' && a.modifiedMs !== b.modifiedMs) return a.modifiedMs - b.modifiedMs;
  return a.name.localeCompare(b.name, undefined, { numeric: true, sensitivity: 'base' }) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

const STYLE = `
:root{color-scheme:light dark;--fg:#1d2330;--muted:#667085;--line:#e4e7ec;--bg:#fff;--hover:#f5f7fa;--link:#1a56db}
@media (prefers-color-scheme:dark){:root{--fg:#e6e9ef;--muted:#98a2b3;--line:#2c313c;--bg:#15181e;--hover:#1d2129;--link:#7aa2ff}}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:980px;margin:0 auto;padding:24px 16px 48px}
nav.crumbs{font-size:17px;margin-bottom:16px;overflow-wrap:anywhere}nav.crumbs a{color:var(--link);text-decoration:none}nav.crumbs span.sep{color:var(--muted);margin:0 6px}
table{width:100%;border-collapse:collapse}th,td{padding:8px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:middle}
th{font-size:13px;font-weight:600;color:var(--muted);white-space:nowrap}th a{color:inherit;text-decoration:none}th a:hover{text-decoration:underline}
tr:hover td{background:var(--hover)}td.name{overflow-wrap:anywhere}td.name a{color:var(--link);text-decoration:none}td.name a:hover{text-decoration:underline}
td.size,td.modified,th.size,th.modified{white-space:nowrap}td.size,th.size{text-align:right}td.modified{color:var(--muted)}
td.action a{color:var(--link);font-size:13px}.icon{display:inline-block;width:1.4em}p.empty,p.summary{color:var(--muted)}p.connect a{color:var(--link)}
@media (max-width:640px){th.modified,td.modified{display:none}}
`;

/** The index page of `folder`: one listing (usually from the cache), never a store call per entry. */
export async function sendIndexPage(ctx: DavContext, user: BridgeUser, folder: Resource): Promise<void> {
  const children = await ctx.services.tree.list(user, folder);
  const { key, order } = sortOf(ctx.req.url);
  // Client mtimes of every child in one query (lastModifiedOf's rule, batched).
  const mtimes = await ctx.services.props.getMtimes(children.map((child) => child.chain[child.chain.length - 1] as string));
  const rows: Row[] = children.map((child) => ({
    resource: child,
    name: child.entry.name,
    isFolder: child.entry.kind === 'folder',
    sizeBytes: child.entry.kind === 'folder' ? 0 : child.entry.sizeBytes,
    modifiedMs: mtimes.get(child.chain[child.chain.length - 1] as string) ?? child.entry.updatedMs,
  }));
  const direction = order === 'desc' ? -1 : 1;
  rows.sort((a, b) => (a.isFolder !== b.isFolder ? (a.isFolder ? -1 : 1) : direction * compareRows(a, b, key)));

  const segments = ctx.target.rawSegments;
  const selfHref = ctx.hrefBase + encodeHref(segments, { collection: true, nfd: ctx.nfd });
  const crumbs = [`<a href="/">${escapeXmlText('driveway')}</a>`];
  segments.forEach((segment, i) => {
    const href = ctx.hrefBase + encodeHref(segments.slice(0, i + 1), { collection: true, nfd: ctx.nfd });
    crumbs.push(i === segments.length - 1 ? `<span aria-current="page">${escapeXmlText(segment)}</span>` : `<a href="${escapeXmlAttr(href)}">${escapeXmlText(segment)}</a>`);
  });

  const header = (label: string, column: SortKey, cls: string): string => {
    const next: Order = key === column && order === 'asc' ? 'desc' : 'asc';
    const mark = key === column ? (order === 'asc' ? ' ▲' : ' ▼') : '';
    return `<th class="${cls}"><a href="?sort=${column}&amp;order=${next}">${label}${mark}</a></th>`;
  };
  const lines = rows.map((row) => {
    const href = childHref(selfHref, row.name, { collection: row.isFolder, nfd: ctx.nfd });
    const label = escapeXmlText(row.name + (row.isFolder ? '/' : ''));
    const size = row.isFolder ? '' : `<span title="${row.sizeBytes} bytes">${escapeXmlText(humanSize(row.sizeBytes))}</span>`;
    const action = row.isFolder ? '' : `<a href="${escapeXmlAttr(href)}?download" download="${escapeXmlAttr(row.name)}">Download</a>`;
    return (
      `<tr class="${row.isFolder ? 'folder' : 'file'}"><td class="name"><span class="icon" aria-hidden="true">${row.isFolder ? '📁' : '📄'}</span>` +
      `<a href="${escapeXmlAttr(href)}">${label}</a></td><td class="size">${size}</td><td class="modified">${escapeXmlText(shortDate(row.modifiedMs))}</td><td class="action">${action}</td></tr>`
    );
  });
  const up = segments.length > 0 ? '<tr class="up"><td class="name"><span class="icon" aria-hidden="true">↩</span><a href="../">Parent folder</a></td><td></td><td></td><td></td></tr>' : '';
  const files = rows.filter((r) => !r.isFolder);
  const totalBytes = files.reduce((sum, r) => sum + r.sizeBytes, 0);
  const folders = rows.length - files.length;
  const summary = `${folders} ${folders === 1 ? 'folder' : 'folders'}, ${files.length} ${files.length === 1 ? 'file' : 'files'} (${humanSize(totalBytes)})`;
  const connect = connectPageUrl(ctx.services.webApp, ctx.req.headers.host);
  const title = segments.length > 0 ? `${segments[segments.length - 1]} – driveway` : 'driveway';
  const html =
    `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<meta name="referrer" content="no-referrer"><link rel="icon" href="data:,"><title>${escapeXmlText(title)}</title><style>${STYLE}</style></head><body><main>` +
    `<nav class="crumbs" aria-label="Path">${crumbs.join('<span class="sep">/</span>')}</nav>` +
    `<table><thead><tr>${header('Name', 'name', 'name')}${header('Size', 'size', 'size')}${header('Modified', 'modified', 'modified')}<th class="action"></th></tr></thead>` +
    `<tbody>${up}${lines.join('')}</tbody></table>` +
    (rows.length === 0 ? '<p class="empty">This folder is empty.</p>' : `<p class="summary">${escapeXmlText(summary)}</p>`) +
    (connect ? `<p class="connect"><a href="${escapeXmlAttr(connect)}">Connect this drive to your computer or phone</a></p>` : '') +
    `</main></body></html>\n`;
  const body = Buffer.from(html, 'utf8');
  ctx.res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(body.length),
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
    'content-security-policy': INDEX_CSP,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  });
  ctx.res.end(ctx.method === 'HEAD' ? undefined : body);
}
