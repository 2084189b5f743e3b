/**
 * Wire shape of the notifications list (docs/api.md "Notifications"): the record every answer
 * carries. The words of `subject` are the store's (English); a client that speaks another
 * language makes its own from `kind` and `params`.
 */
import { z } from 'zod';

export const NOTIFICATION_KINDS = ['copy_offered', 'approval_waiting', 'request_approved', 'request_rejected', 'quota_near', 'link_expiring'] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export const notificationRecordSchema = z.object({
  id: z.number().int(),
  kind: z.string(),
  object_type: z.string(),
  object_id: z.string(),
  subject: z.string(),
  params: z.record(z.string(), z.unknown()),
  created: z.number(),
});

export type NotificationRecord = z.infer<typeof notificationRecordSchema>;
