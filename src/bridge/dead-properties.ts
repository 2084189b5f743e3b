/**
 * Dead properties as the verbs see them: the PropertyRepository contract (common/dav-properties.ts,
 * re-exported here) and the readers of client modification times. The repository itself is the
 * storage layer's (store/storage/dav-properties.ts), handed to the bridge by main.ts; the bridge
 * holds no SQL.
 *
 * Client mtimes come from rclone's `X-OC-Mtime`, Windows' `Win32LastModifiedTime` and Cyberduck's
 * `SAR:lastmodified` (docs/client-quirks.md §2, §3, §5); the bridge reports them in getlastmodified.
 */
export * from '../common/dav-properties.js';

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
