/**
 * Wire schemas of the organization endpoints (docs/extensions.md, "Organizations") and the
 * record they answer. An organization's id follows the `org_id` rule of schemas/users.ts.
 */
import { z } from 'zod';

export const orgIdSchema = z
  .string({ error: 'id must be a string' })
  .regex(/^[A-Za-z0-9._-]{1,64}$/, 'id must be 1 to 64 letters, digits, ".", "_" or "-"');

const orgName = z.string({ error: 'name must be a string' }).trim().min(1, 'name must not be empty').max(100, 'name must have at most 100 characters');
const allowUnlimited = z.boolean({ error: 'allow_unlimited_quota must be a boolean' });

export const createOrganizationSchema = z.strictObject({
  id: orgIdSchema,
  name: orgName,
  allow_unlimited_quota: allowUnlimited.optional(),
});

export const updateOrganizationSchema = z.strictObject({
  name: orgName.optional(),
  allow_unlimited_quota: allowUnlimited.optional(),
});

export interface OrganizationRecord {
  id: string;
  name: string;
  allow_unlimited_quota: boolean;
  user_count: number;
  group_count: number;
  created: number;
  updated: number;
}
