/**
 * The app's routes: sign-in and a link's page (/public/...) are open to all; every other page
 * needs a session, and without one the person is sent to sign-in and brought back afterwards. The
 * session is the browser's, shared by its tabs (session.ts), and confirmed with the store at every
 * load. `/` is the file browser (`/files`).
 */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Page } from './components/page.js';
import { Account } from './pages/account.js';
import { Admin, isAdminPath } from './pages/admin.js';
import { GroupAdmin, isGroupPath } from './pages/group-admin.js';
import { Groups } from './pages/groups.js';
import { ClientLogin } from './pages/client-login.js';
import { Connect } from './pages/connect.js';
import { Files, isFilesPath } from './pages/files.js';
import { Favorites } from './pages/favorites.js';
import { isItemPath, Item } from './pages/item.js';
import { isLinkPath, LinkPage } from './pages/link.js';
import { Requests } from './pages/requests.js';
import { Notifications } from './pages/notifications.js';
import { isSharePath, ShareNode } from './pages/share.js';
import { Shares } from './pages/shares.js';
import { SignIn } from './pages/sign-in.js';
import { Trash } from './pages/trash.js';
import { confirmSession } from './api/client.js';
import { Link, navigate, pathRest, useLocation } from './router.js';
import { currentSession, onSessionChange } from './session.js';
import { t } from './strings/index.js';

function NotFound() {
  return (
    <Page title={t.notFoundTitle}>
      <p>{t.notFoundText}</p>
      <p>
        <Link href="/connect">{t.goHome}</Link>
      </p>
    </Page>
  );
}

const PAGES: Record<string, () => JSX.Element> = {
  '/connect': Connect,
  '/account': Account,
  '/files': Files,
  '/trash': Trash,
  '/favorites': Favorites,
  '/groups': Groups,
  '/shares': Shares,
  '/requests': Requests,
  '/notifications': Notifications,
  '/client-login': ClientLogin,
};

export function App() {
  const location = useLocation();
  const [session, setSession] = useState(currentSession);
  useEffect(() => {
    const stop = onSessionChange(() => setSession(currentSession()));
    // Whatever this browser remembers of the session, the store's cookie decides: asked at every load.
    void confirmSession();
    return stop;
  }, []);
  // A link's page is for anyone with the link: no session needed (pages/link.tsx).
  const needsSignIn = location.path !== '/sign-in' && !isLinkPath(location.path) && !session;
  useEffect(() => {
    if (needsSignIn) {
      const here = `${location.path}${location.search.size > 0 ? `?${location.search}` : ''}`;
      navigate(location.path === '/' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(here)}`, { replace: true });
    } else if (session && location.path === '/') navigate('/files', { replace: true });
  }, [needsSignIn, session, location]);

  if (location.path === '/sign-in') return <SignIn key="sign-in" />;
  if (isLinkPath(location.path)) return <LinkPage key="link" />;
  if (!session || location.path === '/') return null;
  // One Administration page across its sections; a group's page by its uuid.
  if (isAdminPath(location.path)) return <Admin key="/admin" />;
  if (isGroupPath(location.path)) return <GroupAdmin key={location.path} uuid={pathRest(location.path, '/groups/')} />;
  const Current = PAGES[location.path] ?? (isFilesPath(location.path) ? Files : isItemPath(location.path) ? Item : isSharePath(location.path) ? ShareNode : NotFound);
  // One Files page across folders: it reloads its listing when the path changes.
  return <Current key={isFilesPath(location.path) ? '/files' : location.path} />;
}
