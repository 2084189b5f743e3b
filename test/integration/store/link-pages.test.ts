/**
 * A link opened in a browser (issue 31 items 1, 2; routes/public.ts): a navigation gets the web
 * app's page (its policy, no Basic challenge; a gone link's page carries 404 or 410) while
 * programs (curl, wget: Accept any type) keep the bytes, the listing and the Basic challenge exactly as
 * before; the page's own calls (`?info`, `?preview`, `?download`) and its password (POST
 * /public/{token}/unlock: an HttpOnly, SameSite=Strict cookie for that link's path, an hour,
 * signed over the link's current password, counted against the same limiter as Basic). The
 * build folder is a small one written by the test; test/web/link-pages.test.ts runs the real one.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isUnlocked, unlockCookieHeader, UNLOCK_SEC } from '../../../src/store/ops/link-unlock.js';
import { findLink } from '../../../src/store/ops/public-links.js';
import type { TestStore } from '../../helpers/start-store.js';
import { createFolder, uploadFile, type Seeder, type SeededUser } from '../../helpers/seed.js';
import { dataOf, startGroupStore, stopGroupStore } from '../../helpers/groups.js';
import { as, basic, fetchRaw, multipartFile, readChildNames } from '../../helpers/sharing.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const PAGE = '<!doctype html><html lang="en"><head></head><body><div id="app"></div></body></html>';
/** What Chromium sends when a person opens a link from a mail or the address bar. */
const NAVIGATION = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'sec-fetch-dest': 'document', 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'none' };
/** The link page's own fetch. */
const PAGE_FETCH = { accept: 'application/json', 'sec-fetch-dest': 'empty', 'sec-fetch-mode': 'cors', 'sec-fetch-site': 'same-origin' };
const CURL = { accept: '*/*' };

const build = makeTmpDir('driveway-link-pages-');
let store: TestStore;
let seeder: Seeder;
let owner: SeededUser;
let counter = 0;

beforeAll(async () => {
  writeFileSync(path.join(build.dir, 'index.html'), PAGE);
  mkdirSync(path.join(build.dir, 'app/assets'), { recursive: true });
  ({ store, seeder } = await startGroupStore({ flags: { 'store.webDir': build.dir } }));
  owner = await seeder.user('Olive Owner');
});
afterAll(async () => {
  await stopGroupStore({ seeder, store });
  build.remove();
});

interface Made {
  share_uuid: string;
  token: string;
  url: string;
}
const link = (node: string, body: Record<string, unknown>): Promise<Made> => dataOf<Made>(as(seeder.client, owner, 'POST', `/api/nodes/${node}/shares`, body));
const name = (base: string) => `${base} ${(counter += 1)}`;
const unlock = (made: Made, password: unknown, headers: Record<string, string> = PAGE_FETCH) =>
  fetchRaw(store, `/public/${made.token}/unlock`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ password }) });
const cookieOf = (res: { headers: Record<string, string | string[] | undefined> }): string => String(res.headers['set-cookie']).split(';')[0] as string;

