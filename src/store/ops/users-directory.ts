/**
 * The user directory (docs/api.md "Current user": GET /api/users): the users of the caller's
 * organization, for choosing whom to share with. `format=short` and `short_active` answer
 * `{uuid, fullname, email}` (the latter active users only); no format adds `avatar`,
 * `is_active` and `is_admin`. Never hashes, secrets, 2FA state or quotas of others; never a
 * user of another organization.
 */
import { z } from 'zod';
import { mapInOrder } from '../in-order.js';
import type { StoreContext } from '../context.js';
import { listOrganizationUsers } from '../storage/users.js';
import type { AuthenticatedUser } from '../sessions.js';
import { avatarUrl } from './avatars.js';
import { parseInput } from './input.js';

export interface ShortDirectoryEntry {
  uuid: string;
  fullname: string;
  email: string;
}

export interface DirectoryEntry extends ShortDirectoryEntry {
  avatar: string;
  is_active: boolean;
  is_admin: boolean;
}

const querySchema = z.object({
  format: z.enum(['short', 'short_active'], { error: 'must be "short" or "short_active", or left out' }).optional(),
});

export async function listUsers(ctx: StoreContext, caller: AuthenticatedUser, query: unknown): Promise<ShortDirectoryEntry[] | DirectoryEntry[]> {
  const { format } = parseInput(querySchema, query);
  const rows = await listOrganizationUsers(ctx.storage.sql, caller.orgId, format === 'short_active');
  if (format !== undefined) return rows.map((row) => ({ uuid: row.uuid, fullname: row.fullname, email: row.email }));
  return mapInOrder(rows, async (row) => ({
    uuid: row.uuid,
    fullname: row.fullname,
    email: row.email,
    avatar: await avatarUrl(ctx, row.uuid),
    is_active: row.is_active === 1,
    is_admin: row.is_admin === 1,
  }));
}
