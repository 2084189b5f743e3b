/**
 * How many bulk uploads (bulk.ts) run at once: each may hold up to BULK_LIMITS.memoryBytes in
 * memory and stage its large parts on disk while it reads its body, so they are bounded per user
 * and in all. One past a bound waits for a slot without reading its body (the connection holds
 * it: TCP's own backpressure, no memory): nextcloudcmd 3.7 has many bulk requests under way in
 * one first sync and fails that sync on a 503 (test/clients/sync-clients.test.ts). Past a bound
 * of waiting requests too, it is refused at once with 503 and Retry-After.
 */
export const BULK_CONCURRENCY = {
  /** Bulk uploads of one user reading their bodies at once. */
  perUser: 2,
  /** Bulk uploads reading their bodies at once in all (16 MiB of memory each at most). */
  total: 16,
  /** Bulk uploads of one user waiting for a slot; one more is refused 503. */
  waitingPerUser: 64,
} as const;

type Leave = () => void;

export class BulkGate {
  private readonly running = new Map<string, number>();
  private readonly waiting: Array<{ userId: string; admit: (leave: Leave) => void }> = [];
  private readonly waitingOf = new Map<string, number>();
  private all = 0;

  constructor(private readonly bounds: { perUser: number; total: number; waitingPerUser: number } = BULK_CONCURRENCY) {}

  /**
   * A slot for `userId`'s bulk upload: the function that gives it back (call it once), at once
   * or when one frees; undefined at once when too many of this user's already wait. `cancelled`
   * (the client went away while waiting) takes the request out of the queue.
   */
  enter(userId: string, cancelled?: AbortSignal): Promise<Leave | undefined> {
    if (this.free(userId) && !this.waiting.some((w) => w.userId === userId)) return Promise.resolve(this.take(userId));
    const queued = this.waitingOf.get(userId) ?? 0;
    if (queued >= this.bounds.waitingPerUser) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const entry = { userId, admit: (leave: Leave) => resolve(leave) };
      this.waiting.push(entry);
      this.waitingOf.set(userId, queued + 1);
      cancelled?.addEventListener(
        'abort',
        () => {
          const at = this.waiting.indexOf(entry);
          if (at === -1) return;
          this.waiting.splice(at, 1);
          this.unqueue(userId);
          resolve(undefined);
        },
        { once: true },
      );
    });
  }

  private free(userId: string): boolean {
    return (this.running.get(userId) ?? 0) < this.bounds.perUser && this.all < this.bounds.total;
  }

  private unqueue(userId: string): void {
    const left = (this.waitingOf.get(userId) ?? 1) - 1;
    if (left > 0) this.waitingOf.set(userId, left);
    else this.waitingOf.delete(userId);
  }

  private take(userId: string): Leave {
    this.running.set(userId, (this.running.get(userId) ?? 0) + 1);
    this.all++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.all--;
      const now = (this.running.get(userId) ?? 1) - 1;
      if (now > 0) this.running.set(userId, now);
      else this.running.delete(userId);
      this.admitNext();
    };
  }

  /** The first waiting request (in arrival order) whose user has a slot now. */
  private admitNext(): void {
    for (let i = 0; i < this.waiting.length; i++) {
      const next = this.waiting[i] as (typeof this.waiting)[number];
      if (!this.free(next.userId)) {
        if (this.all >= this.bounds.total) return;
        continue;
      }
      this.waiting.splice(i, 1);
      this.unqueue(next.userId);
      next.admit(this.take(next.userId));
      return;
    }
  }
}
