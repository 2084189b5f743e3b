/**
 * MetadataCache: generations outdate every user's listing of a folder at once, upsert() patches
 * every current listing in place of a re-list, the listings kept weigh at most `maxBytes`
 * (older ones go first, one heavier than the budget is not kept), uniqueNames() keeps duplicate
 * names apart deterministically, and load() shares one fetch among concurrent callers.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../../src/common/clock.js';
import { listingBytes, MetadataCache, uniqueNames, type Listing } from '../../../src/bridge/metadata-cache.js';
import type { NodeEntry, NodeId } from '../../../src/store-client/index.js';

function file(id: string, name: string, sizeBytes = 1): NodeEntry {
  return { id: id as NodeId, name, kind: 'file', sizeBytes, updatedMs: 0, revision: 1, isStarred: false };
}

function names(cache: MetadataCache, user: string, folder: string): string[] | undefined {
  return cache.listing(user, folder)?.entries.map((e) => e.name);
}

const opened: MetadataCache[] = [];
function newCache(onStale?: (listing: Listing) => void): MetadataCache {
  const cache = new MetadataCache({ ttlMs: 60_000, maxEntries: 100, ...(onStale ? { onStale } : {}) });
  opened.push(cache);
  return cache;
}
afterEach(() => {
  for (const cache of opened.splice(0)) cache.close();
});

describe('MetadataCache', () => {
  it('forgetAll() outdates every listing, every folder written before, and a fetch that was under way', async () => {
    const stale: Listing[] = [];
    const cache = newCache((listing) => stale.push(listing));
    cache.remember('ann', 'a', [file('1', 'one.txt')]);
    cache.forget('b');
    cache.forget('b');
    cache.remember('bob', 'b', [file('2', 'two.txt')]);
    let finish: (entries: NodeEntry[]) => void = () => undefined;
    const underWay = cache.load('ann', 'c', () => new Promise<NodeEntry[]>((resolve) => (finish = resolve)));
    cache.forgetAll();
    expect(cache.listing('ann', 'a')).toBeUndefined();
    expect(cache.listing('bob', 'b')).toBeUndefined();
    expect(stale).toHaveLength(2);
    // The fetch began before the change: its answer is handed back but not kept as current.
    finish([file('3', 'old.txt')]);
    expect((await underWay).entries.map((e) => e.name)).toEqual(['old.txt']);
    expect(cache.listing('ann', 'c')).toBeUndefined();
    // Listings fetched afterwards are kept, and a later forget() of one folder still outdates it.
    cache.remember('bob', 'b', [file('2', 'two.txt')]);
    expect(names(cache, 'bob', 'b')).toEqual(['two.txt']);
    cache.forget('b');
    expect(cache.listing('bob', 'b')).toBeUndefined();
  });

  it('keeps listings up to its byte budget: the least recently used go first, a listing heavier than the budget is not kept', () => {
    const entries = (folder: string, count: number) => Array.from({ length: count }, (_, i) => file(`${folder}-${i}`, `${folder}-file-${i}.txt`));
    const oneThousand = listingBytes({ entries: entries('x', 1000) });
    const cache = new MetadataCache({ ttlMs: 60_000, maxEntries: 100, maxBytes: Math.floor(oneThousand * 2.5) });
    opened.push(cache);
    cache.remember('ann', 'a', entries('a', 1000));
    cache.remember('ann', 'b', entries('b', 1000));
    expect(cache.listing('ann', 'a')).toBeDefined();
    cache.remember('ann', 'c', entries('c', 1000));
    // a was used after b: b is the one that made room.
    expect(cache.listing('ann', 'b')).toBeUndefined();
    expect([cache.listing('ann', 'a')?.entries.length, cache.listing('ann', 'c')?.entries.length]).toEqual([1000, 1000]);
    // Growing a kept listing in place weighs it again.
    for (let i = 0; i < 600; i += 1) cache.upsert('c', file(`c-new-${i}`, `c-new-file-${i}.txt`));
    expect(cache.listing('ann', 'c')?.entries.length).toBe(1600);
    expect(cache.listing('ann', 'a')).toBeUndefined();

    cache.remember('ann', 'huge', entries('h', 3000));
    expect(cache.listing('ann', 'huge')).toBeUndefined();
    expect(cache.listing('ann', 'c')?.entries.length).toBe(1600);
  });

  it('serves a remembered listing until a write into the folder outdates it for every user', () => {
    const cache = newCache();
    cache.remember('ann', 'f', [file('1', 'a.txt')]);
    cache.remember('bob', 'f', [file('1', 'a.txt')]);
    cache.remember('ann', 'g', [file('2', 'b.txt')]);
    expect(names(cache, 'ann', 'f')).toEqual(['a.txt']);
    cache.forget('f');
    expect(cache.listing('ann', 'f')).toBeUndefined();
    expect(cache.listing('bob', 'f')).toBeUndefined();
    expect(names(cache, 'ann', 'g')).toEqual(['b.txt']);
  });

  it('does not let a listing fetched before a write replace the patched one', () => {
    const cache = newCache();
    cache.remember('ann', 'f', [file('1', 'a.txt')]);
    const fetchedAt = cache.currentGeneration('f');
    cache.upsert('f', file('2', 'new.txt'));
    const stale = cache.remember('ann', 'f', [file('1', 'a.txt')], fetchedAt);
    expect(stale.entries.map((e) => e.name)).toEqual(['a.txt']);
    expect(names(cache, 'ann', 'f')).toEqual(['a.txt', 'new.txt']);
  });

  it('loads a missing listing once for concurrent callers, but not into a fetch that started before a write', async () => {
    const cache = newCache();
    let fetches = 0;
    const gates: Array<(entries: NodeEntry[]) => void> = [];
    const fetch = () => {
      fetches += 1;
      return new Promise<NodeEntry[]>((resolve) => gates.push(resolve));
    };
    const first = cache.load('ann', 'f', fetch);
    const second = cache.load('ann', 'f', fetch);
    expect(fetches).toBe(1);
    cache.forget('f');
    // The write came after the first fetch started: its answer may lack it, so a new one runs.
    const third = cache.load('ann', 'f', fetch);
    expect(fetches).toBe(2);
    gates[0]?.([file('1', 'old.txt')]);
    gates[1]?.([file('1', 'old.txt'), file('2', 'new.txt')]);
    expect((await first).entries.map((e) => e.name)).toEqual(['old.txt']);
    expect(await second).toBe(await first);
    expect((await third).entries.map((e) => e.name)).toEqual(['old.txt', 'new.txt']);
    // Remembered: the next load is a hit, no fetch.
    expect((await cache.load('ann', 'f', fetch)).entries).toHaveLength(2);
    expect(fetches).toBe(2);
  });

  describe('upsert', () => {
    it('adds a new entry and replaces one with the same id, in every user’s listing', () => {
      const cache = newCache();
      cache.remember('ann', 'f', [file('1', 'a.txt'), file('2', 'b.txt')]);
      cache.remember('bob', 'f', [file('1', 'a.txt'), file('2', 'b.txt')]);
      cache.upsert('f', file('3', 'c.txt'));
      cache.upsert('f', file('1', 'a.txt', 99));
      for (const user of ['ann', 'bob']) {
        const listing = cache.listing(user, 'f');
        expect(listing?.entries.map((e) => [e.id, e.sizeBytes])).toEqual([
          ['1', 99],
          ['2', 1],
          ['3', 1],
        ]);
        expect(listing?.byName.get('a.txt')?.sizeBytes).toBe(99);
        expect(listing?.byName.get('c.txt')?.id).toBe('3');
      }
    });

    it('patches only listings that were current: an outdated one stays outdated', () => {
      const cache = newCache();
      cache.remember('ann', 'f', [file('1', 'a.txt')]);
      cache.forget('f');
      cache.upsert('f', file('2', 'b.txt'));
      expect(cache.listing('ann', 'f')).toBeUndefined();
    });

    it('finds NFD names under their NFC form', () => {
      const cache = newCache();
      cache.remember('ann', 'f', []);
      cache.upsert('f', file('1', 'cafe\u0301.txt'));
      expect(cache.listing('ann', 'f')?.byName.get('caf\u00e9.txt')?.id).toBe('1');
    });

    it('keeps names unique when the entry takes a name another entry has', () => {
      const cache = newCache();
      cache.remember('ann', 'f', [file('aaaaaaaa-1', 'a.txt')]);
      cache.upsert('f', file('bbbbbbbb-2', 'a.txt'));
      expect(names(cache, 'ann', 'f')).toEqual(['a.txt', 'a (bbbbbbbb).txt']);
    });

    it('drops the old name of an entry that comes back renamed', () => {
      const cache = newCache();
      cache.remember('ann', 'f', [file('1', 'old.txt'), file('2', 'other.txt')]);
      cache.upsert('f', file('1', 'new.txt'));
      const listing = cache.listing('ann', 'f');
      expect(listing?.entries.map((e) => e.name)).toEqual(['other.txt', 'new.txt']);
      expect(listing?.byName.has('old.txt')).toBe(false);
    });
  });
});

describe('onStale', () => {
  it('reports a listing that is replaced, patched in place, or cleared, and nothing else', () => {
    const stale: Listing[] = [];
    const cache = newCache((listing) => stale.push(listing));
    const first = cache.remember('ann', 'f', [file('1', 'a.txt')]);
    const other = cache.remember('ann', 'g', [file('2', 'b.txt')]);
    expect(stale).toEqual([]);

    const second = cache.remember('ann', 'f', [file('1', 'a.txt'), file('3', 'c.txt')]);
    expect(stale).toEqual([first]);

    cache.upsert('f', file('4', 'd.txt'));
    expect(stale).toEqual([first, second]);
    expect(cache.listing('ann', 'f')).toBe(second);

    cache.close();
    expect(stale.slice(0, 2)).toEqual([first, second]);
    expect(new Set(stale.slice(2))).toEqual(new Set([second, other]));
    expect(stale).toHaveLength(4);
  });
});

describe('expiry', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('purges expired listings once per TTL, without a lookup, and reports them stale', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const clock = new ManualClock();
    clock.freeze();
    const stale: Listing[] = [];
    const cache = new MetadataCache({ ttlMs: 5000, maxEntries: 100, now: () => clock.now(), onStale: (listing) => stale.push(listing) });
    opened.push(cache);
    const old = cache.remember('ann', 'f', [file('1', 'a.txt')]);
    clock.advance(3000);
    const fresh = cache.remember('ann', 'g', [file('2', 'b.txt')]);
    vi.advanceTimersByTime(5000);
    expect(stale).toEqual([]);

    clock.advance(2001);
    vi.advanceTimersByTime(5000);
    expect(stale).toEqual([old]);
    expect(cache.listing('ann', 'g')).toBe(fresh);
  });
});

describe('uniqueNames', () => {
  it('keeps the first by id and suffixes the others with their id, whatever the order received', () => {
    const a = file('b2c3d4e5-x', 'report.pdf');
    const b = file('a1b2c3d4-y', 'report.pdf');
    const c = file('c3d4e5f6-z', 'Report.pdf');
    expect(uniqueNames([a, b, c]).map((e) => e.name)).toEqual(['report (b2c3d4e5).pdf', 'report.pdf', 'Report.pdf']);
    expect(uniqueNames([b, a, c]).map((e) => e.name)).toEqual(['report.pdf', 'report (b2c3d4e5).pdf', 'Report.pdf']);
  });
});

describe('tree versions above a change', () => {
  const dir = (id: string, name: string): NodeEntry => ({ id: id as NodeId, name, kind: 'folder', sizeBytes: 0, updatedMs: 1, isStarred: false, treeEtag: `${id}-1` });

  it('a change in a folder makes every listing above it tree-stale: a walk still uses them, a tree-fresh read does not', () => {
    const cache = newCache();
    cache.remember('u', 'root', [dir('top', 'home')]);
    cache.remember('u', 'top', [dir('a', 'a')]);
    cache.remember('u', 'a', [dir('b', 'b')]);
    cache.remember('u', 'b', [file('f', 'f.txt')]);
    cache.upsert('b', file('g', 'g.txt'));
    for (const folder of ['root', 'top', 'a']) {
      expect(cache.listing('u', folder), folder).toBeUndefined();
      expect(cache.listing('u', folder, true), folder).toBeDefined();
    }
    expect(cache.listing('u', 'b')?.entries.map((e) => e.name)).toEqual(['f.txt', 'g.txt']);
  });

  it('forgetTree marks the folder named and those above; folders beside keep fresh listings', () => {
    const cache = newCache();
    cache.remember('u', 'root', [dir('top', 'home')]);
    cache.remember('u', 'top', [dir('a', 'a'), dir('other', 'other')]);
    cache.remember('u', 'other', [file('x', 'x.txt')]);
    cache.remember('u', 'a', []);
    cache.forgetTree('top');
    expect(cache.listing('u', 'top')).toBeUndefined();
    expect(cache.listing('u', 'root')).toBeUndefined();
    expect(cache.listing('u', 'other')).toBeDefined();
    expect(cache.listing('u', 'a')).toBeDefined();
  });
});
