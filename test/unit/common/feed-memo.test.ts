/**
 * FeedMemo (common/feed-memo.ts), against a feed of our own whose messages and connection state
 * the test decides: what is kept, what a change drops, the generation that keeps a read which
 * raced a change from being kept, the bypass while the feed does not listen, and the age of an
 * answer counted from its read. The PostgreSQL side (triggers, barrier) is tested with real
 * servers in test/integration/bridge-state/repositories.test.ts and store/shared-state.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { ChangeFeed, StoreChange, StoreChangeListener } from '../../../src/common/change-feed.js';
import { FeedMemo } from '../../../src/common/feed-memo.js';

class TestFeed implements ChangeFeed {
  listening = true;
  private readonly listeners = new Set<StoreChangeListener>();
  subscribe(listener: StoreChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  settled(): Promise<void> {
    return Promise.resolve();
  }
  announce(change: Partial<StoreChange>): void {
    const full: StoreChange = { folders: [], everything: false, properties: false, locks: false, sessions: false, local: false, ...change };
    for (const listener of this.listeners) listener(full);
  }
}

function counter(value: string): { read: () => Promise<string>; reads: () => number } {
  let n = 0;
  return { read: async () => (n++, value), reads: () => n };
}

describe('FeedMemo', () => {
  it('keeps an answer until a change that concerns it, or everything, is announced', async () => {
    const feed = new TestFeed();
    const memo = new FeedMemo<string>(feed, (c) => c.locks, { max: 10, ttlMs: 60_000 });
    const a = counter('a');
    expect(await memo.get('k', a.read)).toBe('a');
    expect(await memo.get('k', a.read)).toBe('a');
    expect(a.reads()).toBe(1);
    feed.announce({ sessions: true, folders: ['x'] });
    expect(await memo.get('k', a.read)).toBe('a');
    expect(a.reads()).toBe(1);
    feed.announce({ locks: true });
    expect(await memo.get('k', a.read)).toBe('a');
    expect(a.reads()).toBe(2);
    feed.announce({ everything: true });
    await memo.get('k', a.read);
    expect(a.reads()).toBe(3);
    memo.drop();
    await memo.get('k', a.read);
    expect(a.reads()).toBe(4);
  });

  it('does not keep an answer read while a change arrived, nor one `keep` refuses, nor anything while the feed does not listen', async () => {
    const feed = new TestFeed();
    const memo = new FeedMemo<string>(feed, (c) => c.sessions, { max: 10, ttlMs: 60_000 });
    let release: () => void = () => undefined;
    const slow = memo.get('k', () => new Promise<string>((resolve) => (release = () => resolve('old'))));
    feed.announce({ sessions: true });
    release();
    expect(await slow).toBe('old');
    const fresh = counter('new');
    expect(await memo.get('k', fresh.read)).toBe('new');
    expect(fresh.reads()).toBe(1);

    const refused = counter('miss');
    await memo.get('r', refused.read, (v) => v !== 'miss');
    await memo.get('r', refused.read, (v) => v !== 'miss');
    expect(refused.reads()).toBe(2);

    feed.listening = false;
    const down = counter('d');
    await memo.get('d', down.read);
    await memo.get('d', down.read);
    expect(down.reads()).toBe(2);
    // Not even what was kept before: messages sent while it does not listen are lost.
    const kept = counter('kept again');
    expect(await memo.get('k', kept.read)).toBe('kept again');
    expect(kept.reads()).toBe(1);
  });

  it('ages an answer from its read: a read slower than the TTL is not kept', async () => {
    const feed = new TestFeed();
    const memo = new FeedMemo<string>(feed, () => false, { max: 10, ttlMs: 30 });
    let n = 0;
    const slowRead = async (): Promise<string> => {
      n++;
      await new Promise((resolve) => setTimeout(resolve, 50));
      return 'slow';
    };
    await memo.get('k', slowRead);
    await memo.get('k', slowRead);
    expect(n).toBe(2);
    const quick = counter('quick');
    await memo.get('q', quick.read);
    await memo.get('q', quick.read);
    expect(quick.reads()).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 60));
    await memo.get('q', quick.read);
    expect(quick.reads()).toBe(2);
  });
});
