import { describe, expect, it } from 'vitest';
import {
  HrefError,
  childHref,
  decodeRequestPath,
  encodeHref,
  encodeSegment,
  normalizeName,
  parseDestination,
  parseHrefTarget,
  wantsNfd,
  type HrefErrorKind,
} from '../../../src/bridge/href.js';

function errorKind(fn: () => unknown): HrefErrorKind | 'no error' | 'other error' {
  try {
    fn();
    return 'no error';
  } catch (err) {
    return err instanceof HrefError ? err.kind : 'other error';
  }
}

describe('decodeRequestPath', () => {
  it('splits a plain path into segments', () => {
    const p = decodeRequestPath('/home/docs/a.txt');
    expect(p.segments).toEqual(['home', 'docs', 'a.txt']);
    expect(p.path).toBe('/home/docs/a.txt');
    expect(p.trailingSlash).toBe(false);
  });

  it('treats the root and a trailing slash as collections', () => {
    expect(decodeRequestPath('/')).toMatchObject({ segments: [], path: '/', trailingSlash: true });
    expect(decodeRequestPath('/home/docs/')).toMatchObject({ segments: ['home', 'docs'], trailingSlash: true });
  });

  it('decodes percent escapes, including the characters hrefs must escape', () => {
    const p = decodeRequestPath('/home/a%23b.txt/c%3Fd/e%25f/g%2Bh/sp%20ace/%26%3B/caf%C3%A9/%F0%9F%98%80');
    expect(p.segments).toEqual(['home', 'a#b.txt', 'c?d', 'e%f', 'g+h', 'sp ace', '&;', 'café', '😀']);
  });

  it('keeps a literal + as a plus (paths are not form-encoded)', () => {
    expect(decodeRequestPath('/g+h').segments).toEqual(['g+h']);
  });

  it('drops the query string', () => {
    expect(decodeRequestPath('/home/a.txt?x=1&y=%zz').segments).toEqual(['home', 'a.txt']);
  });

  it('collapses empty segments from doubled slashes', () => {
    expect(decodeRequestPath('//home///docs//').segments).toEqual(['home', 'docs']);
  });

  it('resolves dot segments, escaped or not', () => {
    expect(decodeRequestPath('/home/./docs/../pics/a').path).toBe('/home/pics/a');
    expect(decodeRequestPath('/home/x/%2e%2e/y').path).toBe('/home/y');
    expect(decodeRequestPath('/home/x/%2E/y').path).toBe('/home/x/y');
    expect(decodeRequestPath('/home/x/..')).toMatchObject({ path: '/home', trailingSlash: true });
  });

  it('refuses to climb above the root', () => {
    expect(errorKind(() => decodeRequestPath('/..'))).toBe('escapes-root');
    expect(errorKind(() => decodeRequestPath('/home/../../etc/passwd'))).toBe('escapes-root');
    expect(errorKind(() => decodeRequestPath('/%2e%2e/x'))).toBe('escapes-root');
  });

  it('types malformed escapes instead of throwing URIError', () => {
    expect(errorKind(() => decodeRequestPath('/a%zz'))).toBe('malformed-escape');
    expect(errorKind(() => decodeRequestPath('/a%'))).toBe('malformed-escape');
    expect(errorKind(() => decodeRequestPath('/a%4'))).toBe('malformed-escape');
  });

  it('refuses escapes that are not UTF-8', () => {
    expect(errorKind(() => decodeRequestPath('/caf%E9'))).toBe('invalid-utf8');
    expect(errorKind(() => decodeRequestPath('/%C0%AF'))).toBe('invalid-utf8');
    expect(errorKind(() => decodeRequestPath('/%ED%A0%80'))).toBe('invalid-utf8');
  });

  it('refuses NUL, encoded slashes and raw fragments', () => {
    expect(errorKind(() => decodeRequestPath('/a%00b'))).toBe('nul');
    expect(errorKind(() => decodeRequestPath('/a%2Fb'))).toBe('encoded-slash');
    expect(errorKind(() => decodeRequestPath('/frag/#ment'))).toBe('fragment');
  });

  it('refuses targets that are not paths', () => {
    expect(errorKind(() => decodeRequestPath('*'))).toBe('not-a-path');
    expect(errorKind(() => decodeRequestPath('home/a'))).toBe('not-a-path');
  });

  it('accepts the absolute form a proxy sends', () => {
    expect(decodeRequestPath('http://example.com:8080/home/a%20b?q').segments).toEqual(['home', 'a b']);
    expect(decodeRequestPath('https://example.com').path).toBe('/');
  });

  it('enforces path, segment and depth limits', () => {
    expect(errorKind(() => decodeRequestPath('/' + 'a'.repeat(20_000)))).toBe('path-too-long');
    expect(errorKind(() => decodeRequestPath('/' + 'a'.repeat(256)))).toBe('segment-too-long');
    expect(decodeRequestPath('/' + 'a'.repeat(255)).segments[0]).toHaveLength(255);
    expect(errorKind(() => decodeRequestPath('/' + '%C3%A9'.repeat(128)))).toBe('segment-too-long');
    expect(errorKind(() => decodeRequestPath('/a'.repeat(300)))).toBe('too-deep');
    expect(errorKind(() => decodeRequestPath('/a/b/c', { maxDepth: 2 }))).toBe('too-deep');
  });

  it('normalises segments to NFC for lookup but keeps what was sent', () => {
    const p = decodeRequestPath('/home/cafe%CC%81.txt');
    expect(p.segments).toEqual(['home', 'caf\u00e9.txt']);
    expect(p.rawSegments).toEqual(['home', 'cafe\u0301.txt']);
    expect(p.path).toBe('/home/caf\u00e9.txt');
  });

  it('reads latin1 characters as the raw bytes Node decoded them from', () => {
    // A Destination header with raw UTF-8 reaches us as latin1 characters.
    const raw = Buffer.from('/home/café', 'utf8').toString('latin1');
    expect(decodeRequestPath(raw).segments).toEqual(['home', 'café']);
  });

  it('never throws anything but HrefError on hostile input', () => {
    const samples = ['/%', '/%%%', '/%u0041', '/\u0000', '/a\uD800b', '/%F0%9F', '/' + '%'.repeat(1000), '/..%2f..', '/;/../..'];
    for (const s of samples) expect(errorKind(() => decodeRequestPath(s))).not.toBe('other error');
  });
});

