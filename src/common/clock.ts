/** Time source, injectable so tests can move time (token expiry, rate limits) without sleeping. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests can advance by hand; starts at the real time. */
export class ManualClock implements Clock {
  private offsetMs = 0;
  private frozenAtMs: number | undefined;
  now(): number {
    return (this.frozenAtMs ?? Date.now()) + this.offsetMs;
  }
  /** Stops real time from moving this clock, so a test can stand exactly n ms before a deadline. */
  freeze(): void {
    this.frozenAtMs ??= Date.now();
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}
