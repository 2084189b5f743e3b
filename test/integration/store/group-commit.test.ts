/**
 * Answered means durable, at the HTTP boundary (durability.ts through app.ts's hooks): every
 * request that wrote is answered after an fsync of the WAL that covers it, concurrent writers
 * share those fsyncs, and reads cost none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId } from '../../../src/store-client/index.js';
import { storeFixture, type StoreFixture, type TestUser } from '../../helpers/store-fixture.js';

let f: StoreFixture;
let user: TestUser;

beforeAll(async () => {
  f = await storeFixture();
  user = await f.newUser();
});
afterAll(async () => {
  await f.close();
});

describe('group commit over HTTP', () => {
  it('answers 20 concurrent folder creations, all stored, with fewer fsyncs than commits', async () => {
    // As on a disk whose fsync takes 15 ms (a spinning disk, a busy volume): the first commit's
    // fsync is under way while the other requests commit. On a fast disk and a busy CPU, each
    // request could commit after the previous one's fsync ended, and none had one to share.
    const wal = (f.store.ctx.durability as unknown as { wal: { flush: () => Promise<void> } }).wal;
    const flush = wal.flush.bind(wal);
    wal.flush = async () => {
      await new Promise((resolve) => setTimeout(resolve, 15));
      await flush();
    };
    const before = f.store.ctx.durability.flushes;
    try {
      await Promise.all(Array.from({ length: 20 }, (_, i) => f.client.createFolder(user.session, nodeId('home'), `folder ${i}`)));
    } finally {
      wal.flush = flush;
    }
    const flushes = f.store.ctx.durability.flushes - before;
    expect(flushes).toBeGreaterThanOrEqual(1);
    expect(flushes).toBeLessThan(20);
    expect((await f.client.listFolder(user.session, nodeId('home'))).length).toBe(20);
  });

  it('costs a read no fsync', async () => {
    const before = f.store.ctx.durability.flushes;
    for (let i = 0; i < 5; i += 1) await f.client.listFolder(user.session, nodeId('home'));
    expect(f.store.ctx.durability.flushes).toBe(before);
  });
});
