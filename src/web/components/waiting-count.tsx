/**
 * The number of share requests waiting for the signed-in person's decision, beside Requests in
 * the navigation (issue 31, item 9): GET /api/pending_shares, asked once per page. Nothing is
 * shown when none waits, or when it cannot be known (edition 1.0, a failure): a badge is a hint,
 * never an error of the page. A decision on /requests asks again (requestsChanged).
 */
import { useEffect } from 'preact/hooks';
import { pendingRequests } from '../api/sharing.js';
import { useResource } from '../api/use-resource.js';
import { t } from '../strings/index.js';

const CHANGED = 'driveway-requests-changed';

/** Tells the navigation's count that a request was decided or withdrawn. */
export function requestsChanged(): void {
  window.dispatchEvent(new Event(CHANGED));
}

export function WaitingCount() {
  const { data: waiting, refresh } = useResource(() => pendingRequests().then((list) => list.length).catch(() => 0), []);
  useEffect(() => {
    const again = () => void refresh();
    window.addEventListener(CHANGED, again);
    return () => window.removeEventListener(CHANGED, again);
  }, [refresh]);
  if (!waiting) return null;
  return (
    <span class="nav-count">
      <span aria-hidden="true">{waiting.toLocaleString('en')}</span>
      <span class="visually-hidden">{t.sharing.waitingCount(waiting)}</span>
    </span>
  );
}
