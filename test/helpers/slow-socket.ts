/**
 * A client that sends a request as slowly as a test asks, on a raw socket (plain TCP, or TLS when
 * the URL is https and the test's certificate is given): what the slow-client suites use to
 * trickle headers and bodies and to see how and when the server ends the connection.
 */
import net from 'node:net';
import tls from 'node:tls';

export interface Exchange {
  /** Whether the server closed the connection before the client gave up. */
  closedByServer: boolean;
  elapsedMs: number;
  response: string;
  /** Body chunks the client got to write before the end. */
  chunksSent: number;
}

export interface ExchangeOptions {
  /** How long to wait for the server to answer or cut before calling it unbounded. Default 8 s. */
  giveUpMs?: number;
  /** For an https URL: the certificate to trust. */
  ca?: Buffer;
}

/** A connection to `url`'s host and port, TLS for https; `onConnect` once it can carry bytes. */
export function connectTo(url: string, onConnect: () => void, ca?: Buffer): net.Socket {
  const { protocol, hostname, port } = new URL(url);
  if (protocol === 'https:') return tls.connect({ host: hostname, port: Number(port), ca }, onConnect);
  return net.connect(Number(port), hostname, onConnect);
}

/**
 * Sends `head` at once, then one chunk every `everyMs` until all are sent or the server closes
 * the socket; waits for the server's answer or its close, at most `giveUpMs` in all.
 */
export function exchange(url: string, head: string, chunks: Buffer[], everyMs: number, options: ExchangeOptions = {}): Promise<Exchange> {
  const giveUpMs = options.giveUpMs ?? 8_000;
  return new Promise((resolve) => {
    const started = performance.now();
    let response = '';
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (closedByServer: boolean): void => {
      if (done) return;
      done = true;
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ closedByServer, elapsedMs: performance.now() - started, response, chunksSent: sent });
    };
    const giveUp = setTimeout(() => finish(false), giveUpMs);
    const socket = connectTo(
      url,
      () => {
        if (head) socket.write(head);
        timer = setInterval(() => {
          const chunk = chunks[sent];
          if (chunk === undefined || socket.destroyed) {
            clearInterval(timer);
            return;
          }
          socket.write(chunk);
          sent += 1;
        }, everyMs);
      },
      options.ca,
    );
    socket.on('data', (data: Buffer) => {
      response += data.toString('latin1');
    });
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
  });
}

/** `content` cut into `count` nearly equal pieces. */
export function pieces(content: Buffer, count: number): Buffer[] {
  const size = Math.ceil(content.length / count);
  return Array.from({ length: Math.ceil(content.length / size) }, (_, i) => content.subarray(i * size, (i + 1) * size));
}
