/**
 * One suite for every PartStore (contracts/upload-sessions.ts), where resumable uploads keep their
 * parts' bytes: the folder of contracts/local-part-store.ts, the assembled file of
 * store/blobs/staged-parts.ts and the bucket of store/blobs/s3-parts.ts
 * (test/integration/bridge-state/part-stores.test.ts). Parts under their ordinary keys, as the
 * upload service writes any part: written, read, removed one by one and by session, whole or not
 * at all. Where a store puts a part it can place (reserve, assemble) is each store's own suite.
 */
import { createHash, randomUUID } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { PartStore } from '../../src/contracts/upload-sessions.js';
import { MiB, patternBytes, readAll } from '../helpers/stream-helpers.js';

/** A fresh, empty part store; `close` (optional) runs after each test. */
export interface PartStoreFactory {
  open(): Promise<PartStore>;
  close?(): Promise<void>;
  /**
   * Why what a cut write sent stays readable under its key on this server (a test server's
   * shortcut, never the store's): the suite then asks only that the session's removal takes it.
   * Nothing reads it meanwhile: a part whose write failed has no row.
   */
  keepsCutWrites?: string;
}

/** What a test compares: a part's size and SHA-256, not its bytes (a diff of megabytes says nothing). */
function contentOf(bytes: Buffer): { sizeBytes: number; sha256: string } {
  return { sizeBytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** The size write() resolves with, whichever of its two shapes. */
function sizeOf(written: number | { sizeBytes: number }): number {
  return typeof written === 'number' ? written : written.sizeBytes;
}

/** A body that sends `sentBytes` and then fails when read on, as a client hanging up mid-chunk. */
function failingBody(sentBytes: number): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (sent) this.destroy(new Error('the client hung up'));
      else this.push(patternBytes(0, sentBytes));
      sent = true;
    },
  });
}

