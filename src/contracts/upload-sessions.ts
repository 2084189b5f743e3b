/**
 * The resumable-upload contract shared by the bridge (bridge/uploads/) and the storage layer
 * (store/storage/upload-sessions.ts): what an upload session and a part are, the repository that
 * keeps them (rows every instance sees), and the PartStore that keeps the parts' bytes. No I/O
 * and no rules here: the bridge's UploadService decides what a protocol may do.
 *
 * Two places for the state, chosen by whoever opens the bridge's state (store/storage/dav-state.ts):
 * the store's database when the bridge serves the store in-process (SQLite or PostgreSQL), else the
 * bridge's own bridge.sqlite. The bytes go to a PartStore every instance serving the store can
 * reach (contracts/local-part-store.ts: a folder; store/blobs/staged-parts.ts: the assembled file
 * itself, for a bridge in-process with a store on the local backend; store/blobs/s3-parts.ts:
 * objects in the store's bucket, for a bridge in-process with a store on S3).
 */
import { pipeline, Transform, type Readable } from 'node:stream';

/** `oc-chunked`: ownCloud's legacy `OC-Chunked: 1` PUTs of `<name>-chunking-<transfer>-<count>-<index>` (bridge/uploads/oc-chunked.ts). */
export type UploadProtocol = 'nextcloud-v1' | 'nextcloud-v2' | 'tus' | 'oc-chunked';

export interface UploadSession {
  /** Random; names the session's parts in the PartStore. */
  readonly key: string;
  /** The store user id the session belongs to (nobody else sees it). */
  readonly owner: string;
  /** The client's name for it (the folder under /remote.php/dav/uploads/<user>/). */
  readonly name: string;
  readonly protocol: UploadProtocol;
  /** The drive path the upload is meant for (Nextcloud v2's Destination), once known. */
  readonly destination: string | undefined;
  /** The upload's declared size (OC-Total-Length, tus's Upload-Length), once sent. */
  readonly totalBytes: number | undefined;
  /**
   * Whose quota the session's bytes count against: the owner's id (their own drive, also a
   * Nextcloud v1 upload without Destination) or a group's id (an upload into a group's drive).
   * Fixed when the session is created.
   */
  readonly scope: string;
  /**
   * The bytes its parts hold and those being written (each counted at its announced size from
   * before its write). The session holds max(totalBytes, reservedBytes) of its scope's quota.
   */
  readonly reservedBytes: number;
  readonly createdMs: number;
  readonly expiresMs: number;
  /** An assembly under way holds the session until then (a lease its instance renews); undefined when none. */
  readonly claimedUntilMs?: number | undefined;
}

export interface UploadPart {
  /** The chunk's name as the client sent it. */
  readonly name: string;
  /** Sort key: the start offset of a v1 `start-end` name, or the chunk's number. */
  readonly seq: number;
  /** The offset a v1 `start-end` name claims; undefined for numbered chunks. */
  readonly startByte: number | undefined;
  readonly sizeBytes: number;
  /** The bytes' name in the PartStore (under the session's key); new for every write. */
  readonly partKey: string;
}

/**
 * What a session may hold, checked in the same transaction as the change it allows (so across
 * instances: two requests can never both take the last bytes). `availableBytes`: what the scope's
 * quota leaves (the store's answer; undefined when it sets no limit), which the live sessions of
 * the scope share, every owner's; the caps are bridge.uploadMaxOpenPerUser and ...MaxParts.
 */
export interface UploadLimits {
  availableBytes?: number | undefined;
  /** Live sessions one owner may have (create). */
  maxOpenPerOwner?: number | undefined;
  /** Parts one session may have, stored and being written (reserve with a part). */
  maxParts?: number | undefined;
}

/**
 * What reserve() is asked to add to a session: its declared total (learnt late: Nextcloud v1's
 * first OC-Total-Length), a part about to be written (its name and announced size), or both.
 */
