/**
 * Incoming shares (SPEC "Pending incoming share": pending, accepted, rejected; migration 009):
 * a copy offered to a user or a group, held as a snapshot while pending. This module owns the SQL
 * and the two answers; ops/incoming.ts decides who may answer. Every function runs inside the
 * caller's transaction; released blobs are returned for unlinking after the commit.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from './dialects/sqlite-open.js';
import { getTopLevel, type OwnerType } from './nodes.js';
import { materialiseSnapshot, releaseSnapshot, type SnapshotRow } from './snapshots.js';
import type { TreeWrite } from './tree.js';

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
export function offerSnapshot(db: Db, snapshot: SnapshotRow, recipient: Recipient, sharer: { uuid: string; fullname: string }, nowMs: number): string {
  const uuid = randomUUID();
  db.prepare(
    `INSERT INTO incoming_shares (uuid, recipient_type, recipient_uuid, sharer_uuid, sharer_fullname, source_uuid, name, type, size, snapshot_uuid, shared_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(uuid, recipient.type, recipient.uuid, sharer.uuid, sharer.fullname, snapshot.source_uuid, snapshot.name, snapshot.type, snapshot.bytes, snapshot.uuid, nowMs);
  return uuid;
}

export function getIncomingShare(db: Db, uuid: string): IncomingShareRow | undefined {
  return db.prepare('SELECT * FROM incoming_shares WHERE uuid = ?').get(uuid) as IncomingShareRow | undefined;
}

/** The shares awaiting an answer from `recipientUuid`, oldest first. */
export function pendingFor(db: Db, recipientUuid: string): IncomingShareRow[] {
  return db
    .prepare(`SELECT * FROM incoming_shares WHERE recipient_uuid = ? AND state = 'pending' ORDER BY shared_at, uuid`)
    .all(recipientUuid) as IncomingShareRow[];
}

/**
 * Accepts a pending share: its copy appears in the recipient's `incoming` (numbered on a name
 * clash), within the recipient's quota (507, nothing changed). Returns the copy's UUID.
 */
export function acceptIncoming(w: TreeWrite, share: IncomingShareRow, answeredBy: string | null): string {
  const { db, now } = w;
  const incoming = getTopLevel(db, share.recipient_uuid, 'incoming');
  if (!incoming || share.snapshot_uuid === null) throw new Error(`incoming share ${share.uuid} cannot be accepted`);
  const snapshotUuid = share.snapshot_uuid;
  db.prepare(`UPDATE incoming_shares SET state = 'accepted', snapshot_uuid = NULL, answered_at = ?, answered_by = ? WHERE uuid = ?`).run(
    now,
    answeredBy,
    share.uuid,
  );
  const nodeUuid = materialiseSnapshot(w, snapshotUuid, incoming);
  db.prepare('UPDATE incoming_shares SET node_uuid = ? WHERE uuid = ?').run(nodeUuid, share.uuid);
  return nodeUuid;
}

/** Rejects a pending share: its copy is discarded. Returns the blobs no row refers to any more. */
export function rejectIncoming(db: Db, share: IncomingShareRow, answeredBy: string, nowMs: number): string[] {
  if (share.snapshot_uuid === null) throw new Error(`incoming share ${share.uuid} is not pending`);
  db.prepare(`UPDATE incoming_shares SET state = 'rejected', snapshot_uuid = NULL, answered_at = ?, answered_by = ? WHERE uuid = ?`).run(
    nowMs,
    answeredBy,
    share.uuid,
  );
  return releaseSnapshot(db, share.snapshot_uuid);
}

/**
 * Forgets every incoming share of a deleted user or group (pending ones release their copy).
 * Shares it sent stay with their recipients (the sharer column empties itself).
 */
export function dropIncomingOf(db: Db, recipientUuid: string): string[] {
  const pending = pendingFor(db, recipientUuid);
  db.prepare('DELETE FROM incoming_shares WHERE recipient_uuid = ?').run(recipientUuid);
  return pending.flatMap((share) => (share.snapshot_uuid === null ? [] : releaseSnapshot(db, share.snapshot_uuid)));
}
