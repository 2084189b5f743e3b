/**
 * Wire schemas (snake_case, as docs/api.md names the fields) for login, the current user and the
 * administrator's user endpoints. Request schemas are strict where docs/store-semantics.md
 * says so; response types are what the routes send. Rules that need the database (unique
 * email, quota against usage) live in the routes, not here.
 */
import { z } from 'zod';

/** Generous upper bounds so no request can make us hash or store megabytes. */
const MAX_PASSWORD_CHARS = 1024;
const MAX_EMAIL_CHARS = 254;
const MAX_FULLNAME_CHARS = 255;
const MAX_COMMENT_CHARS = 4096;

export const loginBodySchema = z.object({
  username: z.string().min(1).max(MAX_EMAIL_CHARS),
  password: z.string().min(1).max(MAX_PASSWORD_CHARS),
  /** The TOTP code, for an account with 2FA on (docs/store-semantics.md "Current user"). */
  code: z.string({ error: 'code must be a string of digits' }).max(64, 'code is too long').optional(),
});

export const logoutQuerySchema = z.object({
  /** Accepted and ignored: the store has no chat sessions. */
  chat_token: z.string().optional(),
});

/** docs/api.md "Session" object, the body of a successful login. */
export interface SessionBody {
  uuid: string;
  token: string;
  status: 'success';
  msg: string;
  is_admin: boolean;
  fullname: string;
  fileaccesskey: string;
  avatar: string;
  /** Extension, present (true) only when the password has expired: the session is restricted. */
  password_expired?: true;
}

/** docs/api.md "Sessions of the web app" (`data` of POST and GET /api/session): who the session is, never its token. */
export interface WebSessionBody {
  uuid: string;
  username: string;
  fullname: string;
  is_admin: boolean;
  fileaccesskey: string;
  avatar: string;
  password_expired?: true;
}

/** docs/api.md "User profile" (`data` of GET /api/user). */
export interface UserProfileBody {
  uuid: string;
  fullname: string;
  email: string;
  is_active: boolean;
  is_admin: boolean;
  avatar: string;
  disk_quota: number;
  disk_used: number;
  twofa: boolean;
  created: number;
  /** Present only when `store.passwordMaxAgeDays` is set. */
  pass_expires?: number;
}

/** docs/api.md "Limits": a new user's full name has at least 3 characters and no digits. */
const adminFullname = z
  .string()
  .trim()
  .min(3, 'fullname must have at least 3 characters')
  .max(MAX_FULLNAME_CHARS)
  .refine((name) => !/\p{Nd}/u.test(name), 'fullname must not contain digits');

const email = z.email('email must be a valid email address').max(MAX_EMAIL_CHARS);

/** The password rule itself (passwordProblem) is applied by the route, to answer `invalid_password`. */
const password = z.string().max(MAX_PASSWORD_CHARS, 'password is too long');

const quotaBytes = z.number().int('disk_quota must be an integer').max(Number.MAX_SAFE_INTEGER);

export const orgQuerySchema = z.object({
  org_id: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, 'org_id must be 1 to 64 letters, digits, ".", "_" or "-"')
    .optional(),
});

export const adminCreateUserBodySchema = z.strictObject({
  fullname: adminFullname,
  email,
  password,
  disk_quota: quotaBytes.min(-1, 'disk_quota must be -1, 0 or a positive number of bytes'),
  is_active: z.boolean(),
  is_admin: z.boolean(),
  comment: z.string().max(MAX_COMMENT_CHARS).optional(),
});

export const adminUpdateUserBodySchema = z.strictObject({
  fullname: adminFullname.optional(),
  email: email.optional(),
  password: password.optional(),
  disk_quota: quotaBytes.optional(),
  is_active: z.boolean().optional(),
  is_admin: z.boolean().optional(),
  twofa: z.boolean().optional(),
  comment: z.string().max(MAX_COMMENT_CHARS).optional(),
});

export const userUuidParamsSchema = z.object({ user_uuid: z.string() });

export type AdminCreateUserBody = z.infer<typeof adminCreateUserBodySchema>;
export type AdminUpdateUserBody = z.infer<typeof adminUpdateUserBodySchema>;

/** Turns the first zod issue into one readable line for the 400 envelope. */
export function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid request';
  const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return `${where}${issue.message}`;
}
