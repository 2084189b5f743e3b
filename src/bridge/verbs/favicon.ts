/**
 * /favicon.ico: browsers ask for it beside every page and every file they show. Without an
 * answer each view logs a failed load; the index page names an empty icon, but a file opened on
 * its own (a .txt) has no page to say so. A 32x32 PNG of a drive, served without credentials
 * (it is the same for everyone) and cacheable for a day. Only GET and HEAD of exactly this path
 * come here, and only when the root holds nothing of that name (it never does: the root has
 * fixed names only); PROPFIND and every other verb still answer 404 for it.
 */
import type { ServerResponse } from 'node:http';

export const FAVICON_PATH = '/favicon.ico';

const ICON = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAYAAABzenr0AAAAVUlEQVR42mNgwAKkwm7/pwVmwAdoZSlRjqG35RiOGNkOGCjL4Y4YdcCoAwa1A6gFRh0w6oCR4wBcekeOA4ZfGhitC0YdMDIcMNovGBQOGPDO6UB2zwFBF/P01RCoXwAAAABJRU5ErkJggg==',
  'base64',
);

export function sendFavicon(res: ServerResponse, method: string): void {
  res.writeHead(200, {
    'content-type': 'image/png',
    'content-length': String(ICON.length),
    'cache-control': 'public, max-age=86400',
    'x-content-type-options': 'nosniff',
  });
  res.end(method === 'HEAD' ? undefined : ICON);
}
