/**
 * Group reads the bridge needs (edition 3.0, docs/api.md "Groups for members"): the caller's groups and
 * a group's WebDrive endpoint. Tolerant: a server without groups answers 404 (edition 1.0) and
 * the caller gets an error of kind not-found to fall back on; endpoint records whose shape the
 * interface leaves open are read leniently (see webdriveOf).
 */
import { z } from 'zod';
import { StoreError } from './errors.js';
import type { StoreHttp } from './http.js';
import { parseWith, seg } from './parse.js';
import { dataEnvelope, groupEntrySchema } from './schemas.js';
import type { GroupEntry, StoreSession, WebdriveEndpoint } from './types.js';
import { webdriveOf } from './user.js';

/** A Group entry (docs/api.md) in the bridge's terms. */
export function toGroupEntry(g: {
  group_uuid: string;
  group_name: string;
  is_admin: boolean;
  node_permissions: string[];
  tag_permissions: string[];
  share_permissions: string[];
  avatar?: string | null | undefined;
}): GroupEntry {
  const group: GroupEntry = {
    id: g.group_uuid,
    name: g.group_name,
    isAdmin: g.is_admin,
    nodePermissions: g.node_permissions,
    tagPermissions: g.tag_permissions,
    sharePermissions: g.share_permissions,
  };
  if (g.avatar) group.avatar = g.avatar;
  return group;
}

export async function listGroups(http: StoreHttp, s: StoreSession, signal?: AbortSignal): Promise<GroupEntry[]> {
  const operation = 'groups.list';
  const res = await http.call({ method: 'GET', path: '/api/groups', token: s.token, signal }, operation);
  return parseWith(dataEnvelope(z.array(groupEntrySchema)), res.body, operation, res.status).data.map(toGroupEntry);
}

/**
 * A group's WebDrive endpoint as the caller may see it; undefined when it has none or it is
 * hidden from the caller (403/404 included: a member who may not see it learns nothing).
 */
export async function groupWebdrive(http: StoreHttp, s: StoreSession, groupId: string, signal?: AbortSignal): Promise<WebdriveEndpoint | undefined> {
  const operation = 'groups.webdrive';
  try {
    const res = await http.call({ method: 'GET', path: `/api/groups/${seg(groupId)}/webdrive`, token: s.token, signal }, operation);
    return webdriveOf(res.body);
  } catch (err) {
    if (err instanceof StoreError && (err.kind === 'not-found' || err.kind === 'forbidden')) return undefined;
    throw err;
  }
}

/**
 * A group's quota and usage from its details (GET /api/groups/{uuid}); the interface leaves the
 * record open, so undefined when it carries no `disk_quota`/`disk_used` (driveway's does).
 */
export async function groupUsage(http: StoreHttp, s: StoreSession, groupId: string, signal?: AbortSignal): Promise<{ quotaBytes: number; usedBytes: number } | undefined> {
  const operation = 'groups.details';
  const res = await http.call({ method: 'GET', path: `/api/groups/${seg(groupId)}`, token: s.token, signal }, operation);
  return usageOf((res.body as { data?: Record<string, unknown> } | undefined)?.data);
}

/** Quota and usage from a group record that has them; undefined otherwise. */
export function usageOf(data: { disk_quota?: unknown; disk_used?: unknown } | undefined): { quotaBytes: number; usedBytes: number } | undefined {
  const quota = Number(data?.disk_quota);
  const used = Number(data?.disk_used);
  if (!Number.isFinite(quota) || !Number.isFinite(used)) return undefined;
  return { quotaBytes: quota, usedBytes: used };
}
