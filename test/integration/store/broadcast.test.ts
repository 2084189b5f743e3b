/**
 * `broadcast_message` of PUT /api/groups/{uuid}: a group administrator's message is emailed,
 * through a real SMTP server on loopback, to every active member with an email address who has
 * not turned off `email_alert_group_owned`, in one
 * message whose recipients are in Bcc only. A mail server that refuses it is a 502
 * `email_failed`; without `mail.host` the request is 409 `email_not_configured` (groups.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestStore } from '../../helpers/start-store.js';
import type { Seeder, SeededUser } from '../../helpers/seed.js';
import { call, dataOf, startGroupStore, stopGroupStore, type GroupAdmin } from '../../helpers/groups.js';
import { startTestSmtp, type TestSmtp } from '../../helpers/smtp.js';

let smtp: TestSmtp;
let store: TestStore;
let seeder: Seeder;
let ga: GroupAdmin;
let group: string;
let boss: SeededUser;
let anna: SeededUser;
let ben: SeededUser;
let gone: SeededUser;

beforeAll(async () => {
  smtp = await startTestSmtp();
  ({ store, seeder, ga } = await startGroupStore({ flags: { 'mail.host': '127.0.0.1', 'mail.port': smtp.port, 'mail.from': 'driveway@example.test' } }));
  group = await ga.group('Choir');
  boss = await seeder.user('Carla Conductor');
  anna = await seeder.user('Anna Alto');
  ben = await seeder.user('Ben Bass');
  gone = await seeder.user('Gil Gone');
  const nonMember = await seeder.user('Nina Nonmember');
  expect(nonMember.uuid).toBeDefined();
  await ga.member(group, boss.uuid, { is_admin: true });
  await ga.member(group, anna.uuid);
  await ga.member(group, ben.uuid);
  await ga.member(group, gone.uuid);
  // The built-in admin is a member too, but its email is `admin`: no address to write to.
  await ga.member(group, (await store.ctx.storage.sql.get<{ uuid: string }>('SELECT uuid FROM users WHERE is_builtin = 1'))!.uuid);
  await dataOf(call(seeder.client, seeder.admin, 'PUT', `/api/admin/users/${gone.uuid}`, { is_active: false }));
});

afterAll(async () => {
  await stopGroupStore({ seeder, store });
  await smtp?.close();
});

describe('broadcast_message', () => {
  it('is emailed once to every active member with an address, recipients in Bcc only', async () => {
    smtp.received.length = 0;
    const res = await call(seeder.client, boss.session, 'PUT', `/api/groups/${group}`, {
      broadcast_message: 'Rehearsal moves to Thursday at 7pm.',
      description: 'We sing',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'success', msg: 'group updated; message sent to 3 member(s)', data: { description: 'We sing' } });
    expect(smtp.received).toHaveLength(1);
    const mail = smtp.received[0]!;
    expect(mail.from).toBe('driveway@example.test');
    expect(mail.to.sort()).toEqual([boss.email, anna.email, ben.email].sort());
    expect(mail.headers.get('from')).toBe('driveway@example.test');
    expect(mail.headers.get('subject')).toBe('[Choir] Message from Carla Conductor');
    expect(mail.headers.has('to')).toBe(false);
    expect(mail.headers.has('bcc')).toBe(false);
    expect(mail.text).toContain('Rehearsal moves to Thursday at 7pm.');
    expect(mail.text).toContain('Sent by Carla Conductor to the members of the group "Choir".');
    expect(JSON.stringify([...mail.headers])).not.toContain(anna.email);
  });

  it('leaves out a member who turned off email alerts about their groups, and reaches them again once turned back on', async () => {
    const settings = (on: boolean) => call(seeder.client, ben.session, 'PUT', '/api/user/notifications', { email_alert_group_owned: on });
    expect((await settings(false)).status).toBe(200);
    smtp.received.length = 0;
    let res = await call(seeder.client, boss.session, 'PUT', `/api/groups/${group}`, { broadcast_message: 'Ben opted out' });
    expect(res.body).toMatchObject({ msg: 'group updated; message sent to 2 member(s)' });
    expect(smtp.received[0]?.to.sort()).toEqual([boss.email, anna.email].sort());
    expect((await settings(true)).status).toBe(200);
    smtp.received.length = 0;
    res = await call(seeder.client, boss.session, 'PUT', `/api/groups/${group}`, { broadcast_message: 'Ben is back' });
    expect(smtp.received[0]?.to).toContain(ben.email);
  });

  it('is the group administrators’: a plain member is refused (403) and nothing is sent', async () => {
    smtp.received.length = 0;
    const res = await call(seeder.client, anna.session, 'PUT', `/api/groups/${group}`, { broadcast_message: 'Anna speaking' });
    expect(res.status).toBe(403);
    expect(smtp.received).toEqual([]);
  });

  it('sends nothing when no member has an active account with an address', async () => {
    const quiet = await ga.group('Quiet Room');
    await ga.member(quiet, gone.uuid);
    smtp.received.length = 0;
    const res = await call(seeder.client, seeder.admin, 'PUT', `/api/groups/${quiet}`, { broadcast_message: 'Anyone?' });
    expect(res.body).toMatchObject({ status: 'success', msg: 'group updated; message sent to 0 member(s)' });
    expect(smtp.received).toEqual([]);
  });

  it('answers 502 email_failed when the mail server refuses it; the other changes were saved', async () => {
    smtp.refuse = true;
    try {
      smtp.received.length = 0;
      const res = await call(seeder.client, boss.session, 'PUT', `/api/groups/${group}`, { broadcast_message: 'Lost message', description: 'Saved anyway' });
      expect(res.status).toBe(502);
      expect(res.body).toEqual({
        status: 'error',
        code: 'email_failed',
        msg: 'broadcast_message: the mail server did not accept the message; it was not sent',
      });
      expect(smtp.received).toEqual([]);
      expect(await store.ctx.storage.sql.get('SELECT description FROM groups WHERE uuid = ?', [group])).toEqual({ description: 'Saved anyway' });
    } finally {
      smtp.refuse = false;
    }
  });
});
