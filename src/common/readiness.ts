/**
 * Liveness and readiness of one listener (the store's or the bridge's), for a load balancer:
 * `GET /healthz` says the process answers; `GET /readyz` says whether it can serve, that is
 * whether every dependency it cannot serve without answers a cheap probe (the database a
 * `SELECT 1`, a foreign store a request) and the instance is not draining. A dependency whose loss
 * only degrades it (the blob backend: listings, moves and small files held in their rows still
 * work while S3 is away) is probed too and named, but keeps /readyz at 200: every instance shares
 * it, so a balancer that took them all out would turn a partial outage into a full one.
 *
 * A balancer may poll often: one probe round runs at a time, each probe is bounded by a timeout,
 * and its result is reused for `cacheMs`. Answers name what is down and nothing else (no
 * versions, paths, URLs or error texts: those go to the log).
 */
import type { Logger } from './logger.js';

export interface ReadinessCheck {
  /** What the answer names: `database`, `blobs`, `store`, `state`. */
  name: string;
  /**
   * What its loss means: `down` (the default) makes /readyz 503; `degraded` leaves it 200 and
   * names the check in `degraded` (the instance still serves much of what it serves).
   */
  whenDown?: 'down' | 'degraded';
  /** Resolves when the dependency answered; throws (or is aborted) when it did not. */
  probe(signal: AbortSignal): Promise<void>;
}

export interface ReadinessReport {
  ready: boolean;
  draining: boolean;
  checks: Record<string, 'up' | 'down'>;
  /** Checks that are down without making the instance unready (`whenDown: 'degraded'`). */
  degraded: string[];
}

export interface HealthAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** How long a 503 of /readyz (and of a request refused while unavailable) asks clients to wait. */
export const RETRY_AFTER_SEC = 5;

export interface ReadinessOptions {
  /** How long one probe round is reused (default 1 s). */
  cacheMs?: number;
  /** How long one probe may take before it counts as down (default 2 s). */
  timeoutMs?: number;
  log?: Logger;
  now?: () => number;
}

export class Readiness {
  private isDraining = false;
  private cached: { report: ReadinessReport; atMs: number } | undefined;
  private running: Promise<ReadinessReport> | undefined;
  private readonly cacheMs: number;
  private readonly timeoutMs: number;
  private readonly now: () => number;

  constructor(
    readonly checks: readonly ReadinessCheck[],
    private readonly options: ReadinessOptions = {},
  ) {
    this.cacheMs = options.cacheMs ?? 1000;
    this.timeoutMs = options.timeoutMs ?? 2000;
    this.now = options.now ?? Date.now;
  }

  /** From now on /readyz answers 503 (the instance is stopping); there is no way back. */
  startDraining(): void {
    this.isDraining = true;
  }

  get draining(): boolean {
    return this.isDraining;
  }

  async report(): Promise<ReadinessReport> {
    const cached = this.cached;
    const checks = cached && this.now() - cached.atMs < this.cacheMs ? cached.report.checks : (await this.probeAll()).checks;
    return this.reportOf(checks);
  }

  private reportOf(checks: Record<string, 'up' | 'down'>): ReadinessReport {
    const isDown = (check: ReadinessCheck): boolean => checks[check.name] === 'down';
    const essentialDown = this.checks.some((check) => isDown(check) && (check.whenDown ?? 'down') === 'down');
    const degraded = this.checks.filter((check) => isDown(check) && check.whenDown === 'degraded').map((check) => check.name);
    return { ready: !this.isDraining && !essentialDown, draining: this.isDraining, checks, degraded };
  }

  private probeAll(): Promise<ReadinessReport> {
    this.running ??= this.runProbes().finally(() => (this.running = undefined));
    return this.running;
  }

  private async runProbes(): Promise<ReadinessReport> {
    const results = await Promise.all(
      this.checks.map(async (check): Promise<[string, 'up' | 'down']> => {
        const signal = AbortSignal.timeout(this.timeoutMs);
        try {
          await Promise.race([
            check.probe(signal),
            new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error(`no answer within ${this.timeoutMs} ms`)), { once: true })),
          ]);
          return [check.name, 'up'];
        } catch (err) {
          // Once when it goes down, not once per poll (a balancer polls every few seconds).
          if (this.cached?.report.checks[check.name] !== 'down') {
            this.options.log?.warn({ check: check.name, cause: err instanceof Error ? err.message : String(err) }, 'readiness probe failed');
          }
          return [check.name, 'down'];
        }
      }),
    );
    for (const [name, state] of results) {
      if (state === 'up' && this.cached?.report.checks[name] === 'down') this.options.log?.info({ check: name }, 'readiness probe answers again');
    }
    const report = this.reportOf(Object.fromEntries(results));
    this.cached = { report, atMs: this.now() };
    return report;
  }
}

const JSON_HEADERS = { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' };

/** `/healthz`: the process answers. */
export function livenessAnswer(): HealthAnswer {
  return { statusCode: 200, headers: JSON_HEADERS, body: JSON.stringify({ status: 'success', msg: 'alive' }) };
}

/**
 * `/readyz`: 200 when ready (`degraded` naming what is down without making it unready, and `msg`
 * saying so), else 503 with Retry-After naming what is down (or that it drains).
 */
export function readinessAnswer(report: ReadinessReport): HealthAnswer {
  if (report.ready) {
    const msg = report.degraded.length > 0 ? `ready, degraded (down: ${report.degraded.join(', ')})` : 'ready';
    return { statusCode: 200, headers: JSON_HEADERS, body: JSON.stringify({ status: 'success', msg, degraded: report.degraded, checks: report.checks }) };
  }
  const down = Object.entries(report.checks)
    .filter(([, state]) => state === 'down')
    .map(([name]) => name);
  const reasons = [...(report.draining ? ['shutting down'] : []), ...(down.length > 0 ? [`down: ${down.join(', ')}`] : [])];
  return {
    statusCode: 503,
    headers: { ...JSON_HEADERS, 'Retry-After': String(RETRY_AFTER_SEC) },
    body: JSON.stringify({ status: 'error', msg: `not ready (${reasons.join('; ')})`, code: 'unavailable', draining: report.draining, degraded: report.degraded, checks: report.checks }),
  };
}
