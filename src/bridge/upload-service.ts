/**
 * The upload-session store every resumable-upload protocol of the bridge stands on (Nextcloud
 * chunking: nextcloud.ts; tus: tus.ts): sessions and their parts (rows in the
 * UploadSessionRepository every instance shares, bytes in a PartStore every instance reaches),
 * expiry, the periodic sweep of abandoned sessions, and the parts read back in order as one
 * stream for the store's upload. It knows no protocol's names or headers and never writes into
 * the drive: the front door hands the assembled stream to StoreTree.write, the commit a PUT
 * ends in.
 *
 * Parts are held to the quota before their bytes land (docs/bridge-design.md "Uploads held to the
 * quota"): a session reserves its declared total and each part's announced size in the
 * repository, atomically with what the scope's other sessions (any instance's) hold, and the
 * reservation goes with the session (its commit, DELETE or expiry). The caps on open uploads per
 * user and parts per upload are checked in the same transactions.
 *
 * Memory stays bounded whatever the sizes: a part streams from the request to the PartStore, and
 * assembly streams the parts one after the other, or, with a store that writes each part at its
 * place in the assembled file (store/blobs/staged-parts.ts, the local blob backend in-process),
 * hands that file over without reading it (docs/bridge-design.md "Assembly").
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Clock } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import type { PartStore, UploadClaim, UploadPart, UploadProtocol, UploadRefusal, UploadSession, UploadSessionRepository } from '../contracts/upload-sessions.js';

export interface UploadServiceOptions {
  repository: UploadSessionRepository;
  parts: PartStore;
  clock: Clock;
  log: Logger;
  /** bridge.uploadExpirySec: a session untouched this long is abandoned. */
  expirySec: number;
  /** bridge.uploadMaxOpenPerUser; none when absent. */
  maxOpenPerUser?: number;
  /** bridge.uploadMaxParts; none when absent. */
  maxParts?: number;
}

/** What a session may hold, from the quota of its scope (StoreTree.quota's availableBytes; Infinity: no limit). */
export interface UploadQuota {
  /** Whose quota: the user's id or a group's (UploadSession.scope). */
  scope: string;
  availableBytes: number;
}

/**
 * A session could not have what it asked for: `kind` 'quota' (the front doors answer 507),
 * 'open-uploads' (429: one finishing frees a place) or 'parts' (507).
 */
export class UploadLimitError extends Error {
  override name = 'UploadLimitError';
  constructor(readonly kind: 'quota' | 'open-uploads' | 'parts', message: string) {
    super(message);
  }
}

/** A part's reservation, from reserve() to putPart (which settles it). */
export interface PartReservation {
  claimedBytes: number;
  /** No part is placed ending past this (PartToPlace.withinBytes). */
  withinBytes?: number;
}

/** The session was removed (aborted, assembled, expired) while a request of it was under way. */
export class UploadGoneError extends Error {
  override name = 'UploadGoneError';
}

/** Another assembly of the session is under way (Nextcloud answers 423; rclone >= 1.69 backs off and retries). */
export class UploadBusyError extends Error {
  override name = 'UploadBusyError';
}

/** An assembly's lease on its session, renewed a third of the way: a crashed instance frees it within this. */
const ASSEMBLY_LEASE_MS = 60_000;

/** Sessions the sweep removes per round, so one round never holds the database for long. */
const SWEEP_BATCH = 100;

/** Infinity (no limit) as the repository takes it. */
function limitOf(quota: { availableBytes: number } | undefined): number | undefined {
  return quota === undefined || !Number.isFinite(quota.availableBytes) ? undefined : quota.availableBytes;
}

function limitError(refusal: UploadRefusal): UploadLimitError {
  switch (refusal.refused) {
    case 'quota':
      return new UploadLimitError(
        'quota',
        `the upload needs ${refusal.neededBytes} bytes of the quota: ${refusal.availableBytes} are left, and other uploads under way hold ${refusal.heldBytes}`,
      );
    case 'open-uploads':
      return new UploadLimitError('open-uploads', `${refusal.open} uploads are open, as many as one user may have: finish or delete one (bridge.uploadMaxOpenPerUser)`);
    case 'parts':
      return new UploadLimitError('parts', `the upload has ${refusal.parts} parts, as many as one upload may have (bridge.uploadMaxParts)`);
    default:
      return new UploadLimitError('quota', `the upload was refused (${refusal.refused})`);
  }
}

export class UploadService {
  private readonly expiryMs: number;
  private readonly timer: NodeJS.Timeout;
  private sweeping: Promise<number> | undefined;

  constructor(private readonly options: UploadServiceOptions) {
    this.expiryMs = options.expirySec * 1000;
    // A quarter of the expiry (at least a second, at most 15 min): an abandoned session's parts
    // are gone within 1.25 expiries of its last request.
    const everyMs = Math.min(15 * 60_000, Math.max(1000, Math.floor(this.expiryMs / 4)));
    this.timer = setInterval(() => void this.sweep().catch((err: unknown) => options.log.warn({ err }, 'upload sweep failed')), everyMs);
    this.timer.unref();
  }

