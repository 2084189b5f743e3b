/**
 * Login as the Nextcloud and ownCloud clients do it (docs/client-quirks.md "Login flows";
 * docs/security.md "Client login flows"), on the bridge's address, the browser step in the web app:
 *
 * - Login Flow v2 (the desktop clients): `POST /index.php/login/v2` (or `/login/v2`) opens a flow
 *   and answers `{poll: {token, endpoint}, login}`; `login` is the web app's grant page, where the
 *   person signs in (with 2FA) and grants or cancels. The client polls `POST <endpoint>` with
 *   `token=`: 404 until granted, then `{server, loginName, appPassword}` once, then 404 again.
 * - Login Flow v1 (the mobile apps' web view): `GET /index.php/login/flow` (or `/login/flow`)
 *   opens a flow and redirects to the same page; the grant answers the page an
 *   `nc://login/server:…&user:…&password:…` address to go to, and the flow is gone.
 *
 * The page's own calls (CORS lets only the web app's origin read them: cors.ts): `GET
 * /index.php/login/v2/grant?token=<login token>` the flow's client and kind; `POST` there with
 * `{token, loginName, appPassword}` the grant, an app password the page made in the person's
 * account (named after the client), kept only once it really logs in to the store; `POST
 * /index.php/login/v2/cancel` with `{token}`.
 *
 * Tokens are 256 random bits; only their SHA-256 is kept (contracts/login-flows.ts, where every
 * instance sees the flows). The app password waits sealed: each flow has an X25519 key pair whose
 * private half is sealed under a key derived from the poll token, and the grant seals the
 * password to the public half, so only the poll token opens it.
 */
