/** Records the administrator's user endpoints answer (docs/store-semantics.md, "Groups and administration"). */
import type { GroupEntry } from './groups.js';

/** `data` of GET /api/admin/users (one per user) and GET /api/admin/users/{uuid}. */
export interface AdminUserRecord {
  uuid: string;
  fullname: string;
  email: string;
  org_id: string;
  is_active: boolean;
  is_admin: boolean;
  disk_quota: number;
  disk_used: number;
  twofa: boolean;
  comment: string;
  avatar: string;
  created: number;
  updated: number;
  /** The user's memberships, as Group entries (docs/api.md). */
  groups: GroupEntry[];
}