  private now(): number {
    return this.options.clock.now();
  }

  /**
   * A new session, or undefined when the owner has a live one of that name. Its declared total
   * is reserved of `quota` (the owner's own when absent: no limit); throws UploadLimitError, with
   * nothing recorded, when it does not fit beside the scope's other uploads or the owner has
   * bridge.uploadMaxOpenPerUser open.
   */
  async create(owner: string, name: string, protocol: UploadProtocol, known: { destination?: string; totalBytes?: number } = {}, quota?: UploadQuota): Promise<UploadSession | undefined> {
    const now = this.now();
    const session: UploadSession = {
      key: randomUUID(),
      owner,
      name,
      protocol,
      destination: known.destination,
      totalBytes: known.totalBytes,
      scope: quota?.scope ?? owner,
      reservedBytes: 0,
      createdMs: now,
      expiresMs: now + this.expiryMs,
    };
    const created = await this.options.repository.create(session, { availableBytes: limitOf(quota), maxOpenPerOwner: this.options.maxOpenPerUser });
    if (created === true) return session;
    if (created.refused === 'exists') return undefined;
    throw limitError(created);
  }

  /**
   * Reserves what `claim` adds to the session before it is written (a part's announced bytes, a
   * total learnt late) of `availableBytes`, what its scope's quota leaves (Infinity: no limit).
   * Returns the bytes claimed, for putPart (or `unreserve`); throws UploadLimitError (nothing
   * reserved) or UploadGoneError.
   */
  async reserve(session: UploadSession, claim: UploadClaim, availableBytes: number): Promise<number> {
    const limits = { availableBytes: limitOf({ availableBytes }), maxParts: this.options.maxParts };
    const reserved = await this.options.repository.reserve(session.key, claim, limits, this.now());
    if ('claimedBytes' in reserved) return reserved.claimedBytes;
    if (reserved.refused === 'gone' || reserved.refused === 'exists') throw new UploadGoneError('the upload was removed');
    throw limitError(reserved);
  }

  /** What the live uploads of `scope` hold of its quota (any instance's), the session `exceptKey` left out: a commit's own reservation is its own. */
  reservedElsewhere(scope: string, exceptKey?: string): Promise<number> {
    return this.options.repository.reservedIn(scope, this.now(), exceptKey);
  }

  find(owner: string, name: string): Promise<UploadSession | undefined> {
    return this.options.repository.find(owner, name, this.now());
  }

  list(owner: string): Promise<UploadSession[]> {
    return this.options.repository.list(owner, this.now());
  }

  /** Records what a request learnt and keeps the session alive for another expiry. */
  async touch(session: UploadSession, learnt: { destination?: string; totalBytes?: number } = {}): Promise<void> {
    await this.options.repository.update(session.key, { ...learnt, expiresMs: this.now() + this.expiryMs });
  }

  /**
   * Streams `body` into a new part; a part of the same name is replaced (its bytes removed once
   * the new row is in). Returns the part as stored and whether it replaced one. Throws
   * UploadGoneError when the session went meanwhile (the bytes written are removed). The part's
   * `reservation` (reserve()'s) is settled whatever happens: taken into the parts' bytes, or
   * given back when the write fails.
   */
  async putPart(
    session: UploadSession,
    part: Omit<UploadPart, 'partKey' | 'sizeBytes'>,
    body: Readable,
    announcedBytes: number | undefined,
    signal?: AbortSignal,
    reservation?: PartReservation,
  ): Promise<{ part: UploadPart; replaced: boolean }> {
    const { parts, repository } = this.options;
    // A part of known size may go straight to its place in the assembled file (staged-parts.ts),
    // unless a part or a write under way covers that place: the rows are read for that. A v1
    // chunk named by one number has no place: the number is an ordinal or an offset, who knows.
    // A v2 chunk's number and a legacy `OC-Chunked` index are ordinals of equal chunks but the last.
    const chunkNumber = part.startByte === undefined && (session.protocol === 'nextcloud-v2' || session.protocol === 'oc-chunked');
    const toPlace = { seq: part.seq, startByte: part.startByte, sizeBytes: announcedBytes ?? 0, chunkNumber, ...(reservation?.withinBytes !== undefined ? { withinBytes: reservation.withinBytes } : {}) };
    const place = parts.reserve && announcedBytes !== undefined && announcedBytes > 0 ? parts.reserve(session.key, toPlace, await repository.parts(session.key)) : undefined;
    let settled = reservation === undefined;
    try {
      const writtenAs = place?.partKey ?? randomUUID();
      const written = await parts.write(session.key, writtenAs, body, announcedBytes, signal);
      const { partKey, sizeBytes } = typeof written === 'number' ? { partKey: writtenAs, sizeBytes: written } : written;
      const stored: UploadPart = { ...part, partKey, sizeBytes };
      const old = await repository.putPart(session.key, stored, this.now(), reservation?.claimedBytes);
      settled = true;
      if (old === false) {
        await parts.removePart(session.key, partKey);
        throw new UploadGoneError('the upload was removed while the part arrived');
      }
      if (old !== undefined) await parts.removePart(session.key, old);
      await this.touch(session);
      return { part: stored, replaced: old !== undefined };
    } finally {
      place?.release();
      if (!settled && reservation) {
        await repository.unreserve(session.key, reservation.claimedBytes).catch((err: unknown) => this.options.log.warn({ err }, 'could not give back a part’s reservation (the session’s expiry will)'));
      }
    }
  }

