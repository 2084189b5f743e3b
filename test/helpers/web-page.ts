/**
 * What the web app's suites (test/web/) share: a store serving the app built for the run
 * (web-build-global-setup.ts), Debian's Chromium, pages that record every request (to find one
 * leaving the origin) and every script error, axe-core run inside a page (through the DevTools
 * protocol, so the page's CSP stays as the store sent it), and signing in as a person does.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Clock } from '../../src/common/clock.js';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { launchChromium } from './chromium.js';
import { freeLoopbackPort } from './free-port.js';
import { bridgeFixture } from './start-bridge.js';
import { storeFixture, type StoreFixture, type StoreFixtureOptions, type TestUser } from './store-fixture.js';
import { uploadFile } from './seed.js';
import { makeTmpDir } from './tmp-dir.js';
import { apiCall, dataOf } from './user-api.js';

const AXE_SOURCE = readFileSync(path.resolve(import.meta.dirname, '../../node_modules/axe-core/axe.min.js'), 'utf8');

export interface WebFixture extends StoreFixture {
  browser: Browser;
  /** The store's origin, where the app is served. */
  base: string;
  /** The bridge's URL, when started with `bridge: true` (the store's WebDrive URLs point at it). */
  davUrl?: string;
  /** A fresh browser context (its own cookies and storage: another browser) with one page, watched. */
  openPage(options?: { width?: number; height?: number; clipboard?: boolean }): Promise<WatchedPage>;
}

export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** URLs requested that are not on the store's origin (none is expected). */
  foreign: string[];
  /** Script errors and console errors. */
  problems: string[];
}

/** A store serving the app (and with `bridge`, a WebDAV bridge in-process, as `npm start` runs both), and Chromium. */
export async function webFixture(browserPath: string, options: StoreFixtureOptions & { bridge?: boolean; bridgeClock?: Clock } = {}): Promise<WebFixture> {
  const { bridge: withBridge, bridgeClock, ...rest } = options;
  const bridgePort = withBridge ? await freeLoopbackPort() : undefined;
  const storeOptions = { ...rest, flags: { 'store.webDir': inject('webDir'), ...(bridgePort ? { 'bridge.port': bridgePort } : {}), ...rest.flags } };
  const f = bridgePort ? await bridgeFixture({ ...storeOptions, bridgePort, ...(bridgeClock ? { clock: bridgeClock } : {}) }) : await storeFixture(storeOptions);
  const browser = await launchChromium(browserPath);
  const base = f.store.url;
  const contexts: BrowserContext[] = [];
  return {
    ...f,
    browser,
    base,
    async openPage({ width = 1280, height = 800, clipboard = false } = {}) {
      const context = await browser.newContext({ viewport: { width, height } });
      contexts.push(context);
      if (clipboard) await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
      const page = await context.newPage();
      const watched: WatchedPage = { page, context, foreign: [], problems: [] };
      page.on('request', (request) => {
        const url = request.url();
        if (!url.startsWith(`${base}/`) && !url.startsWith('data:')) watched.foreign.push(url);
      });
      page.on('pageerror', (err) => watched.problems.push(`page error: ${err.message}`));
      page.on('console', (msg) => {
        // A refused API call is logged by Chromium as a failed resource load: an answer, not a fault.
        if (msg.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(msg.text())) watched.problems.push(`console: ${msg.text()}`);
      });
      return watched;
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => undefined);
      await browser.close();
      await f.close();
    },
  };
}

/** axe-core's serious and critical violations on the page as it is now, one line each. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Once per document (a navigation inside the app keeps it): 650 KB of script, compiled anew by
  // every evaluate, about a third of what a check costs.
  if (await page.evaluate("typeof axe === 'undefined'")) await page.evaluate(AXE_SOURCE);
  // A string: this file is compiled without the DOM's types.
  return page.evaluate(`axe.run(document).then(({ violations }) => violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => v.impact + ' ' + v.id + ': ' + v.help + ' (' + v.nodes.map((n) => n.target.join(' ')).join(', ') + ')'))`);
}

/** Runs axe-core and fails on a serious or critical violation. */
export async function expectAccessible(page: Page): Promise<void> {
  expect(await seriousViolations(page)).toEqual([]);
}

/**
 * What sticks out of the viewport sideways (the page would scroll): the elements whose right edge
 * passes it, as `tag.class "text"`; empty when the page fits.
 */
export function sidewaysOverflow(page: Page): Promise<string[]> {
  // A string: this file is compiled without the DOM's types. Text too long for its box (a long
  // word) sticks out of no element's box, so elements whose content is wider than them count too.
  return page.evaluate(`(() => {
    const width = document.documentElement.clientWidth;
    const pageWidth = document.documentElement.scrollWidth;
    if (pageWidth <= width) return [];
    const culprits = [...document.body.querySelectorAll('*')]
      .filter((el) => el.getBoundingClientRect().right > width + 0.5 || (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1))
      .map((el) => el.tagName.toLowerCase() + '.' + el.className + ' "' + (el.textContent ?? '').slice(0, 40) + '"');
    return ['the page is ' + pageWidth + ' px wide in a ' + width + ' px viewport', ...culprits];
  })()`);
}

