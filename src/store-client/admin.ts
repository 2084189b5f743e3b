/** Administrator endpoints (edition 3.0). */
import type { StoreHttp } from './http.js';
import { seg } from './parse.js';
import type { NewUser, StoreSession, UserUpdate } from './types.js';

function wireUser(input: UserUpdate | NewUser): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (input.fullname !== undefined) body.fullname = input.fullname;
  if (input.email !== undefined) body.email = input.email;
  if (input.password !== undefined) body.password = input.password;
  if (input.diskQuotaBytes !== undefined) body.disk_quota = input.diskQuotaBytes;
  if (input.isActive !== undefined) body.is_active = input.isActive;
  if (input.isAdmin !== undefined) body.is_admin = input.isAdmin;
  if ('twofa' in input && input.twofa !== undefined) body.twofa = input.twofa;
  if (input.comment !== undefined) body.comment = input.comment;
  return body;
}

/** Creates a user; returns the new UUID when the server says it (driveway's does in `data.uuid`). */
export async function createUser(http: StoreHttp, s: StoreSession, input: NewUser, orgId?: string): Promise<string | undefined> {
  const body = wireUser({ isActive: true, isAdmin: false, diskQuotaBytes: 0, ...input });
  const query = orgId ? `?org_id=${encodeURIComponent(orgId)}` : '';
  const res = await http.call({ method: 'POST', path: `/api/admin/users${query}`, token: s.token, json: body }, 'admin.createUser');
  const uuid = (res.body as { data?: { uuid?: unknown } } | undefined)?.data?.uuid;
  return typeof uuid === 'string' ? uuid : undefined;
}

export async function updateUser(http: StoreHttp, s: StoreSession, userId: string, patch: UserUpdate): Promise<void> {
  await http.call({ method: 'PUT', path: `/api/admin/users/${seg(userId)}`, token: s.token, json: wireUser(patch) }, 'admin.updateUser');
}