  /** The bytes received so far (every part's latest copy), the part named `except` left out. */
  receivedBytes(session: UploadSession, except?: string): Promise<number> {
    return this.options.repository.partBytes(session.key, except);
  }

  parts(session: UploadSession): Promise<UploadPart[]> {
    return this.options.repository.parts(session.key);
  }

  /** Whether a part's size must be known before its bytes (PartStore.needsLength). */
  get needsLength(): boolean {
    return this.options.parts.needsLength;
  }

  /** Removes one part (its row first, then its bytes); false when there was none of that name. */
  async removePart(session: UploadSession, name: string): Promise<boolean> {
    const partKey = await this.options.repository.removePart(session.key, name);
    if (partKey === undefined) return false;
    await this.options.parts.removePart(session.key, partKey);
    return true;
  }

  /** Whether an assembly holds the session now (PUT and DELETE then wait: 423). */
  isBusy(session: UploadSession): boolean {
    return session.claimedUntilMs !== undefined && session.claimedUntilMs > this.now();
  }

  /**
   * Runs `work` (an assembly) holding the session's lease, renewed while it runs; throws
   * UploadBusyError when another holds it. The lease is given up when `work` fails (the client
   * may try again); after success the session is gone anyway.
   */
  async whileAssembling<T>(session: UploadSession, work: () => Promise<T>): Promise<T> {
    const { repository } = this.options;
    if (!(await repository.claim(session.key, this.now(), this.now() + ASSEMBLY_LEASE_MS))) throw new UploadBusyError('the upload is being assembled');
    const renew = setInterval(() => {
      void repository.claim(session.key, this.now(), this.now() + ASSEMBLY_LEASE_MS, true).then(() => this.touch(session)).catch((err: unknown) => this.options.log.warn({ err }, 'could not renew an assembly lease'));
    }, ASSEMBLY_LEASE_MS / 3);
    renew.unref();
    try {
      return await work();
    } catch (err) {
      await repository.release(session.key).catch(() => undefined);
      throw err;
    } finally {
      clearInterval(renew);
    }
  }

  /**
   * `parts`, in the order given, as one stream (each part opened only when the one before has
   * been read), or as the part store's assembled file when it keeps one (staged-parts.ts).
   */
  assembled(session: UploadSession, parts: readonly UploadPart[]): Readable {
    const store = this.options.parts;
    if (store.assemble) return store.assemble(session.key, parts);
    async function* chunks(): AsyncGenerator<Buffer> {
      for (const part of parts) {
        for await (const chunk of await store.read(session.key, part)) yield chunk as Buffer;
      }
    }
    return Readable.from(chunks(), { objectMode: false });
  }

  /**
   * Removes a session (a DELETE, or after its assembly, holding its lease: `leased`): expired at once (no request finds it
   * any more), then its bytes, then its rows. A crash in between leaves an expired row, which the
   * sweep finishes, never bytes that no row names.
   */
  async remove(session: UploadSession, options: { leased?: boolean } = {}): Promise<boolean> {
    const { repository, parts } = this.options;
    // A client's removal (DELETE) takes the session's lease first: one that found the session just
    // before an assembly claimed it would take the parts from under that assembly (on S3, delete
    // the completed object its commit is about to adopt as the blob). UploadBusyError: 423.
    if (!options.leased && !(await repository.claim(session.key, this.now(), this.now() + ASSEMBLY_LEASE_MS))) {
      if ((await repository.find(session.owner, session.name, this.now())) !== undefined) throw new UploadBusyError('the upload is being assembled');
      return false;
    }
    const live = (await repository.find(session.owner, session.name, this.now())) !== undefined;
    await repository.update(session.key, { expiresMs: 0 });
    await parts.removeSession(session.key);
    return (await repository.remove(session.key)) && live;
  }

  /**
   * Removes sessions expired by now, bytes first (a session whose bytes could not be removed
   * stays listed as expired and is tried again next round). Several instances may sweep at once:
   * removing twice is harmless. Returns how many sessions went.
   */
  sweep(): Promise<number> {
    this.sweeping ??= (async () => {
      let removed = 0;
      try {
        for (;;) {
          const batch = await this.options.repository.expired(this.now(), SWEEP_BATCH);
          for (const session of batch) {
            await this.options.parts.removeSession(session.key);
            if (await this.options.repository.remove(session.key)) removed += 1;
          }
          if (batch.length < SWEEP_BATCH) break;
        }
        if (removed > 0) this.options.log.info({ sessions: removed }, 'removed abandoned uploads');
        return removed;
      } finally {
        this.sweeping = undefined;
      }
    })();
    return this.sweeping;
  }

  close(): void {
    clearInterval(this.timer);
  }
}