describe('encodeSegment and encodeHref', () => {
  it('percent-encodes every reserved and unsafe character', () => {
    expect(encodeSegment("a b#c%d+e?f&g;h'i(j)k*l!m")).toBe('a%20b%23c%25d%2Be%3Ff%26g%3Bh%27i%28j%29k%2Al%21m');
    expect(encodeSegment('café😀')).toBe('caf%C3%A9%F0%9F%98%80');
    expect(encodeSegment('a:b@c=d,e$f')).toBe('a%3Ab%40c%3Dd%2Ce%24f');
    expect(encodeSegment('plain-name_1.txt~')).toBe('plain-name_1.txt~');
  });

  it('round-trips through decodeRequestPath', () => {
    const names = ['a#b.txt', 'c?d.txt', 'e%f.txt', 'g+h.txt', 'sp ace.txt', 'café.txt', "it's (1)*!.txt", '😀', '\\back', 'tab\there'];
    for (const name of names) {
      expect(decodeRequestPath(encodeHref(['home', name])).rawSegments).toEqual(['home', name]);
    }
  });

  it('replaces a lone surrogate instead of throwing', () => {
    expect(encodeSegment('a\uD800b')).toBe('a%EF%BF%BDb');
  });

  it('builds path-only hrefs with a trailing slash for collections', () => {
    expect(encodeHref([])).toBe('/');
    expect(encodeHref([], { collection: true })).toBe('/');
    expect(encodeHref(['home', 'my docs'], { collection: true })).toBe('/home/my%20docs/');
    expect(encodeHref(['home', 'a.txt'])).toBe('/home/a.txt');
  });

  it('answers NFD when asked (macOS WebDAVFS)', () => {
    expect(encodeHref(['café'], { nfd: true })).toBe('/cafe%CC%81');
    expect(childHref('/home/', 'café', { nfd: true })).toBe('/home/cafe%CC%81');
    expect(childHref('/home/', 'sub dir', { collection: true })).toBe('/home/sub%20dir/');
  });
});