/** What the page's clipboard holds (the context needs the clipboard permissions). */
export function clipboardText(page: Page): Promise<string> {
  return page.evaluate('navigator.clipboard.readText()');
}

/**
 * Where the suites keep their screenshots (issue 24: at 360 and 1,920 px, for people to look at,
 * never committed): DRIVEWAY_TEST_SCREENSHOTS, else driveway-web-screenshots in the temp folder.
 */
export const SCREENSHOT_DIR = process.env.DRIVEWAY_TEST_SCREENSHOTS ?? path.join(os.tmpdir(), 'driveway-web-screenshots');

/** Saves the whole page as `<name>.png` in SCREENSHOT_DIR. */
export async function keepScreenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** Signs in through the form, by label, as a person types. */
export async function signInThroughForm(page: Page, username: string, password: string): Promise<void> {
  await page.getByLabel('Username or email').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** The name of the store's session cookie (src/store/web-session.ts). */
export const SESSION_COOKIE = 'driveway_session';

/**
 * The session token of the page's browser (the store's HttpOnly cookie, which only the browser
 * itself reads: no page script can), to check it against the store as a bearer token.
 */
export async function tokenOf(page: Page): Promise<string | undefined> {
  const cookies = await page.context().cookies();
  return cookies.find((c) => c.name === SESSION_COOKIE)?.value;
}

/**
 * Ends the page's session in the store while the person is away from the app (the page on
 * about:blank), as when they signed out in another tab or the session expired meanwhile; answers
 * the ended token. The app's document goes first, with every call it still had under way: one
 * answered 401 after the logout would take that document to sign-in with its notice, and the next
 * page, loaded fresh, would find no session and nothing saying it ended (the notice lives in the
 * document). Waiting for the calls instead is no help: signing in is a navigation inside the
 * document, and Playwright's `networkidle` counts from the document's load, so it has usually
 * fired on the sign-in form already.
 */
export async function endSessionWhileAway(f: StoreFixture, page: Page): Promise<string> {
  const token = (await tokenOf(page)) ?? '';
  expect(token, 'the app keeps a session').not.toBe('');
  await page.goto('about:blank');
  expect((await apiCall(f.client, token, 'GET', '/api/user/logout')).status, 'the store ends the session').toBe(200);
  return token;
}

/**
 * Registers, in the calling `describe`, a web fixture (webFixture) made before its tests and
 * closed after them, and answers it: a stand-in that reads the fixture once `beforeAll` made it,
 * so a suite writes `const f = webSuiteFixture(path)` and uses `f` in its hooks and tests.
 */
export function webSuiteFixture(browserPath: string, options: Parameters<typeof webFixture>[1] = {}): WebFixture {
  let made: WebFixture | undefined;
  beforeAll(async () => {
    made = await webFixture(browserPath, options);
  }, 120_000);
  afterAll(async () => {
    await made?.close();
  });
  return new Proxy({} as WebFixture, {
    get(_target, key) {
      if (!made) throw new Error(`the web fixture is made in beforeAll; ${String(key)} was read before`);
      const value: unknown = Reflect.get(made, key);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(made) : value;
    },
  });
}

/** What a suite that runs a real client on what the page shows starts from (webDriveSuite). */
export interface WebDriveSuite {
  f: WebFixture;
  ada: TestUser;
  tmp: ReturnType<typeof makeTmpDir>;
}

/**
 * Registers, in the calling `describe`, a web fixture with the bridge, Ada with the WebDrive URL
 * `endpoint` and `minutes.txt` in her home, and a temp folder; all removed after the suite. The
 * returned object is filled in `beforeAll`.
 */
export function webDriveSuite(browserPath: string, endpoint: string, tmpPrefix: string): WebDriveSuite {
  const suite = {} as WebDriveSuite;
  beforeAll(async () => {
    suite.f = await webFixture(browserPath, { bridge: true });
    suite.ada = await suite.f.newUser({ fullname: 'Ada Lovelace' });
    dataOf(await apiCall(suite.f.client, suite.ada.session, 'POST', '/api/user/webdrive', { endpoint }));
    await uploadFile(suite.f.client, suite.ada.session, 'home', 'minutes.txt', 'minutes of the meeting\n');
    suite.tmp = makeTmpDir(tmpPrefix);
  }, 120_000);
  afterAll(async () => {
    await suite.f?.close();
    suite.tmp?.remove();
  });
  return suite;
}
