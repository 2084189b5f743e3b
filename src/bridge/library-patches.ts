/**
 * The one change the bridge makes to webdav-server's own code, applied once when the bridge
 * module loads.
 *
 * The library builds a `RequestContextHeaders` for every request before our verb runs, and its
 * constructor (webdav-server 2.6, lib/server/v2/RequestContext.js) parses the Depth header as
 * `this.find('Depth').toLowerCase()` inside a try/catch: on every request WITHOUT a Depth header
 * (each PUT, GET, DELETE, ...) `find` answers null, the call throws a TypeError and the catch
 * sets `depth` to undefined. Creating that exception (its stack trace) cost ~13 µs of a request's
 * ~16 µs there, measured on curl's headers. Here a missing Depth answers '' instead: nothing
 * throws, and the library's `depth` field becomes NaN instead of undefined, which nothing reads
 * (our verbs read `req.headers.depth` themselves, and the library's own verbs are all replaced).
 * Every other lookup answers exactly what the library's `find` answers.
 */
import { v2 as webdav } from 'webdav-server';

type Find = ((this: unknown, name: string, defaultValue?: string | null) => string | null) & { library?: Find };

const proto = webdav.RequestContextHeaders.prototype as unknown as { find: Find };

/** The library's own lookup (also when this module is loaded twice, as test runners may). */
export const libraryFind: Find = proto.find.library ?? proto.find;

/** The library's lookup, with '' for a missing Depth asked without a default. */
export function findHeader(this: unknown, name: string, defaultValue: string | null = null): string | null {
  const value = libraryFind.call(this, name, defaultValue);
  return value === null && name === 'Depth' ? '' : value;
}

proto.find = Object.assign(findHeader, { library: libraryFind });
