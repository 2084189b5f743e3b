/**
 * A real SMTP server on 127.0.0.1 (smtp-server, OS-chosen port) that keeps what it receives:
 * the envelope and the message, with its headers and decoded text. `refuse` makes it reject the
 * next messages at RCPT TO, as a mail server that will not relay does.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  headers: Map<string, string>;
  text: string;
}

export interface TestSmtp {
  port: number;
  received: ReceivedMail[];
  refuse: boolean;
  close(): Promise<void>;
}

/** Headers (unfolded, names lower-cased) and body; quoted-printable bodies are decoded. */
function parseMessage(raw: string): { headers: Map<string, string>; text: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers = new Map<string, string>();
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  let text = raw.slice(split + 4);
  if (headers.get('content-transfer-encoding')?.toLowerCase() === 'quoted-printable') {
    text = Buffer.from(text.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8');
  }
  return { headers, text: text.replace(/\r\n/g, '\n') };
}

export async function startTestSmtp(): Promise<TestSmtp> {
  const state: TestSmtp = { port: 0, received: [], refuse: false, close: async () => undefined };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onRcptTo(_address, _session, callback) {
      callback(state.refuse ? Object.assign(new Error('relay denied'), { responseCode: 550 }) : null);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const from = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address;
        state.received.push({ from, to: session.envelope.rcptTo.map((r) => r.address), ...parseMessage(Buffer.concat(chunks).toString('utf8')) });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  state.port = (server.server.address() as AddressInfo).port;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}
