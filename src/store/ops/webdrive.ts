/**
 * WebDrive endpoints of the current user (docs/api.md "Current user": GET/POST/DELETE
 * /api/user/webdrive) and of groups (docs/api.md "Groups for members": /api/groups/{uuid}/webdrive;
 * members read it unless `show_url_to_group_members` is false, group administrators set and
 * delete it). One table and rule for both (storage/groups.ts). The answer carries the URL to mount
 * (`bridge.publicUrl`, an extension) beside the name. Never reveals who holds a taken name.
 */
import { z } from 'zod';
import { bridgePublicUrl } from '../../common/config.js';
import type { StoreContext } from '../context.js';
import { claimEndpoint, endpointOf, endpointProblem, releaseEndpoint } from '../storage/groups.js';
import { conflict, forbidden } from '../envelope.js';
import { resolveGroup } from '../access.js';
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

/** The user's answers add the drive's root (`bridge.publicUrl`): every top-level folder and /groups/, endpoint or not. */
export interface UserWebdriveRecord extends WebdriveRecord {
  root_url: string;
}

function userWebdriveRecord(ctx: StoreContext, endpoint: string | undefined): UserWebdriveRecord {
  return { ...webdriveRecord(ctx, endpoint), root_url: `${bridgePublicUrl(ctx.config)}/` };
}

export async function getUserWebdrive(ctx: StoreContext, caller: AuthenticatedUser): Promise<UserWebdriveRecord> {
  return userWebdriveRecord(ctx, (await endpointOf(ctx.storage.sql, caller.userUuid))?.endpoint);
}

/** Creates or replaces the caller's endpoint; the old name is free again at once. 409 when taken. */
export async function setUserWebdrive(ctx: StoreContext, caller: AuthenticatedUser, body: unknown): Promise<UserWebdriveRecord> {
  const { endpoint } = parseInput(setUserEndpointSchema, body);
  const { storage: { sql }, clock } = ctx;
  await sql.transaction(async (tx) => {
    const claimed = await claimEndpoint(tx, { endpoint, ownerType: 'User', ownerUuid: caller.userUuid, showUrlToGroupMembers: true, nowMs: clock.now() });
    if (!claimed) throw endpointTaken();
  });
  return userWebdriveRecord(ctx, endpoint);
}

/** Frees the caller's endpoint. Deleting when there is none succeeds too (idempotent). */
export async function deleteUserWebdrive(ctx: StoreContext, caller: AuthenticatedUser): Promise<boolean> {
  return releaseEndpoint(ctx.storage.sql, caller.userUuid);
}

/** `data` of the group WebDrive answers; `show_url_to_group_members` is true while there is no endpoint. */
export interface GroupWebdriveRecord extends WebdriveRecord {
  show_url_to_group_members: boolean;
}

const setGroupEndpointSchema = z.strictObject({
  endpoint: endpointSchema,
  show_url_to_group_members: z.boolean({ error: 'show_url_to_group_members must be a boolean' }).optional(),
});

function groupRecord(ctx: StoreContext, endpoint: string | undefined, shown: boolean): GroupWebdriveRecord {
  return { ...webdriveRecord(ctx, endpoint), show_url_to_group_members: shown };
}

/** Members read it; while it is hidden from members, only group administrators do (403). */
export async function getGroupWebdrive(ctx: StoreContext, caller: AuthenticatedUser, groupUuid: string): Promise<GroupWebdriveRecord> {
  const { group, isGroupAdmin } = await resolveGroup(ctx.storage.sql, caller, groupUuid, 'member');
  const row = await endpointOf(ctx.storage.sql, group.uuid);
  const shown = row ? row.show_url_to_group_members === 1 : true;
  if (!shown && !isGroupAdmin) throw forbidden('the group administrators do not show the WebDrive URL to members');
  return groupRecord(ctx, row?.endpoint, shown);
}

/** Creates or replaces the group's endpoint (`show_url_to_group_members` defaults to true). 409 when taken. */
export async function setGroupWebdrive(ctx: StoreContext, caller: AuthenticatedUser, groupUuid: string, body: unknown): Promise<GroupWebdriveRecord> {
  const { group } = await resolveGroup(ctx.storage.sql, caller, groupUuid, 'admin');
  const input = parseInput(setGroupEndpointSchema, body);
  const shown = input.show_url_to_group_members ?? true;
  const { storage: { sql }, clock } = ctx;
  await sql.transaction(async (tx) => {
    const claim = { endpoint: input.endpoint, ownerType: 'Group' as const, ownerUuid: group.uuid, showUrlToGroupMembers: shown, nowMs: clock.now() };
    if (!(await claimEndpoint(tx, claim))) throw endpointTaken();
  });
  return groupRecord(ctx, input.endpoint, shown);
}

/** Frees the group's endpoint; idempotent like the user's. */
export async function deleteGroupWebdrive(ctx: StoreContext, caller: AuthenticatedUser, groupUuid: string): Promise<boolean> {
  const { group } = await resolveGroup(ctx.storage.sql, caller, groupUuid, 'admin');
  return releaseEndpoint(ctx.storage.sql, group.uuid);
}
