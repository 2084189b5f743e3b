/**
 * Push for the Nextcloud clients, speaking notify_push's protocol (docs/client-quirks.md "Push")
 * on the bridge's own listener: a websocket at `/push/ws` (server.ts hands it the `upgrade`), and
 * `POST /index.php/apps/notify_push/pre_auth` for a token. What changed comes from the store's
 * change feed (common/change-feed.ts), so a write through any instance reaches a socket held by
 * any other; no Redis, no daemon.
 *
 * The protocol (nextcloud/notify_push src/connection.rs, src/message.rs): the client sends two
 * text messages, a username and a password (an app password), or an empty username and a pre-auth
 * token; the server answers `authenticated` or `err: Invalid credentials`. Then the server sends
 * `notify_file` (or `notify_file_id [ids]` once the client said `listen notify_file_id`),
 * `notify_activity` and `notify_notification`, each kind held back as notify_push holds it: sent
 * once nothing more of that kind came for 100 ms, and not sooner than its debounce time after the
 * last one (files and activities: 1 s, growing with the instance's sockets by one second per ten
 * up to `bridge.pushMaxDebounceSec`, times a factor between 0.5 and 1.5 drawn per socket;
 * notifications 1 s). Ids of one kind held back merge. A ping goes to a socket silent for
 * `bridge.pushPingSec`; one not answered by the next is closed.
 *
 * Who is told: a change names the folders whose listings changed and the top-level folders above
 * them (`home:<owner>`, `incoming:<owner>`); a socket's user is told when the owner is the user
 * or a group the user belongs to (their drives are what the client syncs: tree/client-view.ts).
 * `everything` (shares, memberships, a reconnected feed) tells every socket, and reloads groups.
 *
 * Authentication is the bridge's own (sessions.ts): the same session pool and login limiter, a
 * refused login counted and logged as for a DAV request. A socket closes when its user's session
 * ends (StoreChange.sessions, and every `bridge.pushSessionCheckSec`: a changed password, a
 * revoked app password). Bounded: sockets per user and per address, 4 KiB per client message,
 * an outgoing buffer past 64 KiB closes the socket (a client that does not read).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ChangeFeed, StoreChange } from '../../common/change-feed.js';
import { addressBlock } from '../../common/client-ip.js';
import type { Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import type { FileIdRepository } from '../../contracts/file-ids.js';
import type { PushTokenRepository } from '../../contracts/push-tokens.js';
import { StoreError, type NodeId, type StoreClient } from '../../store-client/contract.js';
import { AuthenticationFailed, parseBasic, type BridgeUser, type Credentials } from '../sessions.js';
import { withSession } from '../tree/context.js';
import type { OcsValue } from './ocs-envelope.js';

export const PUSH_SOCKET_PATH = '/push/ws';
export const PRE_AUTH_PATH = '/index.php/apps/notify_push/pre_auth';

/** notify_push's: a token not used within 15 s is gone. */
const PRE_AUTH_TTL_MS = 15_000;
/** notify_push's: two messages within 15 s, or `Authentication timeout`. */
const AUTH_TIMEOUT_MS = 15_000;
/** A kind is sent once nothing more of it came for this long (notify_push's 100 ms). */
const QUIET_MS = 100;
/** Past this many bytes not yet written to a client, it is not reading: closed. */
const MAX_BUFFERED_BYTES = 64 * 1024;
/** Ids one held-back notify_file_id carries; more and it becomes a plain notify_file. */
const MAX_IDS = 64;
/** Top-level folders whose changes the clients sync (tree/client-view.ts VIEW_DRIVES). */
const SYNCED_TOPS = new Set(['home', 'incoming']);

export interface PushLimits {
  maxSocketsPerUser: number;
  maxSocketsPerAddress: number;
  pingMs: number;
  maxDebounceSec: number;
  sessionCheckMs: number;
}

export interface PushDoorOptions {
  client: StoreClient;
  feed: ChangeFeed;
  tokens: PushTokenRepository;
  /** The bridge's numbers of what the store numbers not (top-level folders). */
  fileIds: FileIdRepository;
  clock: Clock;
  log: Logger;
  limits: PushLimits;
  /** The bridge's Basic authentication: the session pool and its limiter (a refusal is counted and logged there). */
  login(credentials: Credentials, address: string, userAgent: string | undefined): Promise<BridgeUser>;
  /** The caller of an HTTP request (pre_auth), as for DAV. */
  authenticate(req: IncomingMessage): Promise<BridgeUser | undefined>;
  /** The client's address (behind a trusted proxy, the one it forwards). */
  addressOf(req: IncomingMessage): string;
}

