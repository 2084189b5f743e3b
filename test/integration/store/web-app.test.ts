/**
 * The store serves the web app (src/store/web-app.ts) beside the REST API: its page for a
 * browser's GET of any path outside the API's namespaces, with the app's strict policy and
 * no-cache; its hashed assets immutable for a year, gzipped when accepted; never a page for an
 * API path or a non-browser request (the envelope stays), never a file outside the build's
 * assets; without a build a warning at start and a 404 saying how to build it. The build folder
 * here is a small one written by the test (store.webDir); test/web/ runs the real one in Chromium.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureLog } from '../../helpers/log-capture.js';
import { startTestStore, type TestStore } from '../../helpers/start-store.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

// Calls to its own origin and to the WebDAV bridge's (bridge.publicUrl below), where its tus uploads go.
const APP_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' https://dav.example.org; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
const PAGE = '<!doctype html><html lang="en"><head><script type="module" src="/app/assets/index-AbC123_x.js"></script></head><body><div id="app"></div></body></html>';
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(4000))});`;
const HTML = { accept: 'text/html,application/xhtml+xml' };

describe('the web app on the store\'s listener', () => {
  const build = makeTmpDir('driveway-web-app-');
  let store: TestStore;

  beforeAll(async () => {
    mkdirSync(path.join(build.dir, 'app/assets'), { recursive: true });
    writeFileSync(path.join(build.dir, 'index.html'), PAGE);
    writeFileSync(path.join(build.dir, 'app/assets/index-AbC123_x.js'), SCRIPT);
    writeFileSync(path.join(build.dir, 'secret.txt'), 'not an asset');
    store = await startTestStore({ flags: { 'store.webDir': build.dir, 'bridge.publicUrl': 'https://dav.example.org/drive/' } });
  });
  afterAll(async () => {
    await store?.close();
    build.remove();
  });

  it('answers its page for a browser\'s GET of /, an app path and a deep link, with the app\'s policy and no-cache', async () => {
    for (const url of ['/', '/sign-in', '/connect?from=bookmark', '/files/home/reports']) {
      const res = await store.app.inject({ method: 'GET', url, headers: HTML });
      expect(res.statusCode, url).toBe(200);
      expect(res.body).toBe(PAGE);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toBe(APP_CSP);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['x-frame-options']).toBe('DENY');
    }
  });

  it('serves a hashed asset for a year, gzipped when the client accepts it', async () => {
    const plain = await store.app.inject({ method: 'GET', url: '/app/assets/index-AbC123_x.js' });
    expect(plain.statusCode).toBe(200);
    expect(plain.body).toBe(SCRIPT);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-encoding']).toBeUndefined();
    const zipped = await store.app.inject({ method: 'GET', url: '/app/assets/index-AbC123_x.js', headers: { 'accept-encoding': 'gzip, br' } });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toBe('Accept-Encoding');
    expect(Number(zipped.headers['content-length'])).toBeLessThan(SCRIPT.length / 10);
    expect(gunzipSync(zipped.rawPayload).toString('utf8')).toBe(SCRIPT);
  });

  it('serves nothing else of the build folder, and no page under the assets\' path', async () => {
    for (const url of ['/app/assets/nope.js', '/app/assets/..%2Fsecret.txt', '/app/assets/%2e%2e%2f%2e%2e%2fsecret.txt', '/secret.txt', '/index.html/x']) {
      const res = await store.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.body, url).not.toContain('not an asset');
      expect(res.json(), url).toMatchObject({ status: 'error' });
    }
    // A browser asking for a missing asset gets no page either (the old build's name after an upgrade).
    const missing = await store.app.inject({ method: 'GET', url: '/app/assets/index-Old00000.js', headers: HTML });
    expect(missing.statusCode).toBe(404);
    expect(missing.body).not.toBe(PAGE);
  });

  it('keeps the REST API\'s answers: envelopes for API paths, for other methods and for clients that do not ask for HTML', async () => {
    const api = await store.app.inject({ method: 'GET', url: '/api/user', headers: HTML });
    expect(api.statusCode).toBe(401);
    expect(api.json()).toMatchObject({ status: 'error', code: 'unauthenticated' });
    const unknownApi = await store.app.inject({ method: 'GET', url: '/api/no-such-thing', headers: HTML });
    expect(unknownApi.statusCode).toBe(401);
    // (A link, /public/{token}, has a page for a browser: test/integration/store/link-pages.test.ts.)
    for (const url of ['/resources/auth/view/x/y/1/z.txt', '/resources/nope', '/upload', '/avatars/x', '/auth', '/healthz/x']) {
      const res = await store.app.inject({ method: 'GET', url, headers: HTML });
      expect(res.body, url).not.toBe(PAGE);
    }
    const curl = await store.app.inject({ method: 'GET', url: '/connect', headers: { accept: '*/*' } });
    expect(curl.statusCode).toBe(404);
    expect(curl.json()).toMatchObject({ status: 'error', code: 'not_implemented' });
    const post = await store.app.inject({ method: 'POST', url: '/connect', headers: HTML });
    expect(post.statusCode).toBe(404);
  });
});

describe('a store whose web app is not built', () => {
  it('warns at start and answers a browser a 404 saying how to build it; the API works', async () => {
    const empty = makeTmpDir('driveway-web-none-');
    const log = captureLog('warn');
    const store = await startTestStore({ flags: { 'store.webDir': empty.dir }, logger: log.logger });
    try {
      expect(log.lines().find((line) => line.msg === 'the web app is not built (no index.html there): run npm run build; the REST API works without it')).toMatchObject({ dir: empty.dir });
      const res = await store.app.inject({ method: 'GET', url: '/', headers: HTML });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ status: 'error', code: 'not_implemented', msg: 'the web app is not built on this server: run npm run build (the REST API works without it)' });
      expect((await store.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await store.close();
      empty.remove();
    }
  });
});
