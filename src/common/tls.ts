/**
 * HTTPS for both listeners (store and bridge): reading and checking the PEM files once at start,
 * making the http or https server, and answering plain HTTP sent to an HTTPS port. Owns the
 * transport only; what the server serves is its caller's.
 *
 * Plain HTTP to a TLS port: Node's TLS server would fail the handshake and close the connection,
 * so the client (curl http://host:8443/, a browser, a misconfigured proxy) sees an empty reply.
 * The first bytes of each connection are looked at instead: a TLS handshake starts with the
 * record type 0x16; anything else that looks like an HTTP method gets `400` with a one-line body
 * saying this port speaks HTTPS. Only the first chunk of a connection is looked at, once.
 */
import { readFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { Server as NetServer, Socket } from 'node:net';
import { createSecureContext } from 'node:tls';
import { reasonOf, StartupError } from './startup-error.js';

export interface TlsFiles {
  cert: Buffer;
  key: Buffer;
}

export interface TlsSettings {
  certPath: string;
  keyPath: string;
  /** How the operator names them: `store.tlsCert / DRIVEWAY_STORE_TLS_CERT`. */
  certSetting: string;
  keySetting: string;
}

/** Reads both files and checks that they make a usable pair; StartupError naming the file otherwise. */
export function readTlsFiles(settings: TlsSettings): TlsFiles {
  const read = (file: string, setting: string, what: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new StartupError(`cannot read the TLS ${what} ${file}: ${reasonOf(err)}; check ${setting} and that this user may read it`, { cause: err });
    }
  };
  const files = { cert: read(settings.certPath, settings.certSetting, 'certificate'), key: read(settings.keyPath, settings.keySetting, 'key') };
  try {
    createSecureContext(files);
  } catch (err) {
    throw new StartupError(
      `cannot use the TLS certificate ${settings.certPath} with the key ${settings.keyPath}: ${reasonOf(err)}; check ${settings.certSetting} and ${settings.keySetting} (PEM files, the key of that certificate)`,
      { cause: err },
    );
  }
  return files;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** An http server, or an https one answering plain HTTP clearly when `tls` is given. */
export function createListenerServer(tls: TlsFiles | undefined, options: http.ServerOptions, handler?: Handler): http.Server {
  if (!tls) return http.createServer(options, handler);
  const server = https.createServer({ ...options, ...tls }, handler);
  answerPlaintextOnTls(server);
  // https.Server serves the same request and response objects; callers treat both alike.
  return server as unknown as http.Server;
}

export const PLAINTEXT_ANSWER_BODY = 'this port speaks HTTPS: use an https:// URL\n';

/** What Node's TLS server allows a handshake (tls.Server handshakeTimeout default). */
const FIRST_BYTES_TIMEOUT_MS = 120_000;

/** Plain HTTP starts with a method in capitals; a TLS handshake with 0x16. */
const HTTP_METHOD_START = /^[A-Z]{3,12} /;

/** Makes `server` answer a plaintext HTTP request with 400 and a one-line body, then close. */
export function answerPlaintextOnTls(server: NetServer): void {
  // Node's TLS server wraps each socket in its own 'connection' listener; ours runs first and
  // hands the socket on once its first bytes are known (TLSSocket takes over what was read).
  const tlsListeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    // Until the first bytes come, neither TLS's handshake timeout nor HTTP's idle timeout watch
    // this socket: a connection that sends nothing is cut after TLS's default handshake time.
    socket.setTimeout(FIRST_BYTES_TIMEOUT_MS, () => socket.destroy());
    const handOver = (): void => {
      socket.setTimeout(0);
      for (const listener of tlsListeners) listener.call(server, socket);
    };
    const onReadable = (): void => {
      const first = socket.read() as Buffer | null;
      if (first === null) {
        socket.once('readable', onReadable);
        return;
      }
      socket.setTimeout(0);
      if (first[0] !== 0x16 && HTTP_METHOD_START.test(first.subarray(0, 16).toString('latin1'))) {
        socket.end(
          `HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${PLAINTEXT_ANSWER_BODY.length}\r\nConnection: close\r\n\r\n${PLAINTEXT_ANSWER_BODY}`,
        );
        return;
      }
      socket.unshift(first);
      handOver();
    };
    socket.once('error', () => socket.destroy());
    socket.once('readable', onReadable);
  });
}
