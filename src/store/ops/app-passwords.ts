/**
 * App passwords (docs/extensions.md "App passwords"): long random passwords a user makes for
 * clients that cannot answer a two-factor prompt (WebDAV). `POST /auth` accepts one as
 * `password`, with no `code`. Only a SHA-256 of each is stored: they carry 120 random bits, so
 * a fast hash cannot be searched backwards, and a login finds one by the hash of what was typed
 * (the lookup's timing depends on that hash, never on a stored secret). A session opened with
 * one may not make or delete app passwords, change the password or toggle 2FA: a leaked app
 * password must not become the account.
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
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

export const MAX_APP_PASSWORDS = 50;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz234567';
const GROUPS = 4;
const GROUP_CHARS = 6;

/** `data` of the list: never the password or its hash. */
export interface AppPasswordRecord {
  uuid: string;
  name: string;
  created: number;
  last_used: number | null;
}

/** `data` of a creation: the only time the password is shown. */
export interface CreatedAppPassword extends AppPasswordRecord {
  password: string;
}

const createSchema = z.strictObject({ name: textLine(1, 100) });

/** 15 random bytes (120 bits) as 24 base32 letters in groups: `xxxxxx-xxxxxx-xxxxxx-xxxxxx`. */
export function generateAppPassword(): string {
  const bytes = randomBytes((GROUPS * GROUP_CHARS * 5) / 8);
  let bits = 0;
  let value = 0;
  let letters = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      letters += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  return (letters.match(new RegExp(`.{${GROUP_CHARS}}`, 'g')) as string[]).join('-');
}

/**
 * The canonical form of something typed as an app password (case, dashes and spaces do not
 * matter), or undefined when it cannot be one.
 */
export function canonicalAppPassword(typed: string): string | undefined {
  const letters = typed.replace(/[\s-]/g, '').toLowerCase();
  return new RegExp(`^[${ALPHABET}]{${GROUPS * GROUP_CHARS}}$`).test(letters) ? letters : undefined;
}

function hashOf(canonical: string): string {
  return createHash('sha256').update(canonical).digest('hex');
}

/** The user's app password that `typed` is, if any. */
export async function matchAppPassword(sql: Sql, userUuid: string, typed: string): Promise<AppPasswordRow | undefined> {
  const canonical = canonicalAppPassword(typed);
  if (canonical === undefined) return undefined;
  const wanted = hashOf(canonical);
  const row = await appPasswordByHash(sql, userUuid, wanted);
  return row && timingSafeEqual(Buffer.from(row.secret_hash, 'hex'), Buffer.from(wanted, 'hex')) ? row : undefined;
}

/** 403 for what a session opened with an app password may not do (`action` completes "may not ..."). */
export function refuseAppPasswordSession(caller: AuthenticatedUser, action: string): void {
  if (caller.appPasswordUuid !== null) {
    throw forbidden(`a session opened with an app password may not ${action}; log in with your password`);
  }
}

function recordOf(row: AppPasswordRow): AppPasswordRecord {
  return { uuid: row.uuid, name: row.name, created: row.created, last_used: row.last_used };
}

export async function listUserAppPasswords(ctx: StoreContext, caller: AuthenticatedUser): Promise<AppPasswordRecord[]> {
  return (await listAppPasswords(ctx.storage.sql, caller.userUuid)).map(recordOf);
}

/** Makes an app password; 409 `too_many_app_passwords` at the bound. */
export async function createAppPassword(ctx: StoreContext, caller: AuthenticatedUser, body: unknown): Promise<CreatedAppPassword> {
  const { name } = parseInput(createSchema, body);
  const { storage: { sql }, clock } = ctx;
  const password = generateAppPassword();
  const row = { uuid: randomUUID(), user_uuid: caller.userUuid, name, secret_hash: hashOf(canonicalAppPassword(password) as string), created: clock.now() };
  await sql.transaction(async (tx) => {
    if ((await countAppPasswords(tx, caller.userUuid)) >= MAX_APP_PASSWORDS) {
      throw conflict(`at most ${MAX_APP_PASSWORDS} app passwords; delete one first`, 'too_many_app_passwords');
    }
    await insertAppPassword(tx, row);
  });
  return { ...recordOf({ ...row, last_used: null }), password };
}

/** Deletes one of the caller's app passwords and ends the sessions it opened; 404 when not theirs. */
export async function deleteUserAppPassword(ctx: StoreContext, caller: AuthenticatedUser, uuid: string): Promise<void> {
  const { storage: { sql }, clock } = ctx;
  const notFound = new StoreHttpError(404, 'not_found', 'app password not found');
  if (!isUuid(uuid)) throw notFound;
  await sql.transaction(async (tx) => {
    const row = await appPasswordOf(tx, caller.userUuid, uuid.toLowerCase());
    if (!row) throw notFound;
    await revokeAppPasswordSessions(tx, clock, row.uuid);
    await deleteAppPassword(tx, row.uuid);
  });
}
