/**
 * Notifications (issue 32, item 3): `/notifications`, the person's list (GET /api/notifications,
 * newest first): what happened, in this app's words from the notification's kind (the store's
 * own words for a kind it does not know), when, and a Delete for each; Delete all below. A
 * deletion refreshes the list and the count in the navigation (notificationsChanged).
 */
import { useState } from 'preact/hooks';
import { errorText } from '../api/client.js';
import { deleteAllNotifications, deleteNotification, listNotifications, type Notification } from '../api/notifications.js';
import { useResource } from '../api/use-resource.js';
import { Page } from '../components/page.js';
import { notificationsChanged } from '../components/waiting-count.js';
import { t } from '../strings/index.js';
import { when } from './share.js';

const s = t.notifications;

const textOf = (n: Notification): string => s.text(n.kind, n.params) ?? n.subject;

export function Notifications() {
  const { data: list, error, refresh } = useResource(listNotifications, []);
  const [message, setMessage] = useState<string | undefined>();
  const [failure, setFailure] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const run = async (work: () => Promise<unknown>, done: string) => {
    setBusy(true);
    setFailure(undefined);
    try {
      await work();
      setMessage(done);
      notificationsChanged();
      await refresh();
    } catch (err) {
      setFailure(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Page title={s.title}>
      <p role="status" class="notice notifications-message">
        {message}
      </p>
      {failure && (
        <p class="error" role="alert">
          {failure}
        </p>
      )}
      {error && (
        <>
          <p class="error" role="alert">
            {error}
          </p>
          <button type="button" onClick={() => void refresh()}>
            {t.retry}
          </button>
        </>
      )}
      {!error && !list && <p>{t.loading}</p>}
      {list && list.length === 0 && <p>{s.none}</p>}
      {list && list.length > 0 && (
        <>
          <ul class="notifications">
            {list.map((n) => {
              const text = textOf(n);
              const comment = typeof n.params.comment === 'string' && n.params.comment !== '' ? n.params.comment : undefined;
              return (
                <li key={n.id} class="panel notification">
                  <p class="notification-text">{text}</p>
                  {comment && <p class="notification-note">{s.comment(comment)}</p>}
                  <p class="notification-when">{s.at(when(n.created))}</p>
                  <button type="button" class="secondary" disabled={busy} aria-label={s.deleteNamed(text)} onClick={() => void run(() => deleteNotification(n.id), s.deleted)}>
                    {s.deleteOne}
                  </button>
                </li>
              );
            })}
          </ul>
          <div class="actions">
            <button type="button" class="secondary" disabled={busy} onClick={() => void run(deleteAllNotifications, s.allDeleted)}>
              {s.deleteAll}
            </button>
          </div>
        </>
      )}
    </Page>
  );
}
