/**
 * The PostgreSQL change feed (common/change-feed.ts): one dedicated connection per instance that
 * LISTENs on the channel the triggers of migration 014 notify, outside the pool so a busy pool
 * never delays it. When that connection fails (the server restarted, the network broke) it is
 * opened again with a growing pause, and the first message after every (re)connection says
 * "everything": notifications sent while nobody listened are lost, so every cache starts over.
 * A ping every `pingMs` notices a connection that died silently.
 *
 * settled() is a barrier: the connection notifies itself on a channel of its own and waits for
 * that message. PostgreSQL delivers notifications in the order their transactions committed, so
 * when the barrier's comes back, every change committed before it was sent has been handed to
 * the subscribers. Callers that arrive while a barrier is out share the next one (it must start
 * after they asked), so the database sees at most two barriers at a time whatever the request rate.
 *
 * A notification carries the backend process id that sent it; those of this instance's own pool
 * are this instance's, and of those, folder announcements the bridge's transactions made (`~`,
 * migration 038) are marked `local` (the bridge in this process already updated its caches for
 * its own writes): common/change-feed.ts parseChange.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { CHANGE_CHANNEL, parseChange, type ChangeFeed, type StoreChange, type StoreChangeListener } from '../../../common/change-feed.js';

export interface PostgresChangeFeedOptions {
  /** Backend process ids of this instance's pool. */
  ownBackends: ReadonlySet<number>;
  /** First pause before reconnecting (ms, default 100); doubles up to `maxBackoffMs`. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** How often the idle connection is checked (ms, default 10000). */
  pingMs?: number;
  /**
   * Longest wait of settled() (ms, default 1000): past it the caller goes on, and every
   * subscriber is told "everything" first (its caches may have missed a change).
   */
  settleTimeoutMs?: number;
  /** A ping unanswered this long (ms, default 5000) ends the connection (then reconnects). */
  pingTimeoutMs?: number;
  /**
   * Told once when the connection is lost (or the first one cannot be made), and once when it
   * listens again after that (logging): not on every attempt in between, nor on the first connection.
   */
  onState?: (state: 'listening' | 'lost', err?: unknown) => void;
}

/** How the listening connection shows in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'driveway-change-feed';

const EVERYTHING: StoreChange = { folders: [], everything: true, properties: true, locks: true, sessions: true, local: false };

export class PostgresChangeFeed implements ChangeFeed {
  private readonly listeners = new Set<StoreChangeListener>();
  private client: pg.Client | undefined;
  private started = false;
  private closed = false;
  private attempt = 0;
  /** What onState was last told (`idle`: nothing yet). */
  private reported: 'idle' | 'listening' | 'lost' = 'idle';
  private retryTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  /** This instance's own channel for barriers. */
  private readonly barrierChannel = `driveway_barrier_${randomBytes(8).toString('hex')}`;
  private barriers = 0;
  private readonly waiting = new Map<string, () => void>();
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  constructor(
    private readonly url: string,
    private readonly options: PostgresChangeFeedOptions,
  ) {}

  /** Listening starts with the first subscriber. */
  subscribe(listener: StoreChangeListener): () => void {
    this.listeners.add(listener);
    if (!this.started && !this.closed) {
      this.started = true;
      void this.connect();
    }
    return () => this.listeners.delete(listener);
  }

  /** True while the connection listens (tests, /readyz). */
  get listening(): boolean {
    return this.client !== undefined;
  }

  private emit(change: StoreChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch {
        // A listener's failure is its own; the others still hear.
      }
    }
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.url, keepAlive: true, connectionTimeoutMillis: 5000, application_name: LISTENER_APPLICATION_NAME });
    let failed = false;
    const fail = (err?: unknown): void => {
      if (failed) return;
      failed = true;
      if (this.client === client) this.client = undefined;
      clearInterval(this.pingTimer);
      client.removeAllListeners('notification');
      this.releaseWaiters();
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.report('lost', err);
      this.scheduleRetry();
    };
    client.on('error', fail);
    client.on('end', () => fail());
    client.on('notification', (message) => {
      if (message.channel === this.barrierChannel) {
        this.waiting.get(message.payload ?? '')?.();
        return;
      }
      if (message.channel !== CHANGE_CHANNEL) return;
      this.emit(parseChange(message.payload ?? '', this.options.ownBackends.has(message.processId)));
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGE_CHANNEL}`);
      await client.query(`LISTEN ${this.barrierChannel}`);
    } catch (err) {
      fail(err);
      return;
    }
    if (this.closed || failed) {
      client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.attempt = 0;
    this.report('listening');
    // Whatever was cached before this connection listened may have missed a notification.
    this.emit(EVERYTHING);
    this.pingTimer = setInterval(() => {
      // A socket that died silently never fails a query (TCP gives up after many minutes): a
      // ping unanswered for pingTimeoutMs ends the connection, and with it every memory kept.
      const silence = setTimeout(() => fail(new Error('the change feed connection did not answer its ping')), this.options.pingTimeoutMs ?? 5000);
      client.query('SELECT 1').then(() => clearTimeout(silence), (err: unknown) => {
        clearTimeout(silence);
        fail(err);
      });
    }, this.options.pingMs ?? 10_000);
    this.pingTimer.unref();
  }

  /** Tells onState of a change of state, not of a repeat (a failed reconnection after a loss). */
  private report(state: 'listening' | 'lost', err?: unknown): void {
    const previous = this.reported;
    if (previous === state) return;
    this.reported = state;
    if (previous === 'idle' && state === 'listening') return;
    this.options.onState?.(state, err);
  }

  settled(): Promise<void> {
    if (!this.client) return Promise.resolve();
    if (!this.running) return this.barrier();
    this.queued ??= this.running.then(() => {
      this.queued = undefined;
      return this.barrier();
    });
    return this.queued;
  }

  private barrier(): Promise<void> {
    const client = this.client;
    if (!client) return Promise.resolve();
    const id = String(++this.barriers);
    const done = new Promise<void>((resolve) => {
      // Not settled after all (too slow, or the NOTIFY failed): what the subscribers keep may
      // miss changes committed before the callers arrived, so it all goes before they go on.
      const unsettled = (): void => {
        this.waiting.delete(id);
        this.emit(EVERYTHING);
        resolve();
      };
      const timer = setTimeout(unsettled, this.options.settleTimeoutMs ?? 1000);
      this.waiting.set(id, () => {
        clearTimeout(timer);
        resolve();
      });
      // Prepared once per connection: the barrier is every DAV request's one round trip when its answers are in memory.
      client.query({ name: 'driveway_barrier', text: 'SELECT pg_notify($1, $2)', values: [this.barrierChannel, id] }).catch(() => {
        clearTimeout(timer);
        unsettled();
      });
    }).finally(() => {
      this.waiting.delete(id);
      if (this.running === done) this.running = undefined;
    });
    this.running = done;
    return done;
  }

  /** The connection is gone: nobody waits for a barrier that cannot come back. */
  private releaseWaiters(): void {
    for (const release of [...this.waiting.values()]) release();
  }

  private scheduleRetry(): void {
    const min = this.options.minBackoffMs ?? 100;
    const delay = Math.min(this.options.maxBackoffMs ?? 5000, min * 2 ** this.attempt);
    this.attempt += 1;
    this.retryTimer = setTimeout(() => void this.connect(), delay);
    this.retryTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    this.listeners.clear();
    this.releaseWaiters();
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
    }
  }
}
