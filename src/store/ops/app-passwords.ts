/**
 * App passwords (docs/extensions.md "App passwords"): long random passwords a user makes for
 * clients that cannot answer a two-factor prompt (WebDAV). `POST /auth` accepts one as
 * `password`, with no `code`. Only a SHA-256 of each is stored: they carry 120 random bits, so
 * a fast hash cannot be searched backwards, and a login finds one by the hash of what was typed
 * (the lookup's timing depends on that hash, never on a stored secret). A session opened with
 * one may not make or delete app passwords, change the password or toggle 2FA: a leaked app
 * password must not become the account. One made with `may_share` (the login flow's, for the
 * Nextcloud apps) may also make, change and remove shares (policy.ts). Making and revoking ask for the password (or a code)
 * again (reauth.ts).
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { StoreContext } from '../context.js';
import {
  appPasswordByHash,
  appPasswordOf,
  countAppPasswords,
  deleteAppPassword,
  insertAppPassword,
  listAppPasswords,
  type AppPasswordRow,
} from '../storage/users.js';
import { isUuid } from '../storage/nodes.js';
import type { Sql } from '../storage/sql.js';
import { conflict, forbidden, StoreHttpError } from '../envelope.js';
import { revokeAppPasswordSessions, type AuthenticatedUser } from '../sessions.js';
import { parseInput, textLine } from './input.js';
import { reauthFields, requireReauth } from './reauth.js';
import { canonicalCode, randomCode, sha256Hex } from './secret-codes.js';
import type { ClientInfo } from '../client-ip.js';

export const MAX_APP_PASSWORDS = 50;
const GROUPS = 4;
const GROUP_CHARS = 6;

/** `data` of the list: never the password or its hash. */
export interface AppPasswordRecord {
  uuid: string;
  name: string;
  created: number;
  last_used: number | null;
  /** Its sessions may make, change and remove shares (policy.ts `with-share-right`). */
  may_share: boolean;
}

/** `data` of a creation: the only time the password is shown. */
export interface CreatedAppPassword extends AppPasswordRecord {
  password: string;
}

const createSchema = z.strictObject({ name: textLine(1, 100), may_share: z.boolean().optional(), ...reauthFields });
const deleteSchema = z.strictObject(reauthFields);

/** 15 random bytes (120 bits) as 24 base32 letters in groups: `xxxxxx-xxxxxx-xxxxxx-xxxxxx`. */
export function generateAppPassword(): string {
  return randomCode(GROUPS, GROUP_CHARS);
}

/**
 * The canonical form of something typed as an app password (case, dashes and spaces do not
 * matter), or undefined when it cannot be one.
 */
export function canonicalAppPassword(typed: string): string | undefined {
  return canonicalCode(typed, GROUPS * GROUP_CHARS);
}

const hashOf = sha256Hex;

/** The user's app password that `typed` is, if any. */
export async function matchAppPassword(sql: Sql, userUuid: string, typed: string): Promise<AppPasswordRow | undefined> {
  const canonical = canonicalAppPassword(typed);
  if (canonical === undefined) return undefined;
  const wanted = hashOf(canonical);
  const row = await appPasswordByHash(sql, userUuid, wanted);
  return row && timingSafeEqual(Buffer.from(row.secret_hash, 'hex'), Buffer.from(wanted, 'hex')) ? row : undefined;
}

/**
 * 403 for what a session opened with an app password may not do (`action` completes "may not
 * ..."); `exceptShareRight`: unless its app password was made with `may_share`.
 */
export function refuseAppPasswordSession(caller: AuthenticatedUser, action: string, exceptShareRight = false): void {
  if (caller.appPasswordUuid !== null && !(exceptShareRight && caller.appMayShare)) {
    throw forbidden(`a session opened with an app password may not ${action}; log in with your password`);
  }
}

function recordOf(row: AppPasswordRow): AppPasswordRecord {
  return { uuid: row.uuid, name: row.name, created: row.created, last_used: row.last_used, may_share: Number(row.may_share) === 1 };
}

export async function listUserAppPasswords(ctx: StoreContext, caller: AuthenticatedUser): Promise<AppPasswordRecord[]> {
  return (await listAppPasswords(ctx.storage.sql, caller.userUuid)).map(recordOf);
}

/** Makes an app password, asking again (reauth.ts); 409 `too_many_app_passwords` at the bound. */
export async function createAppPassword(ctx: StoreContext, caller: AuthenticatedUser, body: unknown, client: ClientInfo): Promise<CreatedAppPassword> {
  const { name, may_share: mayShare = false, ...proof } = parseInput(createSchema, body);
  const { storage: { sql }, clock } = ctx;
  await requireReauth(ctx, caller, proof, client, 'make an app password');
  const password = generateAppPassword();
  const row = { uuid: randomUUID(), user_uuid: caller.userUuid, name, secret_hash: hashOf(canonicalAppPassword(password) as string), created: clock.now(), may_share: mayShare ? 1 : 0 };
  await sql.transaction(async (tx) => {
    if ((await countAppPasswords(tx, caller.userUuid)) >= MAX_APP_PASSWORDS) {
      throw conflict(`at most ${MAX_APP_PASSWORDS} app passwords; delete one first`, 'too_many_app_passwords');
    }
    await insertAppPassword(tx, row);
  });
  return { ...recordOf({ ...row, last_used: null }), password };
}

/**
 * Deletes one of the caller's app passwords and ends the sessions it opened, asking again
 * (reauth.ts; the proof in the body); 404 when not theirs.
 */
export async function deleteUserAppPassword(ctx: StoreContext, caller: AuthenticatedUser, uuid: string, body: unknown, client: ClientInfo): Promise<void> {
  const { storage: { sql }, clock } = ctx;
  const proof = parseInput(deleteSchema, body);
  const notFound = new StoreHttpError(404, 'not_found', 'app password not found');
  if (!isUuid(uuid) || !(await appPasswordOf(sql, caller.userUuid, uuid.toLowerCase()))) throw notFound;
  await requireReauth(ctx, caller, proof, client, 'revoke an app password');
  await sql.transaction(async (tx) => {
    const row = await appPasswordOf(tx, caller.userUuid, uuid.toLowerCase());
    if (!row) throw notFound;
    await revokeAppPasswordSessions(tx, clock, row.uuid);
    await deleteAppPassword(tx, row.uuid);
  });
}