import { createCipheriv, createDecipheriv, createHash, createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { addressBlock } from '../../common/client-ip.js';
import type { Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import type { LoginFlow, LoginFlowKind, LoginFlowLimits, LoginFlowRepository } from '../../contracts/login-flows.js';
import { StoreError, type StoreClient } from '../../store-client/contract.js';
import { BRIDGE_AGENT } from '../sessions.js';

/** How long a flow waits for its grant and its poll: as Nextcloud, 20 minutes. */
export const LOGIN_FLOW_TTL_MS = 20 * 60 * 1000;

/** Open flows per client address, and in all (past either: 429). */
export const LOGIN_FLOW_LIMITS: LoginFlowLimits = { maxPerAddress: 10, maxOpen: 10_000 };

/** What a Retry-After says past the bound: flows end within the TTL, most far sooner. */
const RETRY_AFTER_SEC = 60;

/** The most a flow request's body may hold (a token, a login name, an app password). */
const MAX_BODY_BYTES = 16 * 1024;

/** The web app's page of the browser step. */
export const GRANT_PAGE = '/client-login';

const GRANT_PATH = '/index.php/login/v2/grant';
const CANCEL_PATH = '/index.php/login/v2/cancel';

/** A login token no open flow has. */
const FLOW_OVER = 'this login request is over (it expired, was cancelled or was granted)';

/** An app password's name holds at most this many characters (docs/extensions.md "App passwords"). */
const MAX_CLIENT_NAME = 100;

export interface LoginFlowOptions {
  repository: LoginFlowRepository;
  client: StoreClient;
  clock: Clock;
  log: Logger;
  /** The bridge's address as this request reached it (BridgeServices.absoluteBase). */
  serverUrl(req: IncomingMessage): string;
  /** The web app's page at `page` for this request, or undefined when the bridge does not know where the web app is. */
  webAppPage(req: IncomingMessage, page: string): string | undefined;
  limits?: LoginFlowLimits;
}

type Route = 'start-v2' | 'poll' | 'start-v1' | 'details' | 'grant' | 'cancel';

/** The route of a request, with or without Nextcloud's `/index.php` prefix. */
function routeOf(req: IncomingMessage): { route: Route; prefix: string } | undefined {
  const path = (req.url ?? '/').split('?')[0] as string;
  const prefix = path.startsWith('/index.php/') ? '/index.php' : '';
  const rest = path.slice(prefix.length);
  const method = req.method ?? 'GET';
  if (method === 'POST' && rest === '/login/v2') return { route: 'start-v2', prefix };
  if (method === 'POST' && rest === '/login/v2/poll') return { route: 'poll', prefix };
  if (method === 'GET' && rest === '/login/flow') return { route: 'start-v1', prefix };
  if (prefix === '' || (method !== 'GET' && method !== 'POST')) return undefined;
  if (path === GRANT_PATH) return { route: method === 'GET' ? 'details' : 'grant', prefix };
  if (path === CANCEL_PATH && method === 'POST') return { route: 'cancel', prefix };
  return undefined;
}

/** The SHA-256 a token is kept and found by. */
function keyOf(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

const b64 = (bytes: Buffer): string => bytes.toString('base64url');
const unb64 = (text: string): Buffer => Buffer.from(text, 'base64url');

function derive(secret: Buffer | string, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, '', info, 32));
}

/** AES-256-GCM: `iv.ciphertext.tag`. */
function seal(key: Buffer, plain: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return [iv, body, cipher.getAuthTag()].map(b64).join('.');
}

function unseal(key: Buffer, sealed: string): Buffer {
  const [iv = '', body = '', tag = ''] = sealed.split('.');
  const decipher = createDecipheriv('aes-256-gcm', key, unb64(iv));
  decipher.setAuthTag(unb64(tag));
  return Buffer.concat([decipher.update(unb64(body)), decipher.final()]);
}

const PRIVATE_KEY_INFO = 'driveway login flow: private key';
const PASSWORD_INFO = 'driveway login flow: app password';

/** A flow's key pair: the public half, and the private half sealed under the poll token. */
function flowKeys(pollToken: string): { publicKey: string; sealedKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync('x25519');
  return {
    publicKey: b64(publicKey.export({ type: 'spki', format: 'der' })),
    sealedKey: seal(derive(pollToken, PRIVATE_KEY_INFO), privateKey.export({ type: 'pkcs8', format: 'der' })),
  };
}

function sharedKey(privateKey: KeyObject, publicKey: KeyObject): Buffer {
  return derive(diffieHellman({ privateKey, publicKey }), PASSWORD_INFO);
}

/** The app password sealed to the flow's public key: `ephemeral public key.sealed`. */
function sealTo(publicKey: string, password: string): string {
  const ephemeral = generateKeyPairSync('x25519');
  const key = sharedKey(ephemeral.privateKey, createPublicKey({ key: unb64(publicKey), format: 'der', type: 'spki' }));
  return `${b64(ephemeral.publicKey.export({ type: 'spki', format: 'der' }))}.${seal(key, Buffer.from(password, 'utf8'))}`;
}

/** What sealTo sealed, opened with the poll token. */
function openWith(pollToken: string, flow: LoginFlow, sealed: string): string {
  const privateKey = createPrivateKey({ key: unseal(derive(pollToken, PRIVATE_KEY_INFO), flow.sealedKey), format: 'der', type: 'pkcs8' });
  const dot = sealed.indexOf('.');
  const ephemeral = createPublicKey({ key: unb64(sealed.slice(0, dot)), format: 'der', type: 'spki' });
  return unseal(sharedKey(privateKey, ephemeral), sealed.slice(dot + 1)).toString('utf8');
}

/** The client's name as an app password may be named: its User-Agent without control characters, at most 100 characters. */
export function clientNameOf(userAgent: string | undefined): string {
  const clean = (userAgent ?? '').replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').replace(/\s+/g, ' ').trim();
  return [...clean].slice(0, MAX_CLIENT_NAME).join('').trim() || 'Unknown client';
}

/** PHP's urlencode, as Nextcloud writes the user and password of an `nc://` address (the apps decode them with URLDecoder). */
function phpUrlencode(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

/** The address a Login Flow v1 grant sends the app's web view to (Nextcloud's ClientFlowLoginController). */
export function ncLoginUrl(server: string, loginName: string, appPassword: string): string {
  return `nc://login/server:${server}&user:${phpUrlencode(loginName)}&password:${phpUrlencode(appPassword)}`;
}

class FlowRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** A flow request's body as fields: JSON, or a form (what the desktop client's poll sends); the query's fields under them. */
async function fieldsOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new FlowRequestError(413, 'the body is too large');
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  const query = Object.fromEntries(new URLSearchParams((req.url ?? '').split('?')[1] ?? ''));
  if (/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new FlowRequestError(400, 'the body is not JSON');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new FlowRequestError(400, 'the body must be a JSON object');
    return { ...query, ...(parsed as Record<string, unknown>) };
  }
  return { ...query, ...Object.fromEntries(new URLSearchParams(text)) };
}

