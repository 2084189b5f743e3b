/**
 * What the login flows write for the clients (bridge/nextcloud/login-flow.ts): the app password's
 * name made of a User-Agent, and Login Flow v1's `nc://` address as Nextcloud writes it (PHP's
 * urlencode of the login and the password) and as the Android app reads it back (split on `&`,
 * each value through URLDecoder: `+` a space, `%XX` a byte).
 */
import { describe, expect, it } from 'vitest';
import { clientNameOf, ncLoginUrl } from '../../../src/bridge/nextcloud/login-flow.js';

/** The Android app's parseLoginDataUrl, as its source reads: split on '&', server as is, user and password URL-decoded. */
function parseAsAndroid(url: string): { server: string; user: string; password: string } {
  const values = url.slice('nc://login/'.length).split('&');
  expect(values.length).toBe(3);
  const decode = (v: string) => decodeURIComponent(v.replace(/\+/g, ' '));
  const [server = '', user = '', password = ''] = values;
  return { server: server.replace(/^server:/, ''), user: decode(user.replace(/^user:/, '')), password: decode(password.replace(/^password:/, '')) };
}

describe('the login flows\' names and addresses', () => {
  it('writes the nc:// address as Nextcloud does, and the Android app reads back every character', () => {
    expect(ncLoginUrl('https://drive.example', 'ada@example.com', 'abcdef-ghijkl-mnopqr-stuvwx')).toBe(
      'nc://login/server:https://drive.example&user:ada%40example.com&password:abcdef-ghijkl-mnopqr-stuvwx',
    );
    const odd = "a b+c&d=e%f!'()*~é";
    expect(ncLoginUrl('http://127.0.0.1:8080', odd, 'p')).toBe('nc://login/server:http://127.0.0.1:8080&user:a+b%2Bc%26d%3De%25f%21%27%28%29%2A%7E%C3%A9&password:p');
    expect(parseAsAndroid(ncLoginUrl('http://127.0.0.1:8080', odd, `${odd}2`))).toEqual({ server: 'http://127.0.0.1:8080', user: odd, password: `${odd}2` });
  });

  it('names the app password after the User-Agent: control characters and runs of spaces gone, at most 100 characters', () => {
    expect(clientNameOf('Nextcloud desktop (Linux)')).toBe('Nextcloud desktop (Linux)');
    expect(clientNameOf('  evil\r\nname\u0000\u0085x  ')).toBe('evil name x');
    expect(clientNameOf('é'.repeat(150))).toBe('é'.repeat(100));
    expect(clientNameOf(undefined)).toBe('Unknown client');
    expect(clientNameOf('\u0001\u0002')).toBe('Unknown client');
  });
});
