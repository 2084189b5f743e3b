/**
 * One suite for every UploadSessionRepository (contracts/upload-sessions.ts): sessions, parts, the
 * assembly lease, expiry, and the quota reservation (issue 29) with the caps on open uploads and
 * parts, including reserve() calls racing for the scope's last bytes, through one handle and
 * through two (two instances over one database, where the implementation has them). Run on the
 * store's SQLite database, on the bridge's own bridge.sqlite and on PostgreSQL
 * (test/integration/bridge-state/upload-sessions.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { UploadPart, UploadSession, UploadSessionRepository } from '../../src/contracts/upload-sessions.js';

/** A fresh, empty repository; `another` a second handle over the same tables (another instance), when there can be one. */
export interface UploadSessionRepositoryFactory {
  open(): Promise<UploadSessionRepository>;
  another?(): Promise<UploadSessionRepository>;
  close?(): Promise<void>;
}

const NOW = 1_000_000;
const HOUR = 3_600_000;

let sessionCount = 0;
function session(overrides: Partial<UploadSession> = {}): UploadSession {
  sessionCount += 1;
  return {
    key: `key-${sessionCount}-${Math.random().toString(36).slice(2)}`,
    owner: 'alice',
    name: `upload-${sessionCount}`,
    protocol: 'nextcloud-v2',
    destination: '/home/file.bin',
    totalBytes: undefined,
    scope: 'alice',
    reservedBytes: 0,
    createdMs: NOW,
    expiresMs: NOW + HOUR,
    ...overrides,
  };
}

function part(name: string, sizeBytes: number, overrides: Partial<UploadPart> = {}): UploadPart {
  return { name, seq: Number(name) || 0, startByte: undefined, sizeBytes, partKey: `pk-${name}-${Math.random().toString(36).slice(2)}`, ...overrides };
}

/** A part written as UploadService.putPart writes one: reserved first, then put with its claim. */
async function reservedPart(repository: UploadSessionRepository, key: string, p: UploadPart, availableBytes?: number): Promise<string | undefined | false> {
  const reserved = await repository.reserve(key, { part: { name: p.name, bytes: p.sizeBytes } }, { availableBytes }, NOW);
  if (!('claimedBytes' in reserved)) throw new Error(`refused: ${JSON.stringify(reserved)}`);
  return repository.putPart(key, p, NOW, reserved.claimedBytes);
}