export interface UploadClaim {
  totalBytes?: number;
  part?: { name: string; bytes: number };
}

/** Why a session could not have what it asked for; `heldBytes`: what the scope's other sessions hold. */
export type UploadRefusal =
  | { refused: 'exists' }
  | { refused: 'gone' }
  | { refused: 'quota'; neededBytes: number; heldBytes: number; availableBytes: number }
  | { refused: 'open-uploads'; open: number }
  | { refused: 'parts'; parts: number };

/**
 * Upload sessions and their parts. Every read ignores sessions past `expiresMs`; `expired` hands
 * them to the sweep, which removes their bytes and then `remove`s them. A session's quota
 * reservation (`reservedBytes`, `totalBytes`) goes with its row: released when it is removed.
 */
export interface UploadSessionRepository {
  /**
   * Records a new session (its `reservedBytes` taken as 0), refused, with nothing written, when
   * the owner has a live one of that name ('exists'), already `maxOpenPerOwner` live ones
   * ('open-uploads'), or when its `totalBytes` does not fit beside what the scope's live sessions
   * hold ('quota').
   */
  create(session: UploadSession, limits?: UploadLimits): Promise<true | UploadRefusal>;
  find(owner: string, name: string, nowMs: number): Promise<UploadSession | undefined>;
  list(owner: string, nowMs: number): Promise<UploadSession[]>;
  /** Records what a later request learnt (Destination, OC-Total-Length) and moves the expiry on. */
  update(key: string, change: { destination?: string; totalBytes?: number; expiresMs: number }): Promise<void>;
  /**
   * Reserves, before a write, what `claim` adds to the session: a part's bytes beyond those of a
   * stored part of the same name (which it replaces), and a declared total. Refused, with nothing
   * written, when the session is gone, the part would pass `maxParts`, or the session would hold
   * more than `availableBytes` leaves beside the scope's other live sessions (a claim that does not
   * make the session hold more always passes). Returns the bytes claimed: the caller hands them to
   * putPart once the part is written, or to unreserve when it is not.
   */
  reserve(key: string, claim: UploadClaim, limits: UploadLimits, nowMs: number): Promise<{ claimedBytes: number } | UploadRefusal>;
  /** Gives back a part's claim whose write failed (its bytes and its place among the parts in flight). */
  unreserve(key: string, claimedBytes: number): Promise<void>;
  /** What the live sessions of `scope` hold (each max(totalBytes, reservedBytes)), the session `exceptKey` left out. */
  reservedIn(scope: string, nowMs: number, exceptKey?: string): Promise<number>;
  /**
   * Adds a part, replacing one of the same name, and settles the session's reservation: with
   * `claimedBytes` (what reserve() gave this part) the reservation becomes what the parts hold,
   * the replaced copy's bytes given back. Returns the part key it replaced (its bytes are the
   * caller's to remove), `false` when the session is gone (removed or expired meanwhile).
   */
  putPart(key: string, part: UploadPart, nowMs: number, claimedBytes?: number): Promise<string | undefined | false>;
  /** Removes one part's row (its bytes leave the reservation); the part key it had (its bytes are the caller's to remove), undefined when none. */
  removePart(key: string, name: string): Promise<string | undefined>;
  /** The bytes of the session's parts together, leaving out the part named `except` (one about to be replaced). */
  partBytes(key: string, except?: string): Promise<number>;
  /** The session's parts in `seq` order. */
  parts(key: string): Promise<UploadPart[]>;
  /**
   * Takes (or renews, with `renew`) the assembly lease until `untilMs`: false when another
   * assembly holds an unexpired one. One assembly per session, whichever instance runs it.
   */
  claim(key: string, nowMs: number, untilMs: number, renew?: boolean): Promise<boolean>;
  /** Gives the lease up (an assembly that failed: the client may try again). */
  release(key: string): Promise<void>;
  /**
   * Gives every lease up; how many were held. Only for a process that knows no other one can hold
   * a lease here: a SQLite state under the data directory's lock, at start (run.ts), where any
   * lease left is a killed process's and would refuse the client's retry (423) until it ran out.
   */
  releaseAll(): Promise<number>;
  /** Removes the session and its part rows; false when it was not there. */
  remove(key: string): Promise<boolean>;
  /** Up to `limit` sessions expired before `nowMs`, oldest first. */
  expired(nowMs: number, limit: number): Promise<UploadSession[]>;
}

