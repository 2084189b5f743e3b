/**
 * Whether the store answers one of driveway's extension routes (docs/extensions.md), learned once
 * per store and kept for the life of the bridge: a foreign server of the interface may lack any
 * of them, and the bridge then falls back to what SPEC shows. Owns only that knowledge; what a
 * refusal means and how to ask is the caller's (tree/grants.ts: myaccess; tree/revisions.ts: the revision route).
 */
import type { StoreError } from '../store-client/index.js';

export class ExtensionRoute {
  private state: 'unknown' | 'present' | 'absent' = 'unknown';
  /** The one question under way to learn it (parallel callers share it). */
  private question: Promise<boolean> | undefined;

  /** `onAbsent` runs once, when the route is first found missing (a log line). */
  constructor(private readonly onAbsent: () => void) {}

  get isAbsent(): boolean {
    return this.state === 'absent';
  }

  /** The route answered. */
  markPresent(): void {
    this.state = 'present';
  }

  /**
   * After a refusal that may mean the route is missing: whether it is there. driveway's store
   * names a route it lacks (`not_implemented`, e.g. edition 1.0); of another server `probe`
   * decides. A failure of the probe (store unreachable) decides nothing and is thrown.
   */
  async learn(refusal: StoreError, probe: () => Promise<boolean>): Promise<boolean> {
    if (this.state !== 'unknown') return this.state === 'present';
    let present: boolean;
    if (refusal.code === 'not_implemented') present = false;
    else {
      this.question ??= probe().finally(() => {
        this.question = undefined;
      });
      present = await this.question;
    }
    if (this.state === 'unknown' && !present) this.onAbsent();
    this.state = present ? 'present' : 'absent';
    return present;
  }
}