export function describeUploadSessionRepository(name: string, factory: () => UploadSessionRepositoryFactory): void {
  describe(`UploadSessionRepository contract: ${name}`, () => {
    let current: UploadSessionRepositoryFactory | undefined;
    afterEach(async () => {
      await current?.close?.();
      current = undefined;
    });

    async function open(): Promise<UploadSessionRepository> {
      current = factory();
      return current.open();
    }

    const held = async (repository: UploadSessionRepository, key: string): Promise<number> => {
      const s = (await repository.list('alice', NOW)).concat(await repository.list('bob', NOW)).find((x) => x.key === key);
      if (!s) throw new Error('no such session');
      return Math.max(s.totalBytes ?? 0, s.reservedBytes);
    };

    describe('sessions', () => {
      it('creates, finds and lists a live session; a second of that name is refused until the first expires', async () => {
        const repository = await open();
        const s = session({ totalBytes: 10 });
        expect(await repository.create(s)).toBe(true);
        expect(await repository.find('alice', s.name, NOW)).toEqual({ ...s, claimedUntilMs: undefined });
        expect(await repository.find('bob', s.name, NOW)).toBeUndefined();
        expect(await repository.create(session({ name: s.name }))).toEqual({ refused: 'exists' });
        expect((await repository.list('alice', NOW)).map((x) => x.key)).toEqual([s.key]);
        // Expired: no read finds it, and a new session of its name may begin (the sweep still sees the old).
        expect(await repository.find('alice', s.name, s.expiresMs)).toBeUndefined();
        const again = session({ name: s.name, createdMs: s.expiresMs, expiresMs: s.expiresMs + HOUR });
        expect(await repository.create(again)).toBe(true);
        expect((await repository.list('alice', s.expiresMs)).map((x) => x.key)).toEqual([again.key]);
        expect((await repository.expired(s.expiresMs, 10)).map((x) => x.key)).toEqual([s.key]);
      });

      it('records what a later request learnt and moves the expiry on', async () => {
        const repository = await open();
        const s = session({ destination: undefined, protocol: 'nextcloud-v1' });
        await repository.create(s);
        await repository.update(s.key, { destination: '/home/late.bin', totalBytes: 42, expiresMs: NOW + 2 * HOUR });
        expect(await repository.find('alice', s.name, NOW + HOUR + 1)).toMatchObject({ destination: '/home/late.bin', totalBytes: 42, expiresMs: NOW + 2 * HOUR });
      });

      it('keeps parts in order, replaces one of the same name (its key handed back) and removes them with the session', async () => {
        const repository = await open();
        const s = session();
        await repository.create(s);
        const two = part('2', 5);
        const one = part('1', 7);
        expect(await repository.putPart(s.key, two, NOW)).toBeUndefined();
        expect(await repository.putPart(s.key, one, NOW)).toBeUndefined();
        const oneAgain = part('1', 6);
        expect(await repository.putPart(s.key, oneAgain, NOW)).toBe(one.partKey);
        expect((await repository.parts(s.key)).map((p) => [p.name, p.sizeBytes])).toEqual([['1', 6], ['2', 5]]);
        expect(await repository.partBytes(s.key)).toBe(11);
        expect(await repository.partBytes(s.key, '2')).toBe(6);
        expect(await repository.removePart(s.key, '2')).toBe(two.partKey);
        expect(await repository.removePart(s.key, '2')).toBeUndefined();
        expect(await repository.remove(s.key)).toBe(true);
        expect(await repository.remove(s.key)).toBe(false);
        expect(await repository.parts(s.key)).toEqual([]);
        expect(await repository.putPart(s.key, part('3', 1), NOW)).toBe(false);
      });

      it('gives the assembly lease to one at a time until it lapses, renews it, and gives it up', async () => {
        const repository = await open();
        const s = session();
        await repository.create(s);
        expect(await repository.claim(s.key, NOW, NOW + 60_000)).toBe(true);
        expect(await repository.claim(s.key, NOW, NOW + 60_000)).toBe(false);
        expect(await repository.claim(s.key, NOW + 1, NOW + 120_000, true)).toBe(true);
        expect(await repository.claim(s.key, NOW + 60_001, NOW + 120_000)).toBe(false);
        expect(await repository.claim(s.key, NOW + 120_000, NOW + 180_000)).toBe(true);
        await repository.release(s.key);
        expect((await repository.find('alice', s.name, NOW))?.claimedUntilMs).toBeUndefined();
      });

      it('gives every lease up at once (a start under the data dir’s lock), counting those held, and each session can be claimed again', async () => {
        const repository = await open();
        const [held, other, free] = [session(), session(), session()];
        for (const s of [held, other, free]) await repository.create(s);
        expect(await repository.claim(held.key, NOW, NOW + 60_000)).toBe(true);
        expect(await repository.claim(other.key, NOW, NOW + 60_000)).toBe(true);
        expect(await repository.releaseAll()).toBe(2);
        expect(await repository.releaseAll()).toBe(0);
        for (const s of [held, other, free]) expect(await repository.claim(s.key, NOW, NOW + 60_000)).toBe(true);
      });

      it('hands expired sessions to the sweep, oldest first, up to the limit', async () => {
        const repository = await open();
        const sessions = [3, 1, 2].map((n) => session({ createdMs: NOW - 10 * HOUR, expiresMs: NOW - n }));
        for (const s of sessions) await repository.create(s);
        await repository.create(session());
        expect((await repository.expired(NOW, 2)).map((s) => s.expiresMs)).toEqual([NOW - 3, NOW - 2]);
      });
    });

    describe('the quota reservation', () => {
      it('reserves a declared total at creation, refusing (nothing written) what does not fit beside the scope’s other sessions, any owner’s', async () => {
        const repository = await open();
        const first = session({ totalBytes: 200, scope: 'group-1' });
        expect(await repository.create(first, { availableBytes: 256 })).toBe(true);
        const bobs = session({ owner: 'bob', totalBytes: 100, scope: 'group-1' });
        expect(await repository.create(bobs, { availableBytes: 256 })).toEqual({ refused: 'quota', neededBytes: 100, heldBytes: 200, availableBytes: 256 });
        expect(await repository.list('bob', NOW)).toEqual([]);
        // Another scope (Bob's own drive) holds nothing; expired sessions hold nothing.
        expect(await repository.create(session({ owner: 'bob', totalBytes: 100, scope: 'bob' }), { availableBytes: 256 })).toBe(true);
        expect(await repository.reservedIn('group-1', NOW)).toBe(200);
        expect(await repository.reservedIn('group-1', NOW, first.key)).toBe(0);
        expect(await repository.reservedIn('group-1', first.expiresMs)).toBe(0);
        // No limit, or no total: any number of them.
        expect(await repository.create(session({ totalBytes: 10 ** 12, scope: 'group-1' }))).toBe(true);
        expect(await repository.create(session({ scope: 'group-1' }), { availableBytes: 0 })).toBe(true);
      });

      it('refuses a session past the owner’s open uploads (live ones only)', async () => {
        const repository = await open();
        await repository.create(session({ expiresMs: NOW }), { maxOpenPerOwner: 2 });
        expect(await repository.create(session(), { maxOpenPerOwner: 2 })).toBe(true);
        expect(await repository.create(session(), { maxOpenPerOwner: 2 })).toBe(true);
        expect(await repository.create(session(), { maxOpenPerOwner: 2 })).toEqual({ refused: 'open-uploads', open: 2 });
        expect(await repository.create(session({ owner: 'bob', scope: 'bob' }), { maxOpenPerOwner: 2 })).toBe(true);
      });

      it('reserves a part before its write, settles it when the part is put, and gives it back when not', async () => {
        const repository = await open();
        const s = session();
        await repository.create(s);
        expect(await repository.reserve(s.key, { part: { name: '1', bytes: 100 } }, { availableBytes: 256 }, NOW)).toEqual({ claimedBytes: 100 });
        expect(await held(repository, s.key)).toBe(100);
        // A write that ended short (or failed): the part holds what it holds.
        expect(await repository.putPart(s.key, part('1', 90), NOW, 100)).toBeUndefined();
        expect(await held(repository, s.key)).toBe(90);
        expect(await repository.reserve(s.key, { part: { name: '2', bytes: 150 } }, { availableBytes: 256 }, NOW)).toEqual({ claimedBytes: 150 });
        expect(await repository.reserve(s.key, { part: { name: '3', bytes: 20 } }, { availableBytes: 256 }, NOW)).toEqual({ refused: 'quota', neededBytes: 260, heldBytes: 0, availableBytes: 256 });
        await repository.unreserve(s.key, 150);
        expect(await held(repository, s.key)).toBe(90);
        // Removing a part gives its bytes back; removing the session, everything.
        await reservedPart(repository, s.key, part('2', 100), 256);
        expect(await held(repository, s.key)).toBe(190);
        await repository.removePart(s.key, '1');
        expect(await held(repository, s.key)).toBe(100);
        await repository.remove(s.key);
        expect(await repository.reservedIn('alice', NOW)).toBe(0);
        expect(await repository.reserve(s.key, { part: { name: '4', bytes: 1 } }, {}, NOW)).toEqual({ refused: 'gone' });
      });

      it('counts a part sent again once: it claims only what it adds to its stored copy', async () => {
        const repository = await open();
        const s = session();
        await repository.create(s);
        await reservedPart(repository, s.key, part('1', 200), 256);
        expect(await repository.reserve(s.key, { part: { name: '1', bytes: 200 } }, { availableBytes: 256 }, NOW)).toEqual({ claimedBytes: 0 });
        expect(await repository.putPart(s.key, part('1', 200), NOW, 0)).toEqual(expect.any(String));
        expect(await held(repository, s.key)).toBe(200);
        expect(await repository.reserve(s.key, { part: { name: '1', bytes: 250 } }, { availableBytes: 256 }, NOW)).toEqual({ claimedBytes: 50 });
        await repository.putPart(s.key, part('1', 250), NOW, 50);
        expect(await held(repository, s.key)).toBe(250);
        // Smaller again: the session holds less.
        await reservedPart(repository, s.key, part('1', 10), 256);
        expect(await held(repository, s.key)).toBe(10);
      });

      it('holds the larger of the declared total and what the parts hold; a total learnt late is reserved, or refused and not recorded', async () => {
        const repository = await open();
        const other = session({ totalBytes: 100 });
        await repository.create(other, { availableBytes: 256 });
        const s = session({ protocol: 'nextcloud-v1', destination: undefined });
        await repository.create(s, { availableBytes: 256 });
        expect(await repository.reserve(s.key, { totalBytes: 200 }, { availableBytes: 256 }, NOW)).toEqual({ refused: 'quota', neededBytes: 200, heldBytes: 100, availableBytes: 256 });
        expect((await repository.find('alice', s.name, NOW))?.totalBytes).toBeUndefined();
        expect(await repository.reserve(s.key, { totalBytes: 150, part: { name: '1', bytes: 50 } }, { availableBytes: 256 }, NOW)).toEqual({ claimedBytes: 50 });
        expect((await repository.find('alice', s.name, NOW))?.totalBytes).toBe(150);
        await repository.putPart(s.key, part('1', 50), NOW, 50);
        // Parts within the total cost nothing more; past it, they count.
        expect(await repository.reserve(s.key, { part: { name: '2', bytes: 100 } }, { availableBytes: 256 }, NOW)).toEqual({ claimedBytes: 100 });
        expect(await held(repository, s.key)).toBe(150);
        expect(await repository.reserve(s.key, { part: { name: '3', bytes: 10 } }, { availableBytes: 256 }, NOW)).toEqual({ refused: 'quota', neededBytes: 160, heldBytes: 100, availableBytes: 256 });
        // A claim that makes the session hold no more passes even when the quota shrank below it.
        await repository.unreserve(s.key, 100);
        expect(await repository.reserve(s.key, { part: { name: '2', bytes: 100 } }, { availableBytes: 0 }, NOW)).toEqual({ claimedBytes: 100 });
      });

      it('refuses a part past the upload’s parts, counting those being written and not the one it replaces', async () => {
        const repository = await open();
        const s = session();
        await repository.create(s);
        await reservedPart(repository, s.key, part('1', 1));
        expect(await repository.reserve(s.key, { part: { name: '2', bytes: 1 } }, { maxParts: 3 }, NOW)).toEqual({ claimedBytes: 1 });
        expect(await repository.reserve(s.key, { part: { name: '3', bytes: 1 } }, { maxParts: 3 }, NOW)).toEqual({ claimedBytes: 1 });
        expect(await repository.reserve(s.key, { part: { name: '4', bytes: 1 } }, { maxParts: 3 }, NOW)).toEqual({ refused: 'parts', parts: 3 });
        await repository.putPart(s.key, part('2', 1), NOW, 1);
        await repository.unreserve(s.key, 1);
        expect(await repository.reserve(s.key, { part: { name: '1', bytes: 1 } }, { maxParts: 2 }, NOW)).toEqual({ claimedBytes: 0 });
        await repository.putPart(s.key, part('1', 1), NOW, 0);
        expect(await repository.reserve(s.key, { part: { name: '4', bytes: 1 } }, { maxParts: 3 }, NOW)).toEqual({ claimedBytes: 1 });
      });

      it('takes exactly one of six parts racing for the scope’s last bytes, across uploads and handles', async () => {
        current = factory();
        const one = await current.open();
        const two = current.another ? await current.another() : one;
        const sessions = [session(), session(), session()];
        for (const s of sessions) await one.create(s);
        for (let round = 0; round < 5; round++) {
          const outcomes = await Promise.all(
            Array.from({ length: 6 }, (_, i) => ((i % 2 === 0 ? one : two) as UploadSessionRepository).reserve((sessions[i % 3] as UploadSession).key, { part: { name: `r${round}-${i}`, bytes: 200 } }, { availableBytes: 256 }, NOW)),
          );
          const taken = outcomes.filter((o) => 'claimedBytes' in o);
          expect(taken, `round ${round}: ${JSON.stringify(outcomes)}`).toHaveLength(1);
          expect(await one.reservedIn('alice', NOW)).toBe(200);
          const winner = outcomes.findIndex((o) => 'claimedBytes' in o);
          await one.unreserve((sessions[winner % 3] as UploadSession).key, 200);
        }
        // Creations racing with totals: one fits.
        const created = await Promise.all(Array.from({ length: 4 }, (_, i) => ((i % 2 === 0 ? one : two) as UploadSessionRepository).create(session({ totalBytes: 200 }), { availableBytes: 256 })));
        expect(created.filter((c) => c === true)).toHaveLength(1);
      });
    });
  });
}
