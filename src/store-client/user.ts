/** Current-user endpoints (edition 3.0). */
import type { StoreHttp } from './http.js';
import { parseWith, toMs } from './parse.js';
import { dataEnvelope, userProfileSchema } from './schemas.js';
import type { StoreSession, UserProfile } from './types.js';

export async function currentUser(http: StoreHttp, s: StoreSession, signal?: AbortSignal): Promise<UserProfile> {
  const operation = 'user.current';
  const res = await http.call({ method: 'GET', path: '/api/user', token: s.token, signal }, operation);
  const d = parseWith(dataEnvelope(userProfileSchema), res.body, operation, res.status).data;
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
