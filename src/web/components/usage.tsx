/**
 * The signed-in person's usage and quota, always in view (issue 31, as Nextcloud's and Seafile's
 * sidebars show it): a bar and "x of y used" in binary units, or "x used (no limit)". Loaded from
 * GET /api/user on each page change and again whenever usageChanged() is called (an upload batch
 * finished, something trashed or restored).
 */
import { api } from '../api/client.js';
import { useResource } from '../api/use-resource.js';
import { useLocation } from '../router.js';
import { t } from '../strings/index.js';
import { useEffect } from 'preact/hooks';

const EVENT = 'driveway-usage-changed';

/** Tells every usage bar of the page to load again. */
export function usageChanged(): void {
  window.dispatchEvent(new Event(EVENT));
}

export function Usage() {
  const { path } = useLocation();
  const usage = useResource(() => api<{ disk_used: number; disk_quota: number }>('GET', '/api/user'), [path]);
  useEffect(() => {
    const again = () => void usage.refresh();
    window.addEventListener(EVENT, again);
    return () => window.removeEventListener(EVENT, again);
  }, [usage.refresh]);
  if (!usage.data) return null;
  const { disk_used: used, disk_quota: quota } = usage.data;
  const limited = quota > 0;
  const full = limited && used >= quota;
  return (
    <div class={full ? 'usage usage-full' : 'usage'}>
      {limited && <progress id="usage-bar" aria-label={t.uploads.usageLabel} aria-describedby="usage-text" max={quota} value={Math.min(used, quota)} />}
      <span id="usage-text">{limited ? t.uploads.usedOf(used, quota) : t.uploads.usedUnlimited(used)}</span>
    </div>
  );
}
