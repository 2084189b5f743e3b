/**
 * How many bulk uploads (bulk.ts) run at once: each may hold up to BULK_LIMITS.memoryBytes in
 * memory and stage its large parts on disk while it reads its body, so they are bounded per user
 * and in all. One past a bound is not queued (its body would wait on an open connection): it is
 * refused at once with 503 and Retry-After, which the desktop client retries.
 */
export const BULK_CONCURRENCY = {
  /** Bulk uploads of one user at once (the desktop sends them one after another). */
  perUser: 2,
  /** Bulk uploads at once in all (16 MiB of memory each at most). */
  total: 16,
} as const;

export class BulkGate {
  private readonly running = new Map<string, number>();
  private all = 0;

  constructor(private readonly bounds: { perUser: number; total: number } = BULK_CONCURRENCY) {}

  /** A slot for `userId`'s bulk upload: the function that gives it back (call it once), or undefined when a bound is reached. */
  enter(userId: string): (() => void) | undefined {
    const mine = this.running.get(userId) ?? 0;
    if (mine >= this.bounds.perUser || this.all >= this.bounds.total) return undefined;
    this.running.set(userId, mine + 1);
    this.all++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.all--;
      const now = (this.running.get(userId) ?? 1) - 1;
      if (now > 0) this.running.set(userId, now);
      else this.running.delete(userId);
    };
  }
}