function field(fields: Record<string, unknown>, name: string): string {
  const value = fields[name];
  if (typeof value !== 'string' || value === '' || value.length > 1024) throw new FlowRequestError(400, `${name}: missing or not a string`);
  return value;
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', 'Content-Length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

export class LoginFlows {
  private readonly limits: LoginFlowLimits;

  constructor(private readonly options: LoginFlowOptions) {
    this.limits = options.limits ?? LOGIN_FLOW_LIMITS;
  }

  /** Whether `req` is a login flow's (answered by serve, never as DAV). */
  serves(req: IncomingMessage): boolean {
    return routeOf(req) !== undefined;
  }

  /** Answers a request `serves` took; `address` is the client's, as the bridge logs and limits it. */
  async serve(req: IncomingMessage, res: ServerResponse, address: string): Promise<void> {
    const found = routeOf(req);
    if (!found) return;
    try {
      const fields = found.route === 'start-v1' || found.route === 'details' ? Object.fromEntries(new URLSearchParams((req.url ?? '').split('?')[1] ?? '')) : await fieldsOf(req);
      switch (found.route) {
        case 'start-v2':
        case 'start-v1':
          return await this.start(req, res, address, found.route === 'start-v2' ? 'v2' : 'v1', found.prefix);
        case 'poll':
          return await this.poll(res, field(fields, 'token'));
        case 'details':
          return await this.details(res, field(fields, 'token'));
        case 'grant':
          return await this.grant(req, res, address, field(fields, 'token'), field(fields, 'loginName'), field(fields, 'appPassword'));
        case 'cancel':
          return await this.cancel(res, field(fields, 'token'));
      }
    } catch (err) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (err instanceof FlowRequestError) {
        req.resume();
        sendJson(res, err.status, { status: 'error', msg: err.message }, err.headers);
        return;
      }
      this.options.log.error({ err }, 'login flow request failed');
      sendJson(res, 503, { status: 'error', msg: 'the login flow could not be served; try again' }, { 'Retry-After': String(RETRY_AFTER_SEC) });
    }
  }

  private async start(req: IncomingMessage, res: ServerResponse, address: string, kind: LoginFlowKind, prefix: string): Promise<void> {
    req.resume();
    const page = this.options.webAppPage(req, GRANT_PAGE);
    // A bridge that does not know where the web app is (a foreign store without store.publicUrl) has no browser step.
    if (!page) throw new FlowRequestError(404, 'no web app is known to grant a login in');
    const pollToken = b64(randomBytes(32));
    const loginToken = b64(randomBytes(32));
    const now = this.options.clock.now();
    const server = this.options.serverUrl(req);
    const flow: LoginFlow = {
      pollKey: keyOf(pollToken),
      loginKey: keyOf(loginToken),
      kind,
      client: clientNameOf(req.headers['user-agent']),
      // Counted (and shown) by block: an IPv6 client's /64, or one network would have 2^64 places.
      address: addressBlock(address),
      server,
      ...flowKeys(pollToken),
      createdMs: now,
      expiresMs: now + LOGIN_FLOW_TTL_MS,
    };
    if (!(await this.options.repository.open(flow, this.limits, now))) {
      throw new FlowRequestError(429, 'too many login flows open from this address; finish or cancel one, or wait', { 'Retry-After': String(RETRY_AFTER_SEC) });
    }
    const login = `${page}?token=${loginToken}`;
    if (kind === 'v1') {
      res.writeHead(302, { Location: login, 'Cache-Control': 'no-store', 'Content-Length': '0' });
      res.end();
      return;
    }
    sendJson(res, 200, { poll: { token: pollToken, endpoint: `${server}${prefix}/login/v2/poll` }, login });
  }

  private async poll(res: ServerResponse, pollToken: string): Promise<void> {
    const granted = await this.options.repository.take(keyOf(pollToken), this.options.clock.now());
    // As Nextcloud: 404 and an empty list until the grant (and for any token not a live flow's).
    if (!granted) return sendJson(res, 404, []);
    const appPassword = openWith(pollToken, granted.flow, granted.sealedPassword);
    sendJson(res, 200, { server: granted.flow.server, loginName: granted.loginName, appPassword });
  }

  private async details(res: ServerResponse, loginToken: string): Promise<void> {
    const flow = await this.options.repository.find(keyOf(loginToken), this.options.clock.now());
    if (!flow) throw new FlowRequestError(404, FLOW_OVER);
    sendJson(res, 200, { client: flow.client, address: flow.address, kind: flow.kind, expires: flow.expiresMs });
  }

  private async grant(req: IncomingMessage, res: ServerResponse, address: string, loginToken: string, loginName: string, appPassword: string): Promise<void> {
    const { repository, clock, client } = this.options;
    const key = keyOf(loginToken);
    const flow = await repository.find(key, clock.now());
    if (!flow) throw new FlowRequestError(404, FLOW_OVER);
    // Kept only once it logs in: the bridge knows the store only by its interface.
    try {
      const session = await client.login(loginName, appPassword, { client: { ip: address, userAgent: flow.client }, via: BRIDGE_AGENT });
      await client.logout(session).catch(() => undefined);
    } catch (err) {
      if (err instanceof StoreError && ['unauthenticated', 'invalid', 'forbidden', 'not-found'].includes(err.kind)) {
        throw new FlowRequestError(403, 'the login name and app password do not log in');
      }
      if (err instanceof StoreError && err.httpStatus === 429) {
        throw new FlowRequestError(429, 'too many failed logins; try again later', err.retryAfterSec ? { 'Retry-After': String(err.retryAfterSec) } : {});
      }
      throw err;
    }
    if (flow.kind === 'v1') {
      // The app's web view takes the address; nothing waits here. Its server is the bridge as the
      // person's own web app reached it for this grant (as Nextcloud takes the grant request's
      // host), never the Host the flow was opened with: anyone may open a flow with any Host and
      // hand its login link to a victim, whose app would then send the password there.
      if (!(await repository.cancel(key))) throw new FlowRequestError(404, FLOW_OVER);
      return sendJson(res, 200, { redirect: ncLoginUrl(this.options.serverUrl(req), loginName, appPassword) });
    }
    if (!(await repository.grant(key, loginName, sealTo(flow.publicKey, appPassword), clock.now()))) {
      throw new FlowRequestError(404, FLOW_OVER);
    }
    sendJson(res, 200, { granted: true });
  }

  private async cancel(res: ServerResponse, loginToken: string): Promise<void> {
    if (!(await this.options.repository.cancel(keyOf(loginToken)))) throw new FlowRequestError(404, FLOW_OVER);
    sendJson(res, 200, { cancelled: true });
  }
}