describe('a link opened in a browser', () => {
  it('gets the app\'s page under its policy for a navigation; curl keeps the bytes, the listing and the envelopes', async () => {
    const file = await uploadFile(seeder.client, owner.session, 'home', `${name('flyer')}.txt`, 'flyer bytes');
    const made = await link(file, { type: 'public' });
    const page = await fetchRaw(store, made.url, { headers: NAVIGATION });
    expect({ status: page.status, body: page.body.toString(), type: page.headers['content-type'], challenge: page.headers['www-authenticate'] }).toEqual({
      status: 200,
      body: PAGE,
      type: 'text/html; charset=utf-8',
      challenge: undefined,
    });
    expect(page.headers['content-security-policy']).toMatch(/^default-src 'none'; script-src 'self'/);
    // A browser that sends no Sec-Fetch-* (older ones) is still a navigation when it asks for HTML.
    expect((await fetchRaw(store, made.url, { headers: { accept: 'text/html' } })).body.toString()).toBe(PAGE);

    for (const headers of [CURL, {}, { accept: 'text/html', 'sec-fetch-dest': 'iframe' }] as Array<Record<string, string>>) {
      const bytes = await fetchRaw(store, made.url, { headers });
      expect({ status: bytes.status, body: bytes.body.toString(), disposition: bytes.headers['content-disposition'] }).toMatchObject({ status: 200, body: 'flyer bytes', disposition: expect.stringMatching(/^attachment/) });
    }
    // The page's Download: the bytes, even as a navigation.
    const download = await fetchRaw(store, `${made.url}?download=1`, { headers: NAVIGATION });
    expect({ status: download.status, body: download.body.toString(), disposition: download.headers['content-disposition'] }).toMatchObject({ status: 200, body: 'flyer bytes', disposition: expect.stringMatching(/^attachment/) });

    const folder = await createFolder(seeder.client, owner.session, 'home', name('Reports'));
    await uploadFile(seeder.client, owner.session, folder, 'a.txt', 'aaa');
    const shared = await link(folder, { type: 'public' });
    expect((await fetchRaw(store, shared.url, { headers: NAVIGATION })).body.toString()).toBe(PAGE);
    expect((await fetchRaw(store, `${shared.url}/a.txt`, { headers: NAVIGATION })).body.toString()).toBe(PAGE);
    const listing = await fetchRaw(store, shared.url, { headers: CURL });
    expect(listing.json()).toMatchObject({ status: 'success', msg: 'shared folder', data: { type: 'Dir', entries: [{ name: 'a.txt', type: 'File', size: 3 }] } });
    expect((await fetchRaw(store, `${shared.url}/a.txt`, { headers: CURL })).body.toString()).toBe('aaa');

    const upload = await link(folder, { type: 'upload' });
    expect((await fetchRaw(store, upload.url, { headers: NAVIGATION })).body.toString()).toBe(PAGE);
    const refused = await fetchRaw(store, upload.url, { headers: CURL });
    expect({ status: refused.status, body: refused.json() }).toEqual({ status: 403, body: { status: 'error', code: 'forbidden', msg: 'this link accepts uploads only' } });
  });

  it('answers the page what it shows (?info) for each kind of link, nothing of an upload link\'s folder', async () => {
    const file = await uploadFile(seeder.client, owner.session, 'home', `${name('notes')}.txt`, 'twelve bytes');
    const expires = store.clock.now() + 86_400_000;
    const made = await link(file, { type: 'public', expires });
    const info = await fetchRaw(store, `${made.url}?info`, { headers: PAGE_FETCH });
    expect(info.json()).toEqual({ status: 'success', msg: 'link', data: { type: 'File', name: expect.stringMatching(/^notes \d+\.txt$/), size: 12, updated: expect.any(Number), content_type: 'text/plain', expires } });

    const folder = await createFolder(seeder.client, owner.session, 'home', name('Holiday'));
    const inner = await createFolder(seeder.client, owner.session, folder, 'Day 1');
    await uploadFile(seeder.client, owner.session, inner, 'beach.txt', 'sand');
    const shared = await link(folder, { type: 'public' });
    expect((await fetchRaw(store, `${shared.url}?info`)).json()).toMatchObject({ data: { type: 'Dir', name: expect.stringMatching(/^Holiday/), expires: null, entries: [{ name: 'Day 1', type: 'Dir' }] } });
    expect((await fetchRaw(store, `${shared.url}/Day%201?info`)).json()).toMatchObject({ data: { type: 'Dir', name: 'Day 1', entries: [{ name: 'beach.txt', type: 'File', size: 4 }] } });
    expect((await fetchRaw(store, `${shared.url}/Day%201/beach.txt?info`)).json()).toMatchObject({ data: { type: 'File', name: 'beach.txt', size: 4 } });
    const missing = await fetchRaw(store, `${shared.url}/nope?info`);
    expect({ status: missing.status, msg: (missing.json() as { msg: string }).msg }).toEqual({ status: 404, msg: 'nothing of that name behind this link' });

    const upload = await link(folder, { type: 'upload' });
    expect((await fetchRaw(store, `${upload.url}?info`)).json()).toEqual({ status: 'success', msg: 'link', data: { type: 'Upload', expires: null } });
    expect((await fetchRaw(store, `${upload.url}/Day%201?info`)).status).toBe(404);
  });

  it('previews only passive types inline (?preview), under the sandbox; anything else stays an attachment', async () => {
    const text = await link(await uploadFile(seeder.client, owner.session, 'home', `${name('plain')}.txt`, 'hello'), { type: 'public' });
    const html = await link(await uploadFile(seeder.client, owner.session, 'home', `${name('page')}.html`, '<script>alert(1)</script>'), { type: 'public' });
    const inline = await fetchRaw(store, `${text.url}?preview`);
    expect({ disposition: inline.headers['content-disposition'], csp: inline.headers['content-security-policy'], body: inline.body.toString() }).toMatchObject({ disposition: expect.stringMatching(/^inline/), csp: expect.stringMatching(/^sandbox;/), body: 'hello' });
    expect((await fetchRaw(store, `${html.url}?preview`)).headers['content-disposition']).toMatch(/^attachment/);
  });

  it('a gone link: its page with 404 or 410 for a navigation, the envelopes for programs', async () => {
    const file = await uploadFile(seeder.client, owner.session, 'home', `${name('old')}.txt`, 'old');
    const soon = await link(file, { type: 'public', expires: store.clock.now() + 60_000 });
    const removed = await link(file, { type: 'public' });
    await dataOf(as(seeder.client, owner, 'DELETE', `/api/shares/${removed.share_uuid}`));
    store.clock.advance(61_000);
    const cases: Array<[string, number, string]> = [
      [soon.url, 410, 'link_expired'],
      [removed.url, 404, 'not_found'],
      [`${store.url}/public/${'x'.repeat(43)}`, 404, 'not_found'],
      [`${store.url}/public/short`, 404, 'not_found'],
    ];
    for (const [url, status, code] of cases) {
      const page = await fetchRaw(store, url, { headers: NAVIGATION });
      expect({ status: page.status, body: page.body.toString() }, url).toEqual({ status, body: PAGE });
      const program = await fetchRaw(store, url, { headers: CURL });
      expect({ status: program.status, body: program.json() }, url).toMatchObject({ status, body: { status: 'error', code } });
    }
  });
});

