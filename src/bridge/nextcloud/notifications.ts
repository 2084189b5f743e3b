/**
 * Nextcloud's notifications API (the notifications app's lib/Controller/EndpointController.php;
 * docs/client-quirks.md §7) over the store's notifications (docs/extensions.md "Notifications"):
 * GET .../api/{v1,v2}/notifications (newest first, with an ETag the desktop sends back as
 * If-None-Match: 304 while the list's ids are unchanged; `X-Nextcloud-User-Status: online`, which
 * the desktop reads as "desktop notifications allowed"), GET and DELETE .../notifications/{id},
 * DELETE .../notifications. The caller's own only: another user's id is 404 to GET and, as in
 * Nextcloud, a DELETE of an id the caller has not is answered 200 and changes nothing. A store
 * without the extension (a foreign one: 404 to its routes) has an empty list.
 */
import { createHash } from 'node:crypto';
import { StoreError, type NotificationEntry } from '../../store-client/contract.js';
import type { BridgeUser } from '../sessions.js';
import { withSession } from '../tree/context.js';
import { OcsRefusal, type EndpointCall, type OcsEndpoint } from './ocs-endpoint.js';
import type { OcsValue } from './ocs-envelope.js';

const BASE = '/apps/notifications/api/{apiVersion}/notifications';

/** The API version of the path: v1 or v2 (Nextcloud's route requirement), else no such endpoint. */
function versionOf(call: EndpointCall): 1 | 2 {
  const version = call.params.apiVersion;
  if (version === 'v1') return 1;
  if (version === 'v2') return 2;
  throw new OcsRefusal(404, 'Invalid query, please check the syntax.');
}

/** The store's answer, with a store that lacks the extension read as having none. */
async function orNone<T>(work: Promise<T>, none: T): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof StoreError && err.kind === 'not-found') return none;
    throw err;
  }
}

/** An id as Nextcloud's route takes it (`\d+`); 0 and anything else is no notification. */
function idOf(call: EndpointCall): number {
  const raw = call.params.id ?? '';
  if (!/^\d{1,15}$/.test(raw) || Number(raw) === 0) throw new OcsRefusal(404, 'Notification not found');
  return Number(raw);
}

/** PHP's date('c'): seconds, and +00:00 for UTC. */
function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');
}

/** The notification object of notificationToArray: v2 adds the rich fields, the icon and shouldNotify. */
function toOcs(entry: NotificationEntry, user: BridgeUser, version: 1 | 2): OcsValue {
  const message = typeof entry.params.comment === 'string' ? entry.params.comment : '';
  const base: { [key: string]: OcsValue } = {
    notification_id: entry.id,
    app: 'driveway',
    user: user.name,
    datetime: isoSeconds(entry.createdMs),
    object_type: entry.objectType,
    object_id: entry.objectId,
    subject: entry.subject,
    message,
    link: '',
  };
  // PHP writes an empty array as [] in JSON.
  const rich: { [key: string]: OcsValue } = version === 1 ? {} : { subjectRich: entry.subject, subjectRichParameters: [], messageRich: message, messageRichParameters: [], icon: '', shouldNotify: true };
  return { ...base, ...rich, actions: [] };
}

/** Nextcloud's ETag of a list: md5 of the JSON of its ids, quoted. */
function etagOf(ids: readonly number[]): string {
  return `"${createHash('md5').update(JSON.stringify(ids)).digest('hex')}"`;
}

/** Whether If-None-Match names `etag` (or is `*`). */
function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim().replace(/^W\//, '');
    return t === '*' || t === etag || `"${t}"` === etag;
  });
}

async function list(call: EndpointCall): Promise<OcsValue> {
  const version = versionOf(call);
  const user = call.user as BridgeUser;
  const entries = await orNone(withSession(user, (s) => call.options.client.listNotifications(s)), []);
  call.reply.headers['X-Nextcloud-User-Status'] = 'online';
  if (version === 2) {
    const etag = etagOf(entries.map((e) => e.id));
    call.reply.headers.ETag = etag;
    const asked = call.req.headers['if-none-match'];
    if (matches(typeof asked === 'string' ? asked : undefined, etag)) call.reply.notModified = true;
  }
  return entries.map((entry) => toOcs(entry, user, version));
}

async function getOne(call: EndpointCall): Promise<OcsValue> {
  const version = versionOf(call);
  const user = call.user as BridgeUser;
  const id = idOf(call);
  try {
    return toOcs(await withSession(user, (s) => call.options.client.getNotification(s, id)), user, version);
  } catch (err) {
    if (err instanceof StoreError && err.kind === 'not-found') throw new OcsRefusal(404, 'Notification not found');
    throw err;
  }
}

async function deleteOne(call: EndpointCall): Promise<OcsValue> {
  versionOf(call);
  const id = idOf(call);
  await orNone(withSession(call.user as BridgeUser, (s) => call.options.client.deleteNotification(s, id)), undefined);
  return [];
}

async function deleteAll(call: EndpointCall): Promise<OcsValue> {
  versionOf(call);
  await orNone(withSession(call.user as BridgeUser, (s) => call.options.client.deleteNotifications(s)), undefined);
  return [];
}

export const notificationsEndpoints: readonly OcsEndpoint[] = [
  { path: BASE, answer: list },
  { method: 'DELETE', path: BASE, answer: deleteAll },
  { path: `${BASE}/{id}`, answer: getOne },
  { method: 'DELETE', path: `${BASE}/{id}`, answer: deleteOne },
];

/** The capability (the notifications app's Capabilities.php): the desktop polls only when `ocs-endpoints` is there. */
export const NOTIFICATIONS_CAPABILITY: OcsValue = { 'ocs-endpoints': ['list', 'get', 'delete', 'delete-all'] };
