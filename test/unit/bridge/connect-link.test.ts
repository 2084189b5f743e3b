/**
 * The bridge's index page links to the web app's "Connect your drive" page (issue 24, item 2):
 * at `store.publicUrl` when set, else at the store of this process on the host the person
 * reached the bridge by; no link when neither is known or the Host header is not a plain host.
 */
import { describe, expect, it } from 'vitest';
import { connectPageUrl } from '../../../src/bridge/verbs/index-page.js';

describe('connectPageUrl', () => {
  it('uses the configured public URL of the store, whatever the Host', () => {
    expect(connectPageUrl({ url: 'https://files.example.org/' }, 'dav.example.org')).toBe('https://files.example.org/connect');
  });

  it('uses the host the bridge was reached by, on the port and scheme of the store of this process', () => {
    expect(connectPageUrl({ port: 8080, https: false }, '192.168.1.5:8081')).toBe('http://192.168.1.5:8080/connect');
    expect(connectPageUrl({ port: 8443, https: true }, 'nas.local')).toBe('https://nas.local:8443/connect');
    expect(connectPageUrl({ port: 8080, https: false }, '[::1]:8081')).toBe('http://[::1]:8080/connect');
  });

  it('gives no link when the web app is not known, or the Host is missing or not a plain host', () => {
    expect(connectPageUrl(undefined, 'nas.local:8081')).toBeUndefined();
    expect(connectPageUrl({ port: 8080, https: false }, undefined)).toBeUndefined();
    expect(connectPageUrl({ port: 8080, https: false }, 'evil.example/"><script>')).toBeUndefined();
  });
});
