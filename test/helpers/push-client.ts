/**
 * A push client speaking notify_push's protocol as the Nextcloud desktop does
 * (nextcloud/desktop src/libsync/pushnotifications.cpp): on connect it sends the username and then
 * the password as two text messages (an empty username and a pre-auth token the same way), waits
 * for `authenticated` or `err: Invalid credentials`, and then reads `notify_*` messages. The
 * desktop never sends `listen notify_file_id`; the mobile clients do (listen() here).
 */
import { WebSocket } from 'ws';

export interface PushClient {
  /** Every text message received, in order. */
  readonly messages: string[];
  /** The first answer to the two authentication messages. */
  readonly answer: string;
  /** Resolves with the first message after `from` (an index into messages) that `match` accepts; rejects after `timeoutMs`. */
  next(match: (message: string) => boolean, timeoutMs?: number, from?: number): Promise<string>;
  listen(): void;
  /** Resolves when the server closed the socket (with its code). */
  readonly closed: Promise<number>;
  close(): void;
}

/** The websocket URL of a bridge: its notify_push capability's path. */
export function pushUrl(bridgeUrl: string): string {
  return `${bridgeUrl.replace(/^http/, 'ws')}/push/ws`;
}

export async function connectPush(url: string, username: string, password: string, headers: Record<string, string> = {}): Promise<PushClient> {
  const ws = new WebSocket(url, { headers, perMessageDeflate: false });
  const messages: string[] = [];
  const waiters = new Set<() => void>();
  ws.on('message', (data) => {
    messages.push(data.toString('utf8'));
    for (const wake of [...waiters]) wake();
  });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
  ws.send(username);
  ws.send(password);
  const next = (match: (message: string) => boolean, timeoutMs = 5000, from = 0): Promise<string> =>
    new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = messages.slice(from).find(match);
        if (found === undefined) return false;
        waiters.delete(wake);
        clearTimeout(timer);
        resolve(found);
        return true;
      };
      const wake = (): void => void check();
      const timer = setTimeout(() => {
        waiters.delete(wake);
        reject(new Error(`no matching push message within ${timeoutMs} ms; got ${JSON.stringify(messages)}`));
      }, timeoutMs);
      waiters.add(wake);
      check();
    });
  const answer = await Promise.race([next(() => true, 15_000), closed.then((code) => `closed ${code}`)]);
  return {
    messages,
    answer,
    next,
    listen: () => ws.send('listen notify_file_id'),
    closed,
    close: () => ws.close(),
  };
}
