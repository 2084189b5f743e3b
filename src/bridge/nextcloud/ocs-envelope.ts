/**
 * The OCS envelope (`{ocs: {meta, data}}`), in JSON or XML, as Nextcloud writes it
 * (lib/private/AppFramework/OCS/V1Response.php, V2Response.php, BaseResponse.php):
 *
 * - v1 (`/ocs/v1.php/`): success is statuscode 100 with HTTP 200; a refusal keeps HTTP 200 except
 *   997 (not logged in), which is HTTP 401. The meta also holds `totalitems` and `itemsperpage`
 *   (empty strings).
 * - v2 (`/ocs/v2.php/`): statuscode is the HTTP status (200), 997 is HTTP 401 and 998 (no such
 *   endpoint) HTTP 404.
 * - A refusal the transport decides (429 too many logins, 503 store out of reach) keeps its
 *   HTTP status in both versions, as Nextcloud's maintenance answer does.
 *
 * The format: `format=json|xml` in the query, else `Accept` naming application/json, else XML
 * (Nextcloud's default). XML is PHP XMLWriter's shape: `<?xml version="1.0"?>` (ownCloud's
 * JsonApiJob looks for exactly that line), one space of indent, list items as `<element>`,
 * booleans as `1` and ``. Pure: writes no answer, knows no endpoint.
 */

export type OcsVersion = 1 | 2;
export type OcsFormat = 'json' | 'xml';

/** OCS status codes of Nextcloud's OCSController. */
export const OCS_NOT_LOGGED_IN = 997;
export const OCS_NOT_FOUND = 998;

/** What an endpoint hands back: data (`[]` when none) or a refusal. */
export type OcsResult = { data: OcsValue } | { refusal: { status: number; message: string } };

export type OcsValue = string | number | boolean | null | readonly OcsValue[] | { readonly [key: string]: OcsValue };

export interface RenderedOcs {
  httpStatus: number;
  contentType: string;
  body: string;
}

/** The format a request asks for. */
export function ocsFormatOf(query: URLSearchParams, accept: string | undefined): OcsFormat {
  const format = query.get('format');
  if (format === 'json' || format === 'xml') return format;
  return accept !== undefined && /application\/json/i.test(accept) ? 'json' : 'xml';
}

function httpStatusOf(version: OcsVersion, ocsStatus: number): number {
  if (ocsStatus === OCS_NOT_LOGGED_IN) return 401;
  if (ocsStatus === OCS_NOT_FOUND) return version === 1 ? 200 : 404;
  // 429 and 5xx: the transport's word, in both versions.
  if (ocsStatus === 429 || (ocsStatus >= 500 && ocsStatus < 600)) return ocsStatus;
  if (version === 1) return 200;
  return ocsStatus >= 200 && ocsStatus < 600 ? ocsStatus : 400;
}

/** The envelope of `result` for a request of `version` in `format`. */
export function renderOcs(version: OcsVersion, format: OcsFormat, result: OcsResult): RenderedOcs {
  const ok = 'data' in result;
  const ocsStatus = ok ? (version === 1 ? 100 : 200) : result.refusal.status;
  const meta: Record<string, OcsValue> = {
    status: ok ? 'ok' : 'failure',
    statuscode: ocsStatus,
    message: ok ? 'OK' : result.refusal.message,
  };
  if (version === 1) {
    meta.totalitems = '';
    meta.itemsperpage = '';
  }
  const envelope = { ocs: { meta, data: ok ? result.data : [] } };
  const httpStatus = ok ? 200 : httpStatusOf(version, ocsStatus);
  if (format === 'json') {
    // As PHP's JSON_HEX_TAG: no `<` or `>` in a JSON answer.
    const body = JSON.stringify(envelope).replace(/</g, '\\u003C').replace(/>/g, '\\u003E');
    return { httpStatus, contentType: 'application/json; charset=utf-8', body };
  }
  return { httpStatus, contentType: 'application/xml; charset=utf-8', body: `<?xml version="1.0"?>\n${xmlOf('ocs', envelope.ocs, 0)}` };
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** XML element names come from our own keys; a key that is no XML name is written as `element`, as PHP does for list keys. */
function elementName(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(key) ? key : 'element';
}

function xmlOf(key: string, value: OcsValue, depth: number): string {
  const pad = ' '.repeat(depth);
  const name = elementName(key);
  if (value === null) return `${pad}<${name}/>\n`;
  if (typeof value === 'boolean') return value ? `${pad}<${name}>1</${name}>\n` : `${pad}<${name}></${name}>\n`;
  if (typeof value !== 'object') return `${pad}<${name}>${escapeXml(String(value))}</${name}>\n`;
  const entries: Array<[string, OcsValue]> = Array.isArray(value)
    ? (value as readonly OcsValue[]).map((item) => ['element', item])
    : Object.entries(value as Record<string, OcsValue>);
  if (entries.length === 0) return `${pad}<${name}/>\n`;
  return `${pad}<${name}>\n${entries.map(([k, v]) => xmlOf(k, v, depth + 1)).join('')}${pad}</${name}>\n`;
}