describe('a password link', () => {
  it('challenges programs with Basic as before, never the page (navigation, ?info, its own fetches)', async () => {
    const file = await uploadFile(seeder.client, owner.session, 'home', `${name('secret')}.txt`, 'classified');
    const made = await link(file, { type: 'public', password: 'letmein' });
    const page = await fetchRaw(store, made.url, { headers: NAVIGATION });
    expect({ status: page.status, body: page.body.toString(), challenge: page.headers['www-authenticate'] }).toEqual({ status: 200, body: PAGE, challenge: undefined });
    const program = await fetchRaw(store, made.url, { headers: CURL });
    expect({ status: program.status, challenge: program.headers['www-authenticate'] }).toEqual({ status: 401, challenge: 'Basic realm="driveway link", charset="UTF-8"' });
    expect((await fetchRaw(store, made.url, { headers: { ...CURL, ...basic('letmein') } })).body.toString()).toBe('classified');
    for (const [url, headers] of [[`${made.url}?info`, CURL], [`${made.url}?download=1`, PAGE_FETCH]] as const) {
      const quiet = await fetchRaw(store, url, { headers });
      expect({ status: quiet.status, challenge: quiet.headers['www-authenticate'], code: (quiet.json() as { code: string }).code }, url).toEqual({ status: 401, challenge: undefined, code: 'unauthenticated' });
    }
  });

  it('unlocks in the page: a cookie for that link\'s path only, an hour, HttpOnly and SameSite=Strict; a wrong password is 401 in the envelope, no cookie', async () => {
    const folder = await createFolder(seeder.client, owner.session, 'home', name('Private'));
    await uploadFile(seeder.client, owner.session, folder, 'inside.txt', 'inside bytes');
    const made = await link(folder, { type: 'public', password: 'open sesame' });
    const other = await link(await uploadFile(seeder.client, owner.session, 'home', `${name('other')}.txt`, 'other'), { type: 'public', password: 'open sesame' });

    const wrong = await unlock(made, 'sesame');
    expect({ status: wrong.status, cookie: wrong.headers['set-cookie'], challenge: wrong.headers['www-authenticate'], body: wrong.json() }).toEqual({
      status: 401,
      cookie: undefined,
      challenge: undefined,
      body: { status: 'error', code: 'unauthenticated', msg: 'wrong password for this link' },
    });
    for (const body of [undefined, '', 'x'.repeat(1025), 42]) expect((await unlock(made, body)).status).toBe(400);

    const before = store.clock.now();
    const right = await unlock(made, 'open sesame');
    const { expires } = (right.json() as { data: { expires: number } }).data;
    expect(expires - before).toBeGreaterThanOrEqual(UNLOCK_SEC * 1000);
    expect(expires - store.clock.now()).toBeLessThanOrEqual(UNLOCK_SEC * 1000);
    const setCookie = String(right.headers['set-cookie']);
    expect(setCookie).toMatch(new RegExp(`^driveway_link=v1\\.[^;]+; Path=/public/${made.token}; Max-Age=3600; HttpOnly; SameSite=Strict$`));
    // Over TLS (the request's origin is https, directly or through a trusted proxy): Secure too.
    expect(unlockCookieHeader(made.token, 'v', true)).toBe(`driveway_link=v; Path=/public/${made.token}; Max-Age=3600; HttpOnly; SameSite=Strict; Secure`);
    const cookie = { cookie: cookieOf(right) };
    expect((await fetchRaw(store, `${made.url}?info`, { headers: { ...PAGE_FETCH, ...cookie } })).json()).toMatchObject({ data: { type: 'Dir', entries: [{ name: 'inside.txt' }] } });
    expect((await fetchRaw(store, `${made.url}/inside.txt?download=1`, { headers: { ...PAGE_FETCH, ...cookie } })).body.toString()).toBe('inside bytes');
    // Not another link's, even with the same password and the cookie sent there by hand.
    expect((await fetchRaw(store, `${other.url}?info`, { headers: { ...PAGE_FETCH, ...cookie } })).status).toBe(401);
    // Tampered: refused.
    expect((await fetchRaw(store, `${made.url}?info`, { headers: { cookie: `${cookie.cookie.slice(0, -2)}AA` } })).status).toBe(401);

    // Bound to the link's current password: another hash (a new or removed password) is no unlock.
    const opened = await findLink(store.ctx, made.token);
    expect(await isUnlocked(store.ctx, opened, cookie.cookie)).toBe(true);
    expect(await isUnlocked(store.ctx, { ...opened, share: { ...opened.share, password_hash: `${opened.share.password_hash}x` } }, cookie.cookie)).toBe(false);

    // An hour, then the page asks again.
    store.clock.advance(UNLOCK_SEC * 1000);
    expect((await fetchRaw(store, `${made.url}?info`, { headers: cookie })).status).toBe(401);

    // Removing the link ends it.
    const again = { cookie: cookieOf(await unlock(made, 'open sesame')) };
    expect((await fetchRaw(store, `${made.url}?info`, { headers: again })).status).toBe(200);
    await dataOf(as(seeder.client, owner, 'DELETE', `/api/shares/${made.share_uuid}`));
    expect((await fetchRaw(store, `${made.url}?info`, { headers: again })).status).toBe(404);
  });

  it('counts wrong passwords in the page against the same limiter as Basic', async () => {
    const made = await link(await uploadFile(seeder.client, owner.session, 'home', `${name('guarded')}.txt`, 'guarded'), { type: 'public', password: 'correct horse' });
    for (let i = 0; i < store.config.store.loginMaxFailures - 1; i += 1) expect((await unlock(made, `guess ${i}`)).status).toBe(401);
    expect((await fetchRaw(store, made.url, { headers: basic('one more guess') })).status).toBe(401);
    const blocked = await unlock(made, 'correct horse');
    expect({ status: blocked.status, cookie: blocked.headers['set-cookie'], retry: Number(blocked.headers['retry-after']) }).toEqual({ status: 429, cookie: undefined, retry: expect.any(Number) });
    expect((await fetchRaw(store, made.url, { headers: basic('correct horse') })).status).toBe(429);
    store.clock.advance(store.config.store.loginWindowSec * 1000 + 1000);
    expect((await unlock(made, 'correct horse')).status).toBe(200);
  });

  it('an upload link with a password takes files with the cookie, as with Basic', async () => {
    const folder = await createFolder(seeder.client, owner.session, 'home', name('Inbox'));
    const made = await link(folder, { type: 'upload', password: 'drop it' });
    const form = multipartFile('scan.pdf', 'pdf bytes');
    const refused = await fetchRaw(store, `${made.url}/upload`, { method: 'POST', headers: { ...form.headers, ...PAGE_FETCH }, body: form.body });
    expect({ status: refused.status, challenge: refused.headers['www-authenticate'] }).toEqual({ status: 401, challenge: undefined });
    const cookie = cookieOf(await unlock(made, 'drop it'));
    const sent = await fetchRaw(store, `${made.url}/upload`, { method: 'POST', headers: { ...form.headers, ...PAGE_FETCH, cookie }, body: form.body });
    expect(sent.json()).toEqual({ status: 'success', msg: 'file uploaded', data: { name: 'scan.pdf', size: 9 } });
    expect(await readChildNames(store, folder)).toEqual(['scan.pdf']);
  });
});
