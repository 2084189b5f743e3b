/**
 * Counts beside entries of the navigation: the share requests waiting for the signed-in person's
 * decision, beside Requests (issue 31, item 9: GET /api/pending_shares), and their notifications,
 * beside Notifications (GET /api/notifications). Each asked once per page, and again when the
 * page that changes it says so (requestsChanged, notificationsChanged). Nothing is shown when
 * there are none, or when it cannot be known (edition 1.0, a failure): a badge is a hint, never
 * an error of the page.
 */
import { useEffect } from 'preact/hooks';
import { listNotifications } from '../api/notifications.js';
import { pendingRequests } from '../api/sharing.js';
import { useResource } from '../api/use-resource.js';
import { t } from '../strings/index.js';

const REQUESTS_CHANGED = 'driveway-requests-changed';
const NOTIFICATIONS_CHANGED = 'driveway-notifications-changed';

/** Tells the navigation's count that a request was decided or withdrawn. */
export function requestsChanged(): void {
  window.dispatchEvent(new Event(REQUESTS_CHANGED));
}

/** Tells the navigation's count that notifications were deleted. */
export function notificationsChanged(): void {
  window.dispatchEvent(new Event(NOTIFICATIONS_CHANGED));
}

function NavCount({ load, changed, words }: { load: () => Promise<unknown[]>; changed: string; words: (n: number) => string }) {
  const { data: n, refresh } = useResource(() => load().then((list) => list.length).catch(() => 0), []);
  useEffect(() => {
    const again = () => void refresh();
    window.addEventListener(changed, again);
    return () => window.removeEventListener(changed, again);
  }, [refresh, changed]);
  if (!n) return null;
  return (
    <span class="nav-count">
      <span aria-hidden="true">{n.toLocaleString('en')}</span>
      <span class="visually-hidden">{words(n)}</span>
    </span>
  );
}

export function WaitingCount() {
  return <NavCount load={pendingRequests} changed={REQUESTS_CHANGED} words={t.sharing.waitingCount} />;
}

export function NotificationCount() {
  return <NavCount load={listNotifications} changed={NOTIFICATIONS_CHANGED} words={t.notifications.navCount} />;
}
