/**
 * The app's routes: sign-in is open to all; every other page needs a session, and without one
 * the person is sent to sign-in and brought back afterwards. `/` is the connection page until
 * the file browser comes (issue 24, item 4).
 */
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { Page } from './components/page.js';
import { Account } from './pages/account.js';
import { Connect } from './pages/connect.js';
import { Requests } from './pages/requests.js';
import { Share } from './pages/share.js';
import { Shares } from './pages/shares.js';
import { SignIn } from './pages/sign-in.js';
import { Link, navigate, useLocation } from './router.js';
import { currentSession, onSessionChange } from './session.js';
import { t } from './strings.js';

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
  '/shares': Shares,
  '/requests': Requests,
};

export function App() {
  const location = useLocation();
  const [session, setSession] = useState(currentSession);
  useEffect(() => onSessionChange(() => setSession(currentSession())), []);
  const needsSignIn = location.path !== '/sign-in' && !session;
  useEffect(() => {
    if (needsSignIn) {
      const here = `${location.path}${location.search.size > 0 ? `?${location.search}` : ''}`;
      navigate(location.path === '/' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(here)}`, { replace: true });
    } else if (session && location.path === '/') navigate('/connect', { replace: true });
  }, [needsSignIn, session, location]);

  if (location.path === '/sign-in') return <SignIn key="sign-in" />;
  if (!session || location.path === '/') return null;
  if (location.path.startsWith('/share/')) {
    const uuid = decodeURIComponent(location.path.slice('/share/'.length));
    return <Share key={location.path} uuid={uuid} />;
  }
  const Current = PAGES[location.path] ?? NotFound;
  return <Current key={location.path} />;
}
