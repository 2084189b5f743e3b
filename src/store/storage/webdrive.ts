/**
 * WebDrive endpoint rows and the endpoint name rule (SPEC "WebDrive endpoint": 3 to 10
 * lowercase alphanumeric characters). One namespace for users and groups: a name names one
 * drive, whoever owns it. Who may read or set an owner's endpoint is decided in ops/; this
 * module only keeps the rule and the rows.
 */
import type { Sql } from './sql.js';
import type { OwnerType } from './nodes.js';

/**
 * Names that would read as something else in a URL or a support conversation; refused for
 * everyone. *Reason: `/webdrive/admin/` or `/webdrive/api/` suggests an official drive.*
 */
export const RESERVED_ENDPOINTS: ReadonlySet<string> = new Set([
  'admin', 'administrator', 'api', 'auth', 'dav', 'driveway', 'groups', 'help', 'home', 'login', 'logout',
  'public', 'root', 'security', 'shared', 'support', 'system', 'upload', 'webdav', 'webdrive', 'www',
]);

/** What is wrong with a proposed endpoint name, or undefined when it is acceptable. */
export function endpointProblem(value: string): string | undefined {
  if (!/^[a-z0-9]{3,10}$/.test(value)) return 'endpoint must be 3 to 10 lowercase letters (a-z) and digits';
  if (RESERVED_ENDPOINTS.has(value)) return `endpoint "${value}" is reserved`;
  return undefined;
}

export interface EndpointRow {
  endpoint: string;
  owner_type: OwnerType;
  owner_uuid: string;
  show_url_to_group_members: number;
  created: number;
}

export async function endpointOf(sql: Sql, ownerUuid: string): Promise<EndpointRow | undefined> {
  return (await sql.get('SELECT * FROM webdrive_endpoints WHERE owner_uuid = ?', [ownerUuid])) as EndpointRow | undefined;
}

export async function endpointNamed(sql: Sql, endpoint: string): Promise<EndpointRow | undefined> {
  return (await sql.get('SELECT * FROM webdrive_endpoints WHERE endpoint = ?', [endpoint])) as EndpointRow | undefined;
}

/**
 * Gives `endpoint` to the owner, replacing (and so freeing) the owner's previous one. Returns
 * false, writing nothing, when another owner holds the name. Run inside the caller's transaction.
 */
export async function claimEndpoint(
  sql: Sql,
  claim: { endpoint: string; ownerType: OwnerType; ownerUuid: string; showUrlToGroupMembers: boolean; nowMs: number },
): Promise<boolean> {
  const holder = (await endpointNamed(sql, claim.endpoint));
  if (holder && holder.owner_uuid !== claim.ownerUuid) return false;
  const previous = (await endpointOf(sql, claim.ownerUuid));
  const created = previous?.endpoint === claim.endpoint ? previous.created : claim.nowMs;
  (await sql.run('DELETE FROM webdrive_endpoints WHERE owner_uuid = ?', [claim.ownerUuid]));
  (await sql.run('INSERT INTO webdrive_endpoints (endpoint, owner_type, owner_uuid, show_url_to_group_members, created) VALUES (?, ?, ?, ?, ?)', [claim.endpoint, claim.ownerType, claim.ownerUuid, claim.showUrlToGroupMembers ? 1 : 0, created]));
  return true;
}

/** Frees the owner's endpoint; returns whether there was one. */
export async function releaseEndpoint(sql: Sql, ownerUuid: string): Promise<boolean> {
  return (await sql.run('DELETE FROM webdrive_endpoints WHERE owner_uuid = ?', [ownerUuid])).changes > 0;
}
