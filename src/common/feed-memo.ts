/**
 * Answers read from the database, kept in memory while a change feed (change-feed.ts) listens and
 * dropped, all at once, by every change that concerns them: what several instances over
 * PostgreSQL use to skip a round trip that almost always answers the same (is anything locked?
 * is this session live?).
 *
 * Sound for a caller that first waited for the feed to settle (settled(): every change committed
 * before the request began has arrived, so has dropped what it changed; the bridge does this for
 * every DAV request), and that drops the memo itself after its own writes (drop()). An answer is
 * kept only when no change arrived while it was read (the generation), so a read that raced a
 * change cannot keep the old answer. While the feed does not listen nothing is kept and every
 * call reads; `ttlMs` bounds what a feed that died silently (until its ping notices) could leave.
 */
import { LRUCache } from 'lru-cache';
import type { ChangeFeed, StoreChange } from './change-feed.js';

export interface FeedMemoOptions {
  /** Answers kept at most. */
  max: number;
  /** Longest an answer is kept (ms). */
  ttlMs: number;
}

export class FeedMemo<V extends NonNullable<unknown>> {
  private generation = 0;
  private readonly ttlMs: number;
  private readonly answers: LRUCache<string, V>;

  constructor(
    private readonly feed: ChangeFeed,
    concerns: (change: StoreChange) => boolean,
    options: FeedMemoOptions,
  ) {
    this.ttlMs = options.ttlMs;
    this.answers = new LRUCache<string, V>({ max: options.max, ttl: options.ttlMs });
    feed.subscribe((change) => {
      if (change.everything || concerns(change)) this.drop();
    });
  }

  /** Forgets every answer (a write of the caller's own, or a change announced). */
  drop(): void {
    this.generation += 1;
    this.answers.clear();
  }

  /**
   * The answer kept for `key`, or `read()`'s, kept when `keep` allows it (a miss that a later
   * insert would not announce must not be kept) and nothing changed meanwhile.
   */
  async get<R extends V | undefined>(key: string, read: () => Promise<R>, keep: (value: V) => boolean = () => true): Promise<R> {
    if (!this.feed.listening) return read();
    const known = this.answers.get(key);
    if (known !== undefined) return known as R;
    const generation = this.generation;
    const started = performance.now();
    const value = await read();
    // The answer's age counts from when it was read, not from when it arrived.
    const ttl = this.ttlMs - (performance.now() - started);
    if (value !== undefined && keep(value) && ttl > 0 && generation === this.generation && this.feed.listening) this.answers.set(key, value, { ttl });
    return value;
  }
}
