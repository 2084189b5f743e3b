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

/** A retention setting of the organization (docs/operations.md "Retention"): a whole number in range, or null for the global value. */
const retentionSetting = (key: string, max: number) =>
  z
    .number({ error: `${key} must be a whole number from 0 to ${max}, or null (the global setting)` })
    .int(`${key} must be a whole number from 0 to ${max}, or null (the global setting)`)
    .min(0, `${key} must be a whole number from 0 to ${max}, or null (the global setting)`)
    .max(max, `${key} must be a whole number from 0 to ${max}, or null (the global setting)`)
    .nullable()
    .optional();

const retentionFields = {
  keep_revisions: retentionSetting('keep_revisions', 1_000_000),
  keep_revision_days: retentionSetting('keep_revision_days', 36_500),
  trash_days: retentionSetting('trash_days', 36_500),
};

export const createOrganizationSchema = z.strictObject({
  id: orgIdSchema,
  name: orgName,
  allow_unlimited_quota: allowUnlimited.optional(),
  ...retentionFields,
});

export const updateOrganizationSchema = z.strictObject({
  name: orgName.optional(),
  allow_unlimited_quota: allowUnlimited.optional(),
  ...retentionFields,
});

export interface OrganizationRecord {
  id: string;
  name: string;
  allow_unlimited_quota: boolean;
  /** The organization's retention settings; null: the global store.retention value applies. */
  keep_revisions: number | null;
  keep_revision_days: number | null;
  trash_days: number | null;
  user_count: number;
  group_count: number;
  created: number;
  updated: number;
}
