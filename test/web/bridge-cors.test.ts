/**
 * The web app's way to the bridge (issue 23 item 2: tus "reachable from the store's origin too,
 * for the web app"), in Debian's Chromium, which enforces CORS and the app's CSP for real: a page
 * of the app, on the store's origin, signed in as a person does, sends a tus upload to the
 * bridge's origin with fetch and the session token the app holds as `Authorization: Bearer`;
 * the file is then in Ada's home (asked through the REST API, no PROPFIND). A page on another
 * origin sending the same request with the same token is refused by the browser (the bridge's
 * preflight answer names no origin of it), and nothing is written.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { nodeId } from '../../src/store-client/index.js';
import { requireBinary } from '../helpers/require-binary.js';
import type { TestUser } from '../helpers/store-fixture.js';
import { signInThroughForm, tokenOf, webSuiteFixture } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');

interface TusOutcome {
  created?: number;
  location?: string | null;
  patched?: number;
  offset?: string | null;
  failure?: string;
}

/**
 * A tus upload (creation, then one PATCH) run by the page itself with fetch: what tus-js-client
 * does in a browser. A string: this file is compiled without the DOM's types.
 */
function tusFromPage(page: Page, folderUrl: string, token: string, name: string, text: string): Promise<TusOutcome> {
  return page.evaluate(`(async () => {
    const out = {};
    try {
      const body = new TextEncoder().encode(${JSON.stringify(text)});
      const auth = { Authorization: 'Bearer ' + ${JSON.stringify(token)}, 'Tus-Resumable': '1.0.0' };
      const created = await fetch(${JSON.stringify(folderUrl)}, {
        method: 'POST',
        headers: { ...auth, 'Upload-Length': String(body.length), 'Upload-Metadata': 'filename ' + btoa(${JSON.stringify(name)}) },
      });
      out.created = created.status;
      out.location = created.headers.get('Location');
      const patched = await fetch(new URL(out.location, ${JSON.stringify(folderUrl)}), {
        method: 'PATCH',
        headers: { ...auth, 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream' },
        body,
      });
      out.patched = patched.status;
      out.offset = patched.headers.get('Upload-Offset');
    } catch (err) {
      out.failure = String(err);
    }
    return out;
  })()`);
}

chromiumBinary.describe('a tus upload from the web app\'s origin to the bridge', () => {
  const f = webSuiteFixture(chromiumBinary.path, { bridge: true });
  let ada: TestUser;
  let elsewhere: Server;
  let elsewhereUrl: string;

  beforeAll(async () => {
    ada = await f.newUser({ fullname: 'Ada Lovelace' });
    // A page on another origin (another port of this machine), as any other site would be.
    elsewhere = createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>elsewhere</title><p>another site</p>'));
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/`;
  }, 120_000);
  afterAll(async () => {
    await new Promise((resolve) => elsewhere?.close(resolve));
  });

  const homeOf = async (): Promise<Array<{ name: string; sizeBytes: number }>> => f.client.listFolder(ada.session, nodeId('home'));

  it('uploads with the token the app holds, across origins, and the file is in Ada\'s home', async () => {
    const watched = await f.openPage();
    const { page } = watched;
    await page.goto(`${f.base}/files`);
    await signInThroughForm(page, ada.email, ada.password);
    await expect.poll(() => tokenOf(page)).toBeTruthy();
    const token = (await tokenOf(page)) as string;
    const folderUrl = `${f.davUrl}/home/`;

    const outcome = await tusFromPage(page, folderUrl, token, 'from-the-browser.txt', 'uploaded from the web app\n');
    // Location and Upload-Offset readable: the bridge exposed them to this origin.
    expect(outcome).toEqual({ created: 201, location: expect.stringMatching(new RegExp(`^${(f.davUrl ?? '').replace(/[.]/g, '\\.')}/remote\\.php/dav/tus/[^/]+/[0-9a-f-]{36}$`)), patched: 204, offset: '26' });
    const file = (await homeOf()).find((e) => e.name === 'from-the-browser.txt');
    expect(file?.sizeBytes).toBe(26);
    // The only requests that left the store's origin went to the bridge (the preflights included).
    expect(watched.foreign.length).toBeGreaterThan(0);
    expect(watched.foreign.every((url) => url.startsWith(`${f.davUrl}/`))).toBe(true);
    expect(watched.problems).toEqual([]);
  });

  it('is refused by the browser on a page of another origin, with the same token, and nothing is written', async () => {
    const { page } = await f.openPage();
    await page.goto(elsewhereUrl);
    const outcome = await tusFromPage(page, `${f.davUrl}/home/`, ada.session.token, 'from-elsewhere.txt', 'should not land\n');
    expect(outcome.created).toBeUndefined();
    expect(outcome.failure).toMatch(/TypeError: Failed to fetch/);
    expect((await homeOf()).map((e) => e.name)).not.toContain('from-elsewhere.txt');
  });
});