/**
 * Where the parts' bytes live. Keys are `<session key>/<part key>`, both made by the bridge
 * (random, path-safe). Written whole or not at all: a part interrupted mid-body leaves nothing
 * readable under its key.
 */
/**
 * A part arrived for an upload whose parts were already made one file that a refused commit left
 * (s3-parts.ts: the completed multipart object, taken again as it is by the next assembly): it
 * would not be in that file. The client starts the upload again (Nextcloud: 409).
 */
export class UploadCompletedError extends Error {
  override name = 'UploadCompletedError';
}

export interface PartStore {
  /** `write` needs the part's size before its first byte (an S3 PUT does): the front door answers 411 without one. */
  readonly needsLength: boolean;
  /**
   * Streams `body` (of `sizeBytes` when known) to the part; resolves with the bytes written, or
   * with them and the key the part is stored under from now on when the store learnt it only
   * from the write (s3-parts.ts: a multipart part's ETag).
   */
  write(sessionKey: string, partKey: string, body: Readable, sizeBytes: number | undefined, signal?: AbortSignal): Promise<number | { sizeBytes: number; partKey: string }>;
  read(sessionKey: string, part: Pick<UploadPart, 'partKey' | 'sizeBytes'>): Promise<Readable>;
  removePart(sessionKey: string, partKey: string): Promise<void>;
  /** Removes every part of a session (also ones no row names: a write cut by a crash). */
  removeSession(sessionKey: string): Promise<void>;
  /**
   * A store that can write a part where it will lie in the assembled file (store/blobs/
   * staged-parts.ts) names the part key to write it under: at its place when that place is known
   * and free (no part row nor write under way covers it), else an ordinary one. The place stays
   * taken until `release()`, which the caller calls once the part's row is in (or the write failed).
   */
  reserve?(sessionKey: string, part: PartToPlace, rows: readonly UploadPart[]): { partKey: string; release(): void };
  /**
   * The parts, in order, as the body of the store's upload: a stream of their bytes that a store
   * in-process may take as the assembled file itself rather than read (staged-parts.ts).
   */
  assemble?(sessionKey: string, parts: readonly UploadPart[]): Readable;
}

/** What reserve() knows of a part before its bytes: its order, the offset it claims (v1, tus), and its announced size. */
export interface PartToPlace {
  seq: number;
  startByte: number | undefined;
  sizeBytes: number;
  /** `seq` is a Nextcloud v2 chunk number (1 to 10000, equal chunks but the last; a legacy `OC-Chunked` index + 1 likewise), which places a chunk of known stride. */
  chunkNumber?: boolean;
  /**
   * No part is placed ending past this (the upload's declared total, else what the quota
   * leaves): a part named far away would make a sparse file of that size. Such a part is still
   * taken, as a part of its own.
   */
  withinBytes?: number;
}

/**
 * `body` as it flows, counting its bytes into `counter.bytes`. A stream, not a 'data' listener: a
 * listener would set `body` flowing before the writer is attached (the S3 SDK attaches it only
 * after `Expect: 100-continue` is answered), and the bytes in between would be lost.
 */
export function countingStream(body: Readable, counter: { bytes: number }): Readable {
  const counting = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      counter.bytes += chunk.length;
      done(null, chunk);
    },
  });
  // pipeline, not pipe: a failing body (the client hung up) fails the counting stream for its
  // reader, and an error nobody reads any more (a writer already aborted) is not an uncaught one.
  pipeline(body, counting, () => undefined);
  return counting;
}
