/**
 * Outgoing email (group broadcast messages) through nodemailer over SMTP, configured by `mail.*`
 * (README). Without `mail.host` there is no mailer and callers answer 409 `email_not_configured`.
 * One message per send, the recipients in Bcc only: members do not learn each other's addresses
 * from it. The transport is made at the first message (nodemailer is loaded only then: most
 * installations never send one) and closed with the app.
 */
import type { Transporter } from 'nodemailer';
import type { Config } from '../../common/config.js';
import type { Logger } from '../../common/logger.js';
import type { Mailer } from '../context.js';
import { StoreHttpError } from '../envelope.js';

export const emailNotConfigured = (): StoreHttpError =>
  new StoreHttpError(409, 'email_not_configured', 'broadcast_message: email is not configured on this server (mail.host)');

export function createMailer(config: Config['mail'], log: Logger): Mailer | undefined {
  if (!config.host) return undefined;
  let transport: Promise<Transporter> | undefined;
  const transportOf = (): Promise<Transporter> =>
    (transport ??= import('nodemailer').then(({ default: nodemailer }) =>
      nodemailer.createTransport({
        host: config.host,
        port: config.port,
        secure: config.secure,
        ...(config.user ? { auth: { user: config.user, pass: config.password ?? '' } } : {}),
        connectionTimeout: 10_000,
        greetingTimeout: 10_000,
        socketTimeout: 30_000,
      }),
    ));
  return {
    async send(mail) {
      try {
        await (await transportOf()).sendMail({ from: config.from, bcc: [...mail.to], subject: mail.subject, text: mail.text });
      } catch (err) {
        log.warn({ err, host: config.host, port: config.port }, 'the mail server did not accept a message');
        throw new StoreHttpError(502, 'email_failed', 'broadcast_message: the mail server did not accept the message; it was not sent');
      }
    },
    close: () => {
      void transport?.then((t) => t.close());
    },
  };
}
