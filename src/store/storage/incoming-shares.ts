/**
 * Incoming shares (SPEC "Pending incoming share": pending, accepted, rejected; migration 009):
 * a copy offered to a user or a group, held as a snapshot while pending. This module owns the SQL
 * and the two answers; ops/incoming.ts decides who may answer. Every function runs inside the
 * caller's transaction; released blobs are returned for unlinking after the commit.
 */
import { randomUUID } from 'node:crypto';
import type { Sql } from './sql.js';
import { flatMapInOrder } from '../in-order.js';
import type { OwnerType } from './nodes.js';
import { releaseSnapshot, type SnapshotRow } from './snapshots.js';

export type IncomingState = 'pending' | 'accepted' | 'rejected';

export interface IncomingShareRow {
  uuid: string;
  recipient_type: OwnerType;
  recipient_uuid: string;
  sharer_uuid: string | null;
  sharer_fullname: string;
  source_uuid: string | null;
  name: string;
  type: 'Dir' | 'File';
  size: number;
  snapshot_uuid: string | null;
  state: IncomingState;
  shared_at: number;
  answered_at: number | null;
  answered_by: string | null;
  node_uuid: string | null;
}

export interface Recipient {
  type: OwnerType;
  uuid: string;
}

/** Offers `snapshot` (which the new row holds from now on) to `recipient`; returns the row's UUID. */
export async function offerSnapshot(sql: Sql, snapshot: SnapshotRow, recipient: Recipient, sharer: { uuid: string; fullname: string }, nowMs: number): Promise<string> {
  const uuid = randomUUID();
  (await sql.run(`INSERT INTO incoming_shares (uuid, recipient_type, recipient_uuid, sharer_uuid, sharer_fullname, source_uuid, name, type, size, snapshot_uuid, shared_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [uuid, recipient.type, recipient.uuid, sharer.uuid, sharer.fullname, snapshot.source_uuid, snapshot.name, snapshot.type, snapshot.bytes, snapshot.uuid, nowMs]));
  return uuid;
}

export async function getIncomingShare(sql: Sql, uuid: string): Promise<IncomingShareRow | undefined> {
  return (await sql.get('SELECT * FROM incoming_shares WHERE uuid = ?', [uuid])) as IncomingShareRow | undefined;
}

/** The shares awaiting an answer from `recipientUuid`, oldest first. */
export async function pendingFor(sql: Sql, recipientUuid: string): Promise<IncomingShareRow[]> {
  return (await sql.all(`SELECT * FROM incoming_shares WHERE recipient_uuid = ? AND state = 'pending' ORDER BY shared_at, uuid`, [recipientUuid])) as IncomingShareRow[];
}

/** Marks a pending share accepted; its snapshot is about to become nodes (ops/share-copy.ts). */
export async function markIncomingAccepted(sql: Sql, shareUuid: string, nowMs: number, answeredBy: string | null): Promise<void> {
  await sql.run(`UPDATE incoming_shares SET state = 'accepted', snapshot_uuid = NULL, answered_at = ?, answered_by = ? WHERE uuid = ?`, [nowMs, answeredBy, shareUuid]);
}

/** The copy an accepted share became. */
export async function setIncomingNode(sql: Sql, shareUuid: string, nodeUuid: string): Promise<void> {
  await sql.run('UPDATE incoming_shares SET node_uuid = ? WHERE uuid = ?', [nodeUuid, shareUuid]);
}

/** Rejects a pending share: its copy is discarded. Returns the blobs no row refers to any more. */
export async function rejectIncoming(sql: Sql, share: IncomingShareRow, answeredBy: string, nowMs: number): Promise<string[]> {
  if (share.snapshot_uuid === null) throw new Error(`incoming share ${share.uuid} is not pending`);
  (await sql.run(`UPDATE incoming_shares SET state = 'rejected', snapshot_uuid = NULL, answered_at = ?, answered_by = ? WHERE uuid = ?`, [nowMs,
    answeredBy,
    share.uuid]));
  return releaseSnapshot(sql, share.snapshot_uuid);
}

/**
 * Forgets every incoming share of a deleted user or group (pending ones release their copy).
 * Shares it sent stay with their recipients (the sharer column empties itself).
 */
export async function dropIncomingOf(sql: Sql, recipientUuid: string): Promise<string[]> {
  const pending = (await pendingFor(sql, recipientUuid));
  (await sql.run('DELETE FROM incoming_shares WHERE recipient_uuid = ?', [recipientUuid]));
  return flatMapInOrder(pending, async (share) => (share.snapshot_uuid === null ? [] : await releaseSnapshot(sql, share.snapshot_uuid)));
}
