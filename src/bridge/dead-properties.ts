/**
 * Dead properties as the verbs see them: the PropertyRepository contract (contracts/dav-properties.ts,
 * re-exported here) and the readers of client modification times. The repository itself is the
 * storage layer's (store/storage/dav-properties.ts), handed to the bridge by run.ts; the bridge
 * holds no SQL.
 *
 * Client mtimes come from rclone's `X-OC-Mtime` and PROPPATCH of `DAV:lastmodified`, Windows'
 * `Win32LastModifiedTime` and Cyberduck's `SAR:lastmodified` (docs/client-quirks.md §2, §3, §5);
 * the bridge reports them in getlastmodified.
 */
export * from '../contracts/dav-properties.js';

/**
 * Reads rclone's `X-OC-Mtime` (seconds since the epoch, possibly fractional) into milliseconds;
 * undefined when absent or not a plausible time (docs/client-quirks.md §3).
 */
export function parseOcMtime(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (!/^\d{1,12}(\.\d+)?$/.test(text)) return undefined;
  return Math.round(Number(text) * 1000);
}

/** A day in milliseconds: the margins of a client mtime the bridge keeps (clientMtimeOf). */
const DAY_MS = 86_400_000;

/**
 * The `X-OC-Mtime` a write keeps as the file's time (PUT, the chunked MOVE, legacy `OC-Chunked`
 * uploads, COPY and MOVE), or undefined when the store's own time stays: absent, not decimal
 * seconds (negative, hexadecimal, words), within a day of the epoch (0 and its time-zone shifts:
 * Nextcloud's MtimeSanitizer refuses those too), or more than a day past `nowMs` (a clock or a
 * file from the far future: the Nextcloud desktop's "invalid modification time" files).
 */
export function clientMtimeOf(value: string | undefined, nowMs: number): number | undefined {
  const ms = parseOcMtime(value);
  return ms !== undefined && ms > DAY_MS && ms <= nowMs + DAY_MS ? ms : undefined;
}

/**
 * Reads a date property value (Win32LastModifiedTime, SAR:lastmodified, DAV:getlastmodified:
 * RFC 1123 dates, or ISO 8601) into milliseconds; undefined when it is not a date.
 */
export function parseDateProperty(value: string): number | undefined {
  const text = value.trim();
  if (text === '' || text.length > 64) return undefined;
  if (/^\d+$/.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} ( \\d|\\d{2}) ${TIME} (\\d{4})$`);

/** Milliseconds for a UTC calendar time, or undefined when a field is out of range (31 Feb, 25:00:00). */
function utcMs(year: number, month: number, day: number, hour: number, minute: number, second: number): number | undefined {
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  const ms = Date.UTC(year, month, day, hour, minute, Math.min(second, 59));
  const date = new Date(ms);
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month || date.getUTCDate() !== day) return undefined;
  return ms;
}

/**
 * Reads an HTTP-date (RFC 9110 §5.6.7) into milliseconds: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37
 * GMT`), or the obsolete rfc850-date (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime-date (`Sun Nov
 * 6 08:49:37 1994`), all UTC; undefined for anything else. Strict where Date.parse is not: it reads
 * asctime in local time and accepts many other shapes.
 */
export function parseHttpDate(value: string, nowMs: number = Date.now()): number | undefined {
  const text = value.trim();
  let match = IMF_FIXDATE.exec(text);
  if (match) return utcMs(Number(match[3]), MONTHS.indexOf(match[2] as string), Number(match[1]), Number(match[4]), Number(match[5]), Number(match[6]));
  match = RFC850_DATE.exec(text);
  if (match) {
    // A two-digit year more than 50 years ahead is the most recent past year with those digits (§5.6.7).
    const thisYear = new Date(nowMs).getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + Number(match[3]);
    if (year > thisYear + 50) year -= 100;
    return utcMs(year, MONTHS.indexOf(match[2] as string), Number(match[1]), Number(match[4]), Number(match[5]), Number(match[6]));
  }
  match = ASCTIME_DATE.exec(text);
  if (match) return utcMs(Number(match[6]), MONTHS.indexOf(match[1] as string), Number((match[2] as string).trim()), Number(match[3]), Number(match[4]), Number(match[5]));
  return undefined;
}

/**
 * Reads the value of a PROPPATCH `DAV:lastmodified` into milliseconds: unix seconds, as rclone's
 * owncloud and nextcloud vendors send it (1.63+: `<lastmodified xmlns="DAV:">1700000000</lastmodified>`)
 * and ownCloud and Nextcloud accept it, read as X-OC-Mtime is; or an HTTP-date. Undefined when it
 * is neither (the PROPPATCH then answers 409 for it).
 */
export function parseLastModified(value: string): number | undefined {
  return parseOcMtime(value) ?? parseHttpDate(value);
}