type Kind = 'file' | 'activity' | 'notification';
const KINDS: readonly Kind[] = ['file', 'activity', 'notification'];

/** One kind held back on a socket: notify_push's SendQueueItem. */
interface Slot {
  pending: boolean;
  /** Numeric ids gathered; undefined once one change named none (then a plain notify_file). */
  ids: Set<number> | undefined;
  receivedMs: number;
  sentMs: number;
}

interface Client {
  ws: WebSocket;
  address: string;
  user?: Watcher;
  listensFileIds: boolean;
  debounceFactor: number;
  slots: Record<Kind, Slot>;
  timer: NodeJS.Timeout | undefined;
  lastSendMs: number;
  awaitingPong: boolean;
}

/** One user's sockets on this instance, and what they watch. */
interface Watcher {
  readonly userId: string;
  readonly user: BridgeUser;
  readonly clients: Set<Client>;
  /** The user and their groups: owners of the drives they sync. */
  owners: Set<string>;
}

/** Sealing what a pre-auth token opens: AES-256-GCM under a key derived from the token. */
function tokenKeys(token: string): { key: string; sealKey: Buffer } {
  return {
    key: createHash('sha256').update(`key:${token}`).digest('hex'),
    sealKey: createHash('sha256').update(`seal:${token}`).digest(),
  };
}

function seal(text: string, sealKey: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey, iv);
  const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

