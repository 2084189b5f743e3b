/** Current-user endpoints (edition 3.0). */
import { StoreError } from './errors.js';
import type { StoreHttp } from './http.js';
import { parseWith, toMs } from './parse.js';
import { dataEnvelope, userProfileSchema } from './schemas.js';
import type { StoreSession, UserProfile, WebdriveEndpoint } from './types.js';

/** A User profile (docs/api.md) in the bridge's terms. */
export function toUserProfile(d: {
  uuid: string;
  fullname: string;
  email: string;
  is_active: boolean;
  is_admin: boolean;
  avatar?: string | null | undefined;
  disk_quota: number;
  disk_used: number;
  twofa: boolean;
  created?: number | undefined;
  pass_expires?: number | undefined;
}): UserProfile {
  const profile: UserProfile = {
    id: d.uuid,
    fullname: d.fullname,
    email: d.email,
    isActive: d.is_active,
    isAdmin: d.is_admin,
    diskQuotaBytes: d.disk_quota,
    diskUsedBytes: d.disk_used,
    twofa: d.twofa,
  };
  if (d.avatar) profile.avatar = d.avatar;
  const created = toMs(d.created);
  if (created !== undefined) profile.createdMs = created;
  const passExpires = toMs(d.pass_expires);
  if (passExpires !== undefined) profile.passExpiresMs = passExpires;
  return profile;
}

export async function currentUser(http: StoreHttp, s: StoreSession, signal?: AbortSignal): Promise<UserProfile> {
  const operation = 'user.current';
  const res = await http.call({ method: 'GET', path: '/api/user', token: s.token, signal }, operation);
  return toUserProfile(parseWith(dataEnvelope(userProfileSchema), res.body, operation, res.status).data);
}

/**
 * Reads an endpoint record whose shape the interface leaves open: `data` may be `{endpoint}` (with
 * `show_url_to_group_members` for groups), the bare name, or null/empty for none.
 */
export function webdriveOf(body: unknown): WebdriveEndpoint | undefined {
  const data = typeof body === 'object' && body !== null && 'data' in body ? (body as { data: unknown }).data : body;
  const record = typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : undefined;
  const name = typeof data === 'string' ? data : record?.endpoint;
  if (typeof name !== 'string' || name === '') return undefined;
  const show = record?.show_url_to_group_members;
  return typeof show === 'boolean' ? { endpoint: name, showUrlToGroupMembers: show } : { endpoint: name };
}

/** The caller's WebDrive endpoint; undefined when they have none (a 404 from the server counts as none). */
export async function userWebdrive(http: StoreHttp, s: StoreSession, signal?: AbortSignal): Promise<WebdriveEndpoint | undefined> {
  const operation = 'user.webdrive';
  try {
    const res = await http.call({ method: 'GET', path: '/api/user/webdrive', token: s.token, signal }, operation);
    return webdriveOf(res.body);
  } catch (err) {
    if (err instanceof StoreError && err.kind === 'not-found' && err.code !== 'not_implemented') return undefined;
    throw err;
  }
}
