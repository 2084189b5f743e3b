/**
 * This installation's version, as package.json says: what `driveway --version`, backups and the
 * store's `GET /api/admin/about` report.
 */
import { readFileSync } from 'node:fs';

let cached: string | undefined;

export function packageVersion(): string {
  // dist/common/ and src/common/ both sit two levels below package.json.
  cached ??= (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  return cached;
}
