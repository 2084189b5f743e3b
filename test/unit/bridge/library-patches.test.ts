/**
 * The patched webdav-server header lookup (src/bridge/library-patches.ts): the library's answers,
 * except '' for a missing Depth, so building a request context throws nothing inside.
 */
import { describe, expect, it } from 'vitest';
import { v2 as webdav } from 'webdav-server';
import { findHeader, libraryFind } from '../../../src/bridge/library-patches.js';

const requests: Array<Record<string, string | string[]>> = [
  { host: '127.0.0.1:8081', 'content-length': '4096', authorization: 'Basic YTpi', 'user-agent': 'curl/7.88.1', accept: '*/*' },
  { host: 'h', depth: 'infinity', 'content-type': 'application/xml', if: '(<opaquelocktoken:1>)', translate: 'f' },
  { host: 'h', depth: '  1 ', 'x-expected-entity-length': '12', 'transfer-encoding': 'Chunked' },
  { host: '', depth: '', 'content-length': '   ', source: 'T', 'set-cookie': ['a=1', 'b=2'] },
  {},
];
const names = ['Host', 'Depth', 'Content-length', 'contentLength', 'source', 'translate', 'If', 'Authorization', 'Destination', 'Set-Cookie'];

describe('webdav-server header lookup patch', () => {
  it('is the lookup the library uses', () => {
    expect((webdav.RequestContextHeaders.prototype as unknown as { find: unknown }).find).toBe(findHeader);
  });

  it("answers what the library answers, except '' for a missing Depth asked without a default", () => {
    for (const headers of requests) {
      for (const name of names) {
        for (const fallback of [undefined, null, 'dflt']) {
          const library = libraryFind.call({ headers }, name, fallback);
          const expected = library === null && name === 'Depth' ? '' : library;
          expect({ headers, name, fallback, found: findHeader.call({ headers }, name, fallback) }).toEqual({ headers, name, fallback, found: expected });
        }
      }
    }
  });

  it('builds request contexts with and without Depth', () => {
    const make = (headers: Record<string, string>) => new webdav.RequestContextHeaders(headers);
    expect(make({ host: 'example.test', depth: 'infinity', 'content-length': '12' })).toMatchObject({ host: 'example.test', depth: -1, contentLength: 12 });
    expect(make({ host: 'example.test', depth: '1' }).depth).toBe(1);
    // Without Depth the library's field is NaN instead of undefined; the bridge never reads it.
    expect(make({ host: 'example.test' })).toMatchObject({ host: 'example.test', depth: Number.NaN, contentLength: 0 });
  });
});
