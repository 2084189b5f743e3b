/**
 * The patched webdav-server header lookup (src/bridge/library-patches.ts) answers exactly what
 * the library's own `find` answers, on the headers real clients send and on awkward ones.
 */
import { describe, expect, it } from 'vitest';
import { v2 as webdav } from 'webdav-server';

type Find = (this: unknown, name: string, defaultValue?: string | null) => string | null;
const proto = webdav.RequestContextHeaders.prototype as unknown as { find: Find };
// Taken before the patch module loads (this file imports it only below).
const original = proto.find;

const requests: Array<Record<string, string | string[]>> = [
  { host: '127.0.0.1:8081', 'content-length': '4096', authorization: 'Basic YTpi', 'user-agent': 'curl/7.88.1', accept: '*/*' },
  { host: 'h', depth: 'infinity', 'content-type': 'application/xml', if: '(<opaquelocktoken:1>)', translate: 'f' },
  { host: 'h', depth: '  1 ', 'x-expected-entity-length': '12', 'transfer-encoding': 'Chunked' },
  { host: '', depth: '', 'content-length': '   ', source: 'T', 'set-cookie': ['a=1', 'b=2'] },
  { 'content-length': '7', contentlength: '9', 'Content Length': '11' },
  { contentlength: '', 'content-length': '5' },
  {},
];
const names = ['Host', 'Depth', 'Content-length', 'content-length', 'contentLength', 'source', 'translate', 'If', 'Authorization', 'Destination', 'Overwrite', 'Set-Cookie', 'X-Expected-Entity-Length', 'Content Length'];

describe('webdav-server header lookup patch', () => {
  it('answers what the library answered, for every name and default', async () => {
    const { findHeader } = await import('../../../src/bridge/library-patches.js');
    expect(proto.find).toBe(findHeader);
    for (const headers of requests) {
      for (const name of names) {
        for (const fallback of [undefined, null, 'dflt']) {
          const before = original.call({ headers }, name, fallback);
          const after = findHeader.call({ headers }, name, fallback);
          expect({ headers, name, fallback, found: after }).toEqual({ headers, name, fallback, found: before });
        }
      }
    }
  });

  it('is what the library uses when it builds a request context', async () => {
    await import('../../../src/bridge/library-patches.js');
    const context = new webdav.RequestContextHeaders({ host: 'example.test', depth: 'infinity', 'content-length': '12' });
    expect([context.host, context.depth, context.contentLength]).toEqual(['example.test', -1, 12]);
  });
});
