/**
 * Bulk work (issue 31 item 8): one action of a person over several items, as several requests
 * of the store's API, at most PARALLEL at once (a browser's connections to one origin), each
 * outcome kept so the page can say what worked and what failed; and the zip URL of several
 * items (docs/api.md "Zip archives"), which carries the file access key as a download does.
 */
import { errorText, fileAccessKey } from './client.js';

/** Requests of one bulk action in flight at once. */
export const PARALLEL = 6;
/** Nodes one zip URL may name (the store's MAX_ZIP_NODES, src/store/ops/zip.ts). */
export const ZIP_MAX_NODES = 300;

export interface Outcome<T> {
  ok: T[];
  failed: Array<{ item: T; why: string }>;
}

/** Runs `work` for every item, PARALLEL at a time, never stopping at a failure; `progress` after each. */
export async function eachLimited<T>(items: readonly T[], work: (item: T) => Promise<unknown>, progress?: (done: number) => void, why: (err: unknown) => string = errorText): Promise<Outcome<T>> {
  const outcome: Outcome<T> = { ok: [], failed: [] };
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next] as T;
      next += 1;
      try {
        await work(item);
        outcome.ok.push(item);
      } catch (err) {
        outcome.failed.push({ item, why: why(err) });
      }
      done += 1;
      progress?.(done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, items.length) }, worker));
  return outcome;
}

/** The zip of `uuids` (files and folders) named `name`.zip; undefined without a key, or past ZIP_MAX_NODES. */
export function zipUrl(uuids: readonly string[], name: string): string | undefined {
  const key = fileAccessKey();
  if (!key || uuids.length === 0 || uuids.length > ZIP_MAX_NODES) return undefined;
  const query = uuids.map((uuid) => `node=${encodeURIComponent(uuid)}`).join('&');
  return `/resources/auth/zip/${encodeURIComponent(key)}/${encodeURIComponent(name)}.zip?${query}`;
}
