/**
 * A password link's unlock attacked (docs/security.md "Share links in a browser"): a hostile page
 * posting the unlock as a form or plain text, a cookie forged with a live key id and a later
 * expiry, one link's cookie sent to another link's zip, a flood of cookie values, and an upload
 * link's page asked for what it must not show. Every refusal is the envelope with a 4xx and no
 * cookie.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFolder, uploadFile, type Seeder, type SeededUser } from '../helpers/seed.js';
import { dataOf, startGroupStore, stopGroupStore } from '../helpers/groups.js';
import { as, fetchRaw } from '../helpers/sharing.js';
import type { TestStore } from '../helpers/start-store.js';

let store: TestStore;
let seeder: Seeder;
let owner: SeededUser;

beforeAll(async () => {
  ({ store, seeder } = await startGroupStore());
  owner = await seeder.user('Pia Password');
});
afterAll(async () => {
  await stopGroupStore({ seeder, store });
});

interface Made {
  share_uuid: string;
  token: string;
  url: string;
}
const link = (node: string, body: Record<string, unknown>): Promise<Made> => dataOf<Made>(as(seeder.client, owner, 'POST', `/api/nodes/${node}/shares`, body));
const PAGE_FETCH = { accept: 'application/json', 'sec-fetch-site': 'same-origin' };
const unlock = (made: Made, body: string, type: string) => fetchRaw(store, `/public/${made.token}/unlock`, { method: 'POST', headers: { ...PAGE_FETCH, 'content-type': type }, body });
const cookieOf = (res: { headers: Record<string, string | string[] | undefined> }): string => String(res.headers['set-cookie']).split(';')[0] as string;

describe('the unlock of a password link', () => {
  it('takes no form or plain-text post (a hostile page’s), answering the envelope with a 4xx and no cookie', async () => {
    const made = await link(await uploadFile(seeder.client, owner.session, 'home', 'form.txt', 'x'), { type: 'public', password: 'pw-Form-1' });
    for (const [body, type] of [
      ['password=pw-Form-1', 'application/x-www-form-urlencoded'],
      ['pw-Form-1', 'text/plain'],
      ['{"password":"pw-Form-1"}', 'text/plain'],
      ['["pw-Form-1"]', 'application/json'],
    ] as const) {
      const res = await unlock(made, body, type);
      expect(res.status, `${type} ${body}`).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(res.json()).toMatchObject({ status: 'error', msg: expect.any(String) });
    }
  });

  it('refuses a forged cookie (a live key id, a later expiry), another link’s cookie on a zip, and a flood of values', async () => {
    const folder = await createFolder(seeder.client, owner.session, 'home', 'Locked');
    await uploadFile(seeder.client, owner.session, folder, 'in.txt', 'locked bytes');
    const made = await link(folder, { type: 'public', password: 'pw-Locked-1' });
    const other = await link(await createFolder(seeder.client, owner.session, 'home', 'Other'), { type: 'public', password: 'pw-Other-1' });
    const mine = cookieOf(await unlock(other, JSON.stringify({ password: 'pw-Other-1' }), 'application/json'));
    const [, kid, expires, mac] = mine.split('=')[1]?.split('.') ?? [];
    const forged = [`driveway_link=v1.${kid}.${Number(expires) + 86_400_000}.${mac}`, mine.replace('driveway_link=', 'driveway_link= '), `driveway_link=v1.other.${expires}.${mac}`];
    for (const cookie of [mine, ...forged, Array.from({ length: 200 }, () => mine).join('; ')]) {
      for (const url of [`${made.url}?download=zip`, `${made.url}/in.txt`, `${made.url}?info`]) {
        const res = await fetchRaw(store, url, { headers: { ...PAGE_FETCH, cookie } });
        expect(res.status, url).toBe(401);
        expect(res.json()).toMatchObject({ status: 'error', code: 'unauthenticated' });
        expect(res.headers['www-authenticate']).toBeUndefined();
      }
    }
    // The right one opens the zip.
    const right = cookieOf(await unlock(made, JSON.stringify({ password: 'pw-Locked-1' }), 'application/json'));
    expect((await fetchRaw(store, `${made.url}?download=zip`, { headers: { ...PAGE_FETCH, cookie: right } })).status).toBe(200);
  });

  it('shows an upload link’s page nothing of its folder: ?info below it, ?preview and the zip refused', async () => {
    const box = await createFolder(seeder.client, owner.session, 'home', 'Inbox');
    await uploadFile(seeder.client, owner.session, box, 'private.txt', 'not for senders');
    const made = await link(box, { type: 'upload' });
    expect((await fetchRaw(store, `${made.url}?info`, { headers: PAGE_FETCH })).json()).toEqual({ status: 'success', msg: 'link', data: { type: 'Upload', expires: null } });
    for (const url of [`${made.url}/private.txt?info`, `${made.url}/private.txt?preview`, `${made.url}/private.txt`, `${made.url}?download=zip`, `${made.url}?preview`]) {
      const res = await fetchRaw(store, url, { headers: PAGE_FETCH });
      expect([403, 404], url).toContain(res.status);
      expect(res.body.toString()).not.toContain('not for senders');
      expect(res.body.toString()).not.toContain('private.txt');
    }
  });
});
