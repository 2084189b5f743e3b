/**
 * The bridge's previews in front of a store without thumbnails (bridge/previews.ts, docs/extensions.md
 * "Thumbnails for the bridge"): the in-memory server of the interface answers the thumbnail route
 * with a plain 404 (a foreign server's missing route), and driveway 1.0 with `not_implemented`.
 * nc:has-preview is true for an image by name until the first preview asked shows the store makes
 * none; from then on false for every file, and no preview asks the store again. And the size a
 * request's x/y is answered with.
 */
import { describe, expect, it } from 'vitest';
import type { NodeId } from '../../../src/store-client/contract.js';
import { createLogger } from '../../../src/common/logger.js';
import { previewSizeFor, Previews } from '../../../src/bridge/previews.js';
import { MemoryStore } from '../../helpers/memory-store.js';
import { bridgeUserOf } from '../../helpers/memory-tree.js';

const log = createLogger('silent');

describe.each([
  ['a foreign server (plain 404)', '3.0'],
  ['driveway 1.0 (not_implemented)', '1.0'],
] as const)('previews over %s', (_name, edition) => {
  it('says has-preview for images by name until the store is found to make none, then for nothing, and asks it no more', async () => {
    const store = new MemoryStore({ edition });
    const alice = bridgeUserOf(store, store.admin.addUser());
    const s = await alice.session();
    const made = await store.client.upload(s, { folder: 'home' as NodeId, name: 'photo.jpg' }, Buffer.from('jpeg bytes'));
    let asked = 0;
    const client = { ...store.client, thumbnail: (...args: Parameters<typeof store.client.thumbnail>) => (asked++, store.client.thumbnail(...args)) };
    const previews = new Previews(client, log);
    const photo = { kind: 'file' as const, name: 'photo.jpg', sizeBytes: 10 };
    expect([previews.mayHave(photo), previews.mayHave({ ...photo, name: 'notes.txt' }), previews.mayHave({ ...photo, kind: 'folder' })]).toEqual([true, false, false]);
    expect(previews.mayHave({ ...photo, sizeBytes: 65 * 1024 * 1024 })).toBe(false);
    expect(previews.stateKey).toBe('previews');

    expect(await previews.thumbnail(alice, made.id as NodeId, photo, 256)).toBeUndefined();
    expect(previews.mayHave(photo)).toBe(false);
    expect(previews.stateKey).toBe('no-previews');
    const before = asked;
    expect(before).toBeGreaterThan(0);
    expect(await previews.thumbnail(alice, made.id as NodeId, photo, 256)).toBeUndefined();
    expect(asked).toBe(before);
  });
});

describe('the size that answers x by y', () => {
  it('is the smallest of 64, 256 and 1,024 covering the larger side, 1,024 past it and for -1; none for 0', () => {
    expect([previewSizeFor(32, 32), previewSizeFor(64, 10), previewSizeFor(65, 10), previewSizeFor(100, 300), previewSizeFor(512, 512)]).toEqual([64, 64, 256, 1024, 1024]);
    expect([previewSizeFor(4096, 4096), previewSizeFor(-1, -1), previewSizeFor(-1, 32)]).toEqual([1024, 1024, 1024]);
    expect([previewSizeFor(0, 32), previewSizeFor(32, 0), previewSizeFor(-2, 32), previewSizeFor(1.5, 32)]).toEqual([undefined, undefined, undefined, undefined]);
  });
});
