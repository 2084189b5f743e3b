/**
 * WebDrive endpoints of the current user (SPEC "Current user": GET/POST/DELETE
 * /api/user/webdrive). Group endpoints use the same table and rule (db/webdrive.ts). The answer
 * carries the URL to mount (`bridge.publicUrl`, an extension) beside the name. Never reveals
 * who holds a taken name.
 */
import { z } from 'zod';
import { bridgePublicUrl } from '../../common/config.js';
import type { StoreContext } from '../context.js';
import { claimEndpoint, endpointOf, endpointProblem, releaseEndpoint } from '../db/webdrive.js';
import { conflict } from '../envelope.js';
import type { AuthenticatedUser } from '../sessions.js';
import { parseInput } from './input.js';

/** `data` of the WebDrive endpoint answers: `endpoint` and `url` are null while there is none. */
export interface WebdriveRecord {
  endpoint: string | null;
  url: string | null;
}

export const endpointSchema = z.string({ error: 'endpoint must be a string' }).superRefine((value, ctx) => {
  const problem = endpointProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

const setUserEndpointSchema = z.strictObject({ endpoint: endpointSchema });

export const endpointTaken = () => conflict('endpoint is already in use; choose another name', 'endpoint_taken');

export function webdriveRecord(ctx: StoreContext, endpoint: string | undefined): WebdriveRecord {
  if (endpoint === undefined) return { endpoint: null, url: null };
  return { endpoint, url: `${bridgePublicUrl(ctx.config)}/webdrive/${endpoint}/` };
}

export function getUserWebdrive(ctx: StoreContext, caller: AuthenticatedUser): WebdriveRecord {
  return webdriveRecord(ctx, endpointOf(ctx.db, caller.userUuid)?.endpoint);
}

/** Creates or replaces the caller's endpoint; the old name is free again at once. 409 when taken. */
export function setUserWebdrive(ctx: StoreContext, caller: AuthenticatedUser, body: unknown): WebdriveRecord {
  const { endpoint } = parseInput(setUserEndpointSchema, body);
  const { db, clock } = ctx;
  db.transaction(() => {
    const claimed = claimEndpoint(db, { endpoint, ownerType: 'User', ownerUuid: caller.userUuid, showUrlToGroupMembers: true, nowMs: clock.now() });
    if (!claimed) throw endpointTaken();
  })();
  return webdriveRecord(ctx, endpoint);
}

/** Frees the caller's endpoint. Deleting when there is none succeeds too (idempotent). */
export function deleteUserWebdrive(ctx: StoreContext, caller: AuthenticatedUser): boolean {
  return releaseEndpoint(ctx.db, caller.userUuid);
}