describe('normalizeName and wantsNfd', () => {
  it('normalises to NFC and leaves ASCII alone', () => {
    expect(normalizeName('cafe\u0301')).toBe('caf\u00e9');
    expect(normalizeName('plain')).toBe('plain');
  });

  it('recognises Finder by its user agent only', () => {
    expect(wantsNfd('WebDAVFS/3.0.0 (03008000) Darwin/24.4.0 (arm64)')).toBe(true);
    expect(wantsNfd('Microsoft-WebDAV-MiniRedir/10.0.19045')).toBe(false);
    expect(wantsNfd('rclone/v1.60.0')).toBe(false);
    expect(wantsNfd(undefined)).toBe(false);
  });
});

describe('parseDestination', () => {
  it('accepts a path', () => {
    expect(parseDestination('/home/b%20c.txt', '127.0.0.1:8080')).toEqual({
      kind: 'local',
      path: expect.objectContaining({ segments: ['home', 'b c.txt'] }),
    });
  });

  it('accepts an absolute URL on the request host', () => {
    const t = parseDestination('http://127.0.0.1:8080/home/x/', '127.0.0.1:8080');
    expect(t).toMatchObject({ kind: 'local', path: { segments: ['home', 'x'], trailingSlash: true } });
  });

  it('compares hosts case-insensitively and with default ports', () => {
    expect(parseDestination('http://Example.COM/a', 'example.com').kind).toBe('local');
    expect(parseDestination('http://example.com:80/a', 'example.com').kind).toBe('local');
    expect(parseDestination('https://example.com/a', 'example.com:443').kind).toBe('local');
    expect(parseDestination('http://user@example.com/a', 'example.com').kind).toBe('local');
    expect(parseDestination('http://[::1]:8080/a', '[::1]:8080').kind).toBe('local');
  });

  it("reports another authority as 'other-host'", () => {
    expect(parseDestination('http://elsewhere.example/a', 'example.com')).toEqual({ kind: 'other-host' });
    expect(parseDestination('http://example.com:81/a', 'example.com')).toEqual({ kind: 'other-host' });
    expect(parseDestination('ftp://example.com/a', 'example.com')).toEqual({ kind: 'other-host' });
  });

  it('accepts any of several request hosts (Host, X-Forwarded-Host)', () => {
    expect(parseHrefTarget('https://dav.example.org/a', ['127.0.0.1:8080', 'dav.example.org']).kind).toBe('local');
  });

  it('counts any authority as local when no host is known', () => {
    expect(parseDestination('http://anything/a', []).kind).toBe('local');
  });

  it('types malformed destinations', () => {
    expect(errorKind(() => parseDestination('a/b', 'h'))).toBe('not-a-path');
    expect(errorKind(() => parseDestination('//h/a', 'h'))).toBe('not-a-path');
    expect(errorKind(() => parseDestination('http://h/%zz', 'h'))).toBe('malformed-escape');
    expect(errorKind(() => parseDestination('http://h/../x', 'h'))).toBe('escapes-root');
    expect(errorKind(() => parseDestination('http://h:99999999/x', 'h'))).toBe('not-a-path');
    expect(errorKind(() => parseDestination('http://h/a#frag', 'h'))).toBe('fragment');
  });
});
