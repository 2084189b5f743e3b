/**
 * Wire schemas of sharing (docs/api.md "Share approval", the pending incoming lists, and the share links
 * extension in docs/extensions.md) and the records their answers carry. Bodies are strict; a
 * violation names the field. Rules that need the database live in ops/.
 */
import { z } from 'zod';
import { SHARE_TYPES } from '../storage/shares.js';

const MAX_RECIPIENTS = 100;
const MAX_COMMENT_CHARS = 1000;

export const recipientList = (field: string) =>
  z
    .array(z.string({ error: `${field} must be an array of UUIDs` }).max(64, `${field}: a UUID has 36 characters`), {
      error: `${field} must be an array of UUIDs`,
    })
    .min(1, `${field} must name at least one user or group`)
    .max(MAX_RECIPIENTS, `${field} may name at most ${MAX_RECIPIENTS} users and groups`);

export const commentField = (field: string) =>
  z.string({ error: `${field} must be a string` }).max(MAX_COMMENT_CHARS, `${field} must have at most ${MAX_COMMENT_CHARS} characters`);

/** PUT /api/user/pending_incoming and /api/groups/{uuid}/pending_incoming. */
export const answerIncomingSchema = z.strictObject({
  uuid: z.string({ error: 'uuid must be a string' }).min(1, 'uuid must not be empty').max(64),
  action: z.enum(['accept', 'reject'], { error: 'action must be "accept" or "reject"' }),
});

const shareType = (field: string) => z.enum(SHARE_TYPES, { error: `${field} must be one of ${SHARE_TYPES.join(', ')}` });

export const approverBodySchema = z.strictObject({
  approver_id: z.string({ error: 'approver_id must be a string' }).min(1, 'approver_id must not be empty').max(64),
  share_type: shareType('share_type'),
});

export const shareTypeParam = shareType('type');

/** PUT /api/pending_shares/{pending_uuid}/approval. */
export const decisionBodySchema = z.strictObject({
  status: z.enum(['approved', 'rejected'], { error: 'status must be "approved" or "rejected"' }),
  comment: commentField('comment').optional(),
});

const linkPassword = z
  .string({ error: 'password must be a string' })
  .min(1, 'password must not be empty')
  .max(1024, 'password must have at most 1024 characters');
const expires = z
  .number({ error: 'expires must be a time in epoch milliseconds' })
  .int('expires must be a time in epoch milliseconds')
  .positive('expires must be a time in epoch milliseconds')
  .max(Number.MAX_SAFE_INTEGER);

/** POST /api/nodes/{uuid}/shares (docs/extensions.md). */
export const createLinkSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.literal('public'), password: linkPassword.optional(), expires: expires.optional(), comment: commentField('comment').optional() }),
    z.strictObject({
      type: z.literal('private'),
      recipients: recipientList('recipients'),
      writable: z.boolean({ error: 'writable must be a boolean' }).optional(),
      comment: commentField('comment').optional(),
    }),
    z.strictObject({ type: z.literal('upload'), password: linkPassword.optional(), expires: expires.optional(), comment: commentField('comment').optional() }),
  ],
  { error: 'must be "public", "private" or "upload"' },
);
export type CreateLinkInput = z.infer<typeof createLinkSchema>;

/** PUT /api/shares/{share_uuid} (docs/extensions.md): a link's password and expiry (null removes one), and public or upload. */
export const updateLinkSchema = z
  .strictObject({
    type: z.enum(['public', 'upload'], { error: 'type must be "public" or "upload"' }).optional(),
    password: linkPassword.nullable().optional(),
    expires: expires.nullable().optional(),
  })
  .refine((body) => body.type !== undefined || body.password !== undefined || body.expires !== undefined, { error: 'name at least one of type, password, expires' });
export type UpdateLinkInput = z.infer<typeof updateLinkSchema>;

/** One element of the pending incoming lists (docs/api.md "Pending incoming share"). */
export interface PendingIncomingRecord {
  uuid: string;
  name: string;
  type: 'Dir' | 'File';
  size: number;
  sharer_uuid: string | null;
  sharer_fullname: string;
  shared_at: number;
  source_uuid: string | null;
}

/** The answer to accepting or rejecting one. */
export interface IncomingAnswerRecord {
  uuid: string;
  state: 'accepted' | 'rejected';
  node_uuid?: string;
}

export interface ApproverRecord {
  approver_id: string;
  share_type: string;
  fullname: string;
  email: string;
  added: number;
}

/** docs/api.md "Pending share approval request", with the requester and the decision beside it. */
export interface PendingShareRecord {
  pending_uuid: string;
  workspace_id: string;
  workspace_type: 'User' | 'Group';
  workspace_name: string;
  share_type: string;
  requested_at: number;
  comment: string;
  share_info: Record<string, unknown>;
  requester_uuid: string | null;
  requester_fullname: string;
  state: string;
  decided_at: number | null;
  approval_comment: string;
}

/** A share link as its answers show it; `token` and `url` only in the answer that created it. */
export interface ShareRecord {
  share_uuid: string;
  type: 'public' | 'private' | 'upload';
  node_uuid: string;
  node_name: string;
  node_type: 'Dir' | 'File';
  owner_type: 'User' | 'Group';
  owner_uuid: string;
  creator_uuid: string | null;
  created: number;
  expires: number | null;
  password_protected?: boolean;
  writable?: boolean;
  recipients?: Array<{ uuid: string; type: 'User' | 'Group'; name: string }>;
  token?: string;
  url?: string;
}