export function describePartStore(name: string, factory: () => PartStoreFactory): void {
  describe(`PartStore contract: ${name}`, () => {
    let current: PartStoreFactory | undefined;
    afterEach(async () => {
      await current?.close?.();
      current = undefined;
    });

    async function open(): Promise<{ store: PartStore; keepsCutWrites: boolean }> {
      current = factory();
      return { store: await current.open(), keepsCutWrites: current.keepsCutWrites !== undefined };
    }

    /** Writes `bytes` whole under a fresh part key; the key the part is stored under from now on. */
    async function put(store: PartStore, session: string, bytes: Buffer): Promise<string> {
      const partKey = randomUUID();
      const written = await store.write(session, partKey, Readable.from([bytes]), bytes.length);
      expect(sizeOf(written)).toBe(bytes.length);
      return typeof written === 'number' ? partKey : written.partKey;
    }

    /** The part's content, or 'missing' when reading it fails (at once or in the stream). */
    async function stored(store: PartStore, session: string, partKey: string, sizeBytes: number): Promise<ReturnType<typeof contentOf> | 'missing'> {
      try {
        return contentOf(await readAll(await store.read(session, { partKey, sizeBytes })));
      } catch {
        return 'missing';
      }
    }

    it('keeps a part byte for byte and resolves with its size: empty, small, and larger than a read chunk', async () => {
      const { store } = await open();
      const session = randomUUID();
      for (const bytes of [Buffer.alloc(0), Buffer.from('one chunk'), patternBytes(7, 3 * MiB + 11)]) {
        const partKey = await put(store, session, bytes);
        expect(await stored(store, session, partKey, bytes.length)).toEqual(contentOf(bytes));
      }
    });

    it('keeps sessions apart: one part key in two sessions holds each session its own bytes', async () => {
      const { store } = await open();
      const [one, two] = [randomUUID(), randomUUID()];
      const partKey = randomUUID();
      const first = patternBytes(1, 1000);
      const second = patternBytes(2, 2000);
      await store.write(one, partKey, Readable.from([first]), first.length);
      await store.write(two, partKey, Readable.from([second]), second.length);
      expect(await stored(store, one, partKey, first.length)).toEqual(contentOf(first));
      expect(await stored(store, two, partKey, second.length)).toEqual(contentOf(second));
    });

    it('removePart takes that part only; a part never written, or removed twice, is no error', async () => {
      const { store } = await open();
      const session = randomUUID();
      const kept = Buffer.from('kept');
      const keptKey = await put(store, session, kept);
      const goneKey = await put(store, session, Buffer.from('gone'));
      await store.removePart(session, goneKey);
      await store.removePart(session, goneKey);
      await store.removePart(session, randomUUID());
      expect(await stored(store, session, goneKey, 4)).toBe('missing');
      expect(await stored(store, session, keptKey, kept.length)).toEqual(contentOf(kept));
    });

    it("removeSession takes every part of the session and none of another's; a session without parts is no error", async () => {
      const { store } = await open();
      const [gone, kept] = [randomUUID(), randomUUID()];
      const goneKeys = [await put(store, gone, Buffer.from('a')), await put(store, gone, patternBytes(3, MiB))];
      const other = Buffer.from('another upload');
      const keptKey = await put(store, kept, other);
      await store.removeSession(gone);
      await store.removeSession(gone);
      await store.removeSession(randomUUID());
      for (const partKey of goneKeys) expect(await stored(store, gone, partKey, 1)).toBe('missing');
      expect(await stored(store, kept, keptKey, other.length)).toEqual(contentOf(other));
    });

    /** After a cut write: nothing under its key (or, where the server keeps it, nothing once the session is removed). */
    async function expectNothingLeft(store: PartStore, keepsCutWrites: boolean, session: string, partKey: string, sizeBytes: number): Promise<void> {
      if (!keepsCutWrites) {
        expect(await stored(store, session, partKey, sizeBytes)).toBe('missing');
        await store.removeSession(session);
        expect(await stored(store, session, partKey, sizeBytes)).toBe('missing');
        return;
      }
      // A server that keeps cut writes (s3rver) may still be writing the cut object when our side
      // has rejected: under load its file appeared after removeSession had deleted the session's
      // objects. Removed again until it stays gone (a few rounds at most; bounded).
      let left: Awaited<ReturnType<typeof stored>> = 'missing';
      for (let round = 0; round < 20; round += 1) {
        await store.removeSession(session);
        left = await stored(store, session, partKey, sizeBytes);
        if (left === 'missing') break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(left).toBe('missing');
    }

    it("a write whose body fails midway rejects with the body's error and leaves nothing under its key; the key written whole afterwards reads whole", async () => {
      const { store, keepsCutWrites } = await open();
      const session = randomUUID();
      const partKey = randomUUID();
      const whole = patternBytes(0, 2 * MiB);
      await expect(store.write(session, partKey, failingBody(MiB), whole.length)).rejects.toThrow('the client hung up');
      if (!keepsCutWrites) expect(await stored(store, session, partKey, whole.length)).toBe('missing');
      const written = await store.write(session, partKey, Readable.from([whole]), whole.length);
      const key = typeof written === 'number' ? partKey : written.partKey;
      expect(await stored(store, session, key, whole.length)).toEqual(contentOf(whole));
      await store.removeSession(session);
      const again = randomUUID();
      await expect(store.write(session, again, failingBody(MiB), whole.length)).rejects.toThrow('the client hung up');
      await expectNothingLeft(store, keepsCutWrites, session, again, whole.length);
    });

    it('a write cancelled by its signal rejects and leaves nothing under its key', async () => {
      const { store, keepsCutWrites } = await open();
      const session = randomUUID();
      const partKey = randomUUID();
      const body = new PassThrough();
      body.write(patternBytes(0, MiB));
      const cancel = new AbortController();
      const writing = store.write(session, partKey, body, 2 * MiB, cancel.signal);
      setTimeout(() => cancel.abort(), 50);
      await expect(writing).rejects.toThrow();
      await expectNothingLeft(store, keepsCutWrites, session, partKey, 2 * MiB);
    });

    it('refuses a session or part key that is not path-safe', async () => {
      const { store } = await open();
      const bytes = Buffer.from('elsewhere');
      await expect(store.write('../escape', randomUUID(), Readable.from([bytes]), bytes.length)).rejects.toThrow(/key/);
      await expect(store.write(randomUUID(), '../../escape', Readable.from([bytes]), bytes.length)).rejects.toThrow(/key/);
    });

    it('refuses a body of unknown size when it needs the length, and takes it otherwise', async () => {
      const { store } = await open();
      const session = randomUUID();
      const partKey = randomUUID();
      const bytes = Buffer.from('a body sent without Content-Length');
      const writing = store.write(session, partKey, Readable.from([bytes]), undefined);
      if (store.needsLength) {
        await expect(writing).rejects.toThrow();
        expect(await stored(store, session, partKey, bytes.length)).toBe('missing');
      } else {
        expect(sizeOf(await writing)).toBe(bytes.length);
        expect(await stored(store, session, partKey, bytes.length)).toEqual(contentOf(bytes));
      }
    });
  });
}
