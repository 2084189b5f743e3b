/**
 * What every page shares: the skip link, the header with the app's name, the main navigation and
 * sign out (when signed in), and the main region whose heading takes the focus when the page
 * changes, so a screen reader and the keyboard start where the new content does.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { signOut } from '../api/client.js';
import { Link, useLocation } from '../router.js';
import { currentSession } from '../session.js';
import { t } from '../strings/index.js';
import { WaitingCount } from './waiting-count.js';
import { Usage } from './usage.js';

const NAV: ReadonlyArray<{ href: string; label: string; adminOnly?: boolean }> = [
  { href: '/files', label: t.files.nav },
  { href: '/connect', label: t.connect.nav },
  { href: '/account', label: t.account.nav },
  { href: '/favorites', label: t.item.favorites.nav },
  { href: '/trash', label: t.item.trash.nav },
  { href: '/shares', label: t.sharing.navShares },
  { href: '/requests', label: t.sharing.navRequests },
  { href: '/groups', label: t.admin.groups.nav },
  { href: '/admin', label: t.admin.nav, adminOnly: true },
];

function Header() {
  const session = currentSession();
  const { path } = useLocation();
  const [leaving, setLeaving] = useState(false);
  const leave = async () => {
    setLeaving(true);
    await signOut();
  };
  return (
    <header class="top">
      <Link href="/" class="brand">
        {t.appName}
      </Link>
      {session && (
        <>
          <nav aria-label={t.mainNav}>
            <ul>
              {NAV.filter((item) => !item.adminOnly || session.isAdmin).map((item) => (
                <li key={item.href}>
                  <Link href={item.href} aria-current={path === item.href || path.startsWith(`${item.href}/`) ? 'page' : undefined}>
                    {item.label}
                    {item.href === '/requests' && <WaitingCount />}
                  </Link>
                </li>
              ))}
            </ul>
            <Usage />
          </nav>
          <div class="who">
            <span>{t.signedInAs(session.fullname)}</span>
            <button type="button" onClick={leave} disabled={leaving}>
              {t.signOut}
            </button>
          </div>
        </>
      )}
    </header>
  );
}

export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} – ${t.appName}`;
    heading.current?.focus();
  }, [title]);
  return (
    <>
      <a class="skip" href="#main">
        {t.skipToContent}
      </a>
      <Header />
      <main id="main">
        <h1 tabIndex={-1} ref={heading}>
          {title}
        </h1>
        {children}
      </main>
    </>
  );
}
