/**
 * The one rule for sending bytes a user uploaded (docs/content-security.md): the store's view,
 * download and public-link answers and the bridge's GET all take their headers from here, so
 * nothing we serve can run as us on our origin. Owns the type list and the header values only;
 * conditional requests, ranges and the body stay with each sender.
 *
 * - Every answer carries `X-Content-Type-Options: nosniff` (the type comes from the name, never
 *   from the bytes) and USER_CONTENT_CSP: a sandbox with an opaque origin, no script, no
 *   plugin, no form, and nothing loaded from elsewhere.
 * - Only types a browser shows without running anything (raster images, audio, video, plain
 *   text) may be inline; every other type (HTML, SVG, XML, XHTML, JavaScript, PDF, anything
 *   unknown) is an attachment even when the caller asked to view it: the sandbox already stops
 *   script, and the attachment keeps Chromium's PDF viewer and the like out as well.
 */
import contentDisposition from 'content-disposition';
import { lookup as lookupMimeType } from 'mime-types';

/**
 * `sandbox` without any allow-token: no script, no same origin, no form, no popup, no plugin.
 * Images and media of a viewed image, video or audio document come from its own URL ('self').
 */
export const USER_CONTENT_CSP = "sandbox; default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'";

/** Types a browser displays without executing anything: the only ones sent inline. */
const PASSIVE_TYPE = /^(?:image\/(?:png|jpeg|gif|webp|avif|bmp|apng|x-icon|vnd\.microsoft\.icon)|audio\/[\w.+-]+|video\/[\w.+-]+|text\/plain)$/;

export type RequestedDisposition = 'inline' | 'attachment';

/** Content-Type from the name alone: content is never sniffed. */
export function contentTypeOf(name: string): string {
  return lookupMimeType(name) || 'application/octet-stream';
}

/** Whether a browser could run something in this type (anything not known to be passive). */
export function isActiveType(contentType: string): boolean {
  return !PASSIVE_TYPE.test(contentType.split(';')[0]?.trim().toLowerCase() ?? '');
}

/**
 * The headers every answer carrying a user's file gets: Content-Type, nosniff, the sandbox and
 * a Content-Disposition (RFC 6266; the real name in `filename*`, a plain-ASCII `filename` for old
 * clients, since the package's default fallback keeps ISO-8859-1 letters Node refuses on HEAD).
 */
export function userContentHeaders(name: string, requested: RequestedDisposition): Record<string, string> {
  const contentType = contentTypeOf(name);
  const type = requested === 'inline' && !isActiveType(contentType) ? 'inline' : 'attachment';
  return {
    'content-type': contentType,
    'x-content-type-options': 'nosniff',
    'content-security-policy': USER_CONTENT_CSP,
    'content-disposition': contentDisposition(name, { type, fallback: name.replace(/[^\x20-\x7e]/g, '_') }),
  };
}
