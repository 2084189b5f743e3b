/**
 * The calls of the page that lets a Nextcloud or ownCloud app sign in (pages/client-login.tsx):
 * the bridge's login-flow endpoints (src/bridge/nextcloud/login-flow.ts), on the bridge's origin
 * as the store names it (`root_url` of GET /api/user/webdrive; the app's policy lets it call
 * there), and the store's app passwords. No credential goes to the bridge but the app password
 * granted, and only once it was made for this flow.
 */
import { api, ApiError } from './client.js';
import { t } from '../strings/index.js';
import { webdrive } from './files.js';

export interface ClientFlow {
  client: string;
  address: string;
  kind: 'v1' | 'v2';
  expires: number;
}

/** The bridge's address without a trailing slash, or undefined when the store names none. */
export async function bridgeBase(): Promise<string | undefined> {
  return (await webdrive()).root_url?.replace(/\/+$/, '');
}

async function bridgeCall<T>(method: 'GET' | 'POST', url: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? null : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'network', t.networkError);
  }
  const parsed = (await response.json().catch(() => undefined)) as { msg?: unknown } | undefined;
  if (response.ok) return parsed as T;
  throw new ApiError(response.status, response.status === 404 ? 'not_found' : 'invalid_request', typeof parsed?.msg === 'string' ? parsed.msg : '');
}

const flowUrl = (base: string, what: 'grant' | 'cancel') => `${base}/index.php/login/v2/${what}`;

/** Who asks (404 when the flow is over). */
export const flowDetails = (base: string, token: string) => bridgeCall<ClientFlow>('GET', `${flowUrl(base, 'grant')}?token=${encodeURIComponent(token)}`);

export const cancelFlow = (base: string, token: string) => bridgeCall<unknown>('POST', flowUrl(base, 'cancel'), { token });

/**
 * Makes an app password named after the client, with the right to make shares (the apps' share
 * buttons: docs/security.md), and hands it to the flow; one the bridge refuses
 * is deleted again. Answers where to go next (Login Flow v1's `nc://` address), if anywhere.
 */
export async function grantFlow(base: string, token: string, flow: ClientFlow, loginName: string, password?: string): Promise<string | undefined> {
  // The account password when the store asks for it again (a session older than 10 minutes: docs/security.md).
  const proof = password ? { password } : {};
  const made = await api<{ uuid: string; password: string }>('POST', '/api/user/app_passwords', { name: flow.client, may_share: true, ...proof });
  try {
    const answer = await bridgeCall<{ redirect?: string }>('POST', flowUrl(base, 'grant'), { token, loginName, appPassword: made.password });
    return typeof answer?.redirect === 'string' ? answer.redirect : undefined;
  } catch (error) {
    await api('DELETE', `/api/user/app_passwords/${encodeURIComponent(made.uuid)}`, proof).catch(() => undefined);
    throw error;
  }
}