function open(sealed: string, sealKey: Buffer): string | undefined {
  try {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', sealKey, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/** The owner of a top-level folder key (`home:<owner>`) the clients sync; undefined for anything else. */
function syncedOwnerOf(key: string): string | undefined {
  const colon = key.indexOf(':');
  if (colon <= 0 || !SYNCED_TOPS.has(key.slice(0, colon))) return undefined;
  return key.slice(colon + 1);
}

export class PushDoor {
  private readonly server = new WebSocketServer({ noServer: true, maxPayload: 4096, perMessageDeflate: false, clientTracking: false });
  private readonly watchers = new Map<string, Watcher>();
  private readonly perAddress = new Map<string, number>();
  private readonly clients = new Set<Client>();
  /** Numeric ids of nodes, once learnt (they never change), by user and node: learnt through that user's own lookup. */
  private readonly numbers = new Map<string, number>();
  private readonly unsubscribe: () => void;
  private readonly ticker: NodeJS.Timeout;
  private lastSessionCheckMs: number;
  private closed = false;

  constructor(private readonly options: PushDoorOptions) {
    this.unsubscribe = options.feed.subscribe((change) => this.onChange(change));
    this.lastSessionCheckMs = options.clock.now();
    // One timer for every socket's ping, not one each: 1,000 idle sockets cost one interval.
    this.ticker = setInterval(() => this.tick(), Math.min(options.limits.pingMs, options.limits.sessionCheckMs, 5000) / 2);
    this.ticker.unref();
  }

  /** notify_push's capability, for the OCS capabilities (ocs.ts). */
  capability(base: string): OcsValue {
    const root = base.replace(/\/+$/, '');
    return {
      type: ['files', 'activities', 'notifications'],
      endpoints: { websocket: `${root.replace(/^http/, 'ws')}${PUSH_SOCKET_PATH}`, pre_auth: `${root}${PRE_AUTH_PATH}` },
    };
  }

  /** Whether an upgrade request is for this door. */
  servesUpgrade(req: IncomingMessage): boolean {
    return (req.url ?? '').split('?')[0] === PUSH_SOCKET_PATH;
  }

  /** Whether an HTTP request is the pre-auth endpoint. */
  servesRequest(req: IncomingMessage): boolean {
    return (req.url ?? '').split('?')[0] === PRE_AUTH_PATH;
  }

  /** `POST pre_auth`: a token standing for the caller's credentials for 15 s, once. */
  async preAuth(req: IncomingMessage, res: ServerResponse): Promise<void> {
    req.resume();
    if (req.method !== 'POST') {
      res.writeHead(405, { Allow: 'POST', 'Content-Length': '0' }).end();
      return;
    }
    const credentials = parseBasic(req.headers.authorization);
    let user: BridgeUser | undefined;
    try {
      user = await this.options.authenticate(req);
    } catch (err) {
      if (!(err instanceof AuthenticationFailed)) throw err;
    }
    // Basic only: the token opens what the socket's own two messages would (a Bearer caller can send those).
    if (!user || !credentials) {
      res.writeHead(401, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': '0' }).end();
      return;
    }
    const token = randomBytes(24).toString('base64url');
    const { key, sealKey } = tokenKeys(token);
    const now = this.options.clock.now();
    await this.options.tokens.put({ key, sealed: seal(JSON.stringify(credentials), sealKey), expiresMs: now + PRE_AUTH_TTL_MS }, now);
    const body = Buffer.from(token, 'utf8');
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(body.length), 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
    res.end(body);
  }

  /**
   * The `upgrade` of `/push/ws`: bounded per address before the handshake (an IPv6 client by its
   * /64, as the login flows count: whoever holds one address holds its network's), then the two
   * messages.
   */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const address = addressBlock(this.options.addressOf(req));
    const count = this.perAddress.get(address) ?? 0;
    if (this.closed || count >= this.options.limits.maxSocketsPerAddress) {
      socket.end(`HTTP/1.1 ${this.closed ? '503 Service Unavailable' : '429 Too Many Requests'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    // Counted per TCP connection, until it closes (a handshake the library refuses included).
    this.perAddress.set(address, count + 1);
    socket.once('close', () => {
      const left = (this.perAddress.get(address) ?? 1) - 1;
      if (left <= 0) this.perAddress.delete(address);
      else this.perAddress.set(address, left);
    });
    this.server.handleUpgrade(req, socket, head, (ws) => this.accept(ws, req, address));
  }

  private accept(ws: WebSocket, req: IncomingMessage, address: string): void {
    const now = this.options.clock.now();
    const slot = (): Slot => ({ pending: false, ids: new Set(), receivedMs: 0, sentMs: -Infinity });
    const client: Client = {
      ws,
      address,
      listensFileIds: false,
      debounceFactor: 0.5 + Math.random(),
      slots: { file: slot(), activity: slot(), notification: slot() },
      timer: undefined,
      lastSendMs: now,
      awaitingPong: false,
    };
    this.clients.add(client);
    const lines: string[] = [];
    let authenticating = false;
    const authTimer = setTimeout(() => {
      if (client.user) return;
      ws.send('Authentication timeout');
      ws.close();
    }, AUTH_TIMEOUT_MS);
    ws.on('message', (data, isBinary) => {
      const text = isBinary ? undefined : data.toString('utf8');
      if (client.user) {
        if (text?.trim() === 'listen notify_file_id') client.listensFileIds = true;
        return;
      }
      if (authenticating) return;
      if (text === undefined) {
        this.refuse(ws, 'Invalid authentication message');
        return;
      }
      lines.push(text.trim());
      if (lines.length < 2) return;
      authenticating = true;
      clearTimeout(authTimer);
      void this.authenticateSocket(lines[0] as string, lines[1] as string, address, req.headers['user-agent']).then(
        (user) => this.admit(client, user),
        (err: unknown) => {
          if (!(err instanceof AuthenticationFailed)) this.options.log.warn({ err }, 'push socket authentication failed');
          this.refuse(ws, err instanceof AuthenticationFailed && err.reason === 'unavailable' ? 'Error while sending authentication request' : 'Invalid credentials');
        },
      );
    });
    ws.on('pong', () => {
      client.awaitingPong = false;
    });
    ws.on('error', () => ws.terminate());
    ws.on('close', () => {
      clearTimeout(authTimer);
      this.forget(client);
    });
  }

  private refuse(ws: WebSocket, message: string): void {
    if (ws.readyState === ws.OPEN) ws.send(`err: ${message}`);
    ws.close();
  }

  /** Username and password (an app password), or an empty username and a pre-auth token. */
  private async authenticateSocket(username: string, password: string, address: string, userAgent: string | undefined): Promise<BridgeUser> {
    if (username === '') {
      const { key, sealKey } = tokenKeys(password);
      const token = await this.options.tokens.take(key, this.options.clock.now());
      const opened = token ? open(token.sealed, sealKey) : undefined;
      if (opened === undefined) throw new AuthenticationFailed('bad-credentials');
      return this.options.login(JSON.parse(opened) as Credentials, address, userAgent);
    }
    return this.options.login({ username, password }, address, userAgent);
  }

  private async admit(client: Client, user: BridgeUser): Promise<void> {
    const { ws } = client;
    if (ws.readyState !== ws.OPEN) return;
    let watcher = this.watchers.get(user.userId);
    if (watcher && watcher.clients.size >= this.options.limits.maxSocketsPerUser) {
      // notify_push's words for it, after `authenticated` as it sends them.
      ws.send('authenticated');
      ws.send('Connection limit exceeded for user');
      ws.close();
      return;
    }
    if (!watcher) {
      watcher = { userId: user.userId, user, clients: new Set(), owners: new Set([user.userId]) };
      this.watchers.set(user.userId, watcher);
      await this.loadGroups(watcher);
      if (ws.readyState !== ws.OPEN) {
        if (watcher.clients.size === 0) this.watchers.delete(user.userId);
        return;
      }
    }
    watcher.clients.add(client);
    client.user = watcher;
    client.lastSendMs = this.options.clock.now();
    ws.send('authenticated');
  }

  /** The groups whose drives the user syncs (their drives' owner). */
  private async loadGroups(watcher: Watcher): Promise<void> {
    try {
      const groups = await withSession(watcher.user, (s) => this.options.client.listGroups(s));
      watcher.owners = new Set([watcher.userId, ...groups.map((g) => g.id)]);
    } catch (err) {
      if (err instanceof AuthenticationFailed || (err instanceof StoreError && err.kind === 'unauthenticated')) this.endUser(watcher);
      else this.options.log.warn({ err, user: watcher.user.name }, 'push: the groups of a user could not be read');
    }
  }

  private forget(client: Client): void {
    if (!this.clients.delete(client)) return;
    clearTimeout(client.timer);
    const watcher = client.user;
    if (watcher) {
      watcher.clients.delete(client);
      if (watcher.clients.size === 0 && this.watchers.get(watcher.userId) === watcher) this.watchers.delete(watcher.userId);
    }
  }

  /** A change from the feed: which users see it, then each of their sockets. */
  private onChange(change: StoreChange): void {
    if (this.watchers.size === 0) return;
    if (change.everything) {
      for (const watcher of this.watchers.values()) {
        this.tell(watcher, 'file', undefined);
        void this.loadGroups(watcher);
      }
    } else {
      const owners = new Set<string>();
      const folders: string[] = [];
      for (const key of [...change.folders, ...(change.trees ?? [])]) {
        const owner = syncedOwnerOf(key);
        if (owner !== undefined) owners.add(owner);
        else if (!key.includes(':')) folders.push(key);
      }
      if (owners.size > 0) {
        for (const watcher of this.watchers.values()) {
          if (![...owners].some((owner) => watcher.owners.has(owner))) continue;
          if ([...watcher.clients].some((c) => c.listensFileIds)) void this.tellWithIds(watcher, change.folders);
          else this.tell(watcher, 'file', undefined);
        }
      }
    }
    for (const userId of change.notified ?? []) {
      const watcher = this.watchers.get(userId);
      if (!watcher) continue;
      this.tell(watcher, 'notification', undefined);
      this.tell(watcher, 'activity', undefined);
    }
    if (change.sessions) for (const watcher of this.watchers.values()) void this.confirm(watcher);
  }

  /**
   * notify_file_id with the numeric ids of the folders whose listings changed, as PROPFIND shows
   * them: a top-level folder by the bridge's number for `<kind>:<owner>` (file-ids.ts), any other
   * by the store's (its lookup also says whether the user may read it).
   */
  private async tellWithIds(watcher: Watcher, keys: readonly string[]): Promise<void> {
    if (keys.length > MAX_IDS) {
      this.tell(watcher, 'file', undefined);
      return;
    }
    const ids: number[] = [];
    // Only the drives this user syncs: a change's other folders (a move's source in another
    // owner's drive) are not theirs to be told of, not even by number.
    const tops = keys.filter((key) => {
      const owner = syncedOwnerOf(key);
      return owner !== undefined && watcher.owners.has(owner);
    });
    try {
      if (tops.length > 0) ids.push(...(await this.options.fileIds.numbersOf(tops)).values());
      for (const folder of keys.filter((key) => !key.includes(':'))) {
        // Per user: a number is remembered only as this user's store lookup answered it (a
        // number another user may read says nothing of whether this one may).
        const cacheKey = `${watcher.userId}\0${folder}`;
        let known = this.numbers.get(cacheKey);
        if (known === undefined) {
          const [details, chain] = await withSession(watcher.user, (s) => Promise.all([this.options.client.details(s, folder as NodeId), this.options.client.path(s, folder as NodeId)]));
          // A top-level folder itself: named by its key above.
          known = chain.length <= 1 || details.fileId === undefined ? -1 : details.fileId;
          if (this.numbers.size < 100_000) this.numbers.set(cacheKey, known);
        }
        if (known >= 0) ids.push(known);
      }
    } catch {
      // Not the user's to read after all, or the store could not say: the plain message.
      this.tell(watcher, 'file', undefined);
      return;
    }
    this.tell(watcher, 'file', ids.length > 0 ? ids : undefined);
  }

  private tell(watcher: Watcher, kind: Kind, ids: readonly number[] | undefined): void {
    const now = this.options.clock.now();
    for (const client of watcher.clients) {
      const slot = client.slots[kind];
      if (!slot.pending) {
        slot.pending = true;
        slot.ids = new Set();
      }
      if (ids === undefined || slot.ids === undefined) slot.ids = undefined;
      else for (const id of ids) slot.ids.add(id);
      if (slot.ids !== undefined && slot.ids.size > MAX_IDS) slot.ids = undefined;
      slot.receivedMs = now;
      this.schedule(client);
    }
  }

  /** notify_push's debounce time for a kind on this socket (message.rs debounce_time). */
  private debounceMs(client: Client, kind: Kind): number {
    if (kind === 'notification') return 1000;
    const seconds = Math.max(1, Math.min(Math.floor(this.clients.size / 10), this.options.limits.maxDebounceSec));
    return seconds * 1000 * client.debounceFactor;
  }

  /** Arms the socket's one timer for the earliest moment a held kind may go. */
  private schedule(client: Client): void {
    let due = Infinity;
    for (const kind of KINDS) {
      const slot = client.slots[kind];
      if (!slot.pending) continue;
      due = Math.min(due, Math.max(slot.receivedMs + QUIET_MS, slot.sentMs + this.debounceMs(client, kind)));
    }
    clearTimeout(client.timer);
    client.timer = undefined;
    if (due === Infinity) return;
    client.timer = setTimeout(() => this.drain(client), Math.max(0, due - this.options.clock.now()));
  }

  private drain(client: Client): void {
    client.timer = undefined;
    const now = this.options.clock.now();
    for (const kind of KINDS) {
      const slot = client.slots[kind];
      if (!slot.pending || now < slot.receivedMs + QUIET_MS || now < slot.sentMs + this.debounceMs(client, kind)) continue;
      slot.pending = false;
      slot.sentMs = now;
      this.send(client, messageOf(kind, client.listensFileIds ? slot.ids : undefined));
    }
    this.schedule(client);
  }

  private send(client: Client, message: string): void {
    const { ws } = client;
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
      ws.terminate();
      return;
    }
    client.lastSendMs = this.options.clock.now();
    ws.send(message);
  }

  /** Pings silent sockets (closing one that left the last unanswered), and confirms sessions now and then. */
  private tick(): void {
    const now = this.options.clock.now();
    for (const client of this.clients) {
      if (!client.user || now - client.lastSendMs < this.options.limits.pingMs) continue;
      if (client.awaitingPong) {
        client.ws.terminate();
        continue;
      }
      client.awaitingPong = true;
      client.lastSendMs = now;
      client.ws.ping();
    }
    if (now - this.lastSessionCheckMs >= this.options.limits.sessionCheckMs) {
      this.lastSessionCheckMs = now;
      for (const watcher of this.watchers.values()) void this.confirm(watcher);
    }
  }

  /** Asks the store whether the user's session still stands (logging in again if it expired); closes their sockets when not. */
  private async confirm(watcher: Watcher): Promise<void> {
    try {
      await withSession(watcher.user, (s) => this.options.client.currentUser(s));
    } catch (err) {
      if (err instanceof AuthenticationFailed || (err instanceof StoreError && (err.kind === 'unauthenticated' || err.kind === 'forbidden'))) this.endUser(watcher);
    }
  }

  private endUser(watcher: Watcher): void {
    for (const client of watcher.clients) client.ws.close(1008, 'session ended');
  }

  /** Sockets open (tests, metrics). */
  get size(): number {
    return this.clients.size;
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
    clearInterval(this.ticker);
    for (const client of [...this.clients]) {
      clearTimeout(client.timer);
      client.ws.terminate();
    }
    this.server.close();
  }
}

function messageOf(kind: Kind, ids: ReadonlySet<number> | undefined): string {
  if (kind === 'file') return ids !== undefined && ids.size > 0 ? `notify_file_id ${JSON.stringify([...ids])}` : 'notify_file';
  return kind === 'activity' ? 'notify_activity' : 'notify_notification';
}
