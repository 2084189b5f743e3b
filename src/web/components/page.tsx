/**
 * What every page shares: the skip link, the header with the app's name and sign out (when
 * signed in), the main navigation, and the main region whose heading takes the focus when the
 * page changes, so a screen reader and the keyboard start where the new content does.
 *
 * The navigation is a sidebar from 48rem up; on a phone it folds behind a Menu button (a
 * disclosure: aria-expanded, Escape closes it and gives the focus back to the button, going to
 * another page closes it), so the header stays one row. The entry of the section one is in
 * is marked (aria-current), on the pages below it too.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { signOut } from '../api/client.js';
import { Link, useLocation } from '../router.js';
import { currentSession } from '../session.js';
import { t } from '../strings/index.js';
import { NotificationCount, WaitingCount } from './waiting-count.js';
import { Usage } from './usage.js';
import { NavIcon, type NavIconName } from './icons.js';

const NAV: ReadonlyArray<{ href: string; label: string; icon: NavIconName; adminOnly?: boolean }> = [
  { href: '/files', label: t.files.nav, icon: 'files' },
  { href: '/favorites', label: t.item.favorites.nav, icon: 'favorites' },
  { href: '/shares', label: t.sharing.navShares, icon: 'shares' },
  { href: '/requests', label: t.sharing.navRequests, icon: 'requests' },
  { href: '/notifications', label: t.notifications.nav, icon: 'notifications' },
  { href: '/groups', label: t.admin.groups.nav, icon: 'groups' },
  { href: '/trash', label: t.item.trash.nav, icon: 'trash' },
  { href: '/connect', label: t.connect.nav, icon: 'connect' },
  { href: '/account', label: t.account.nav, icon: 'account' },
  { href: '/admin', label: t.admin.nav, icon: 'admin', adminOnly: true },
];

function Logo() {
  return (
    <svg class="brand-mark" width="28" height="28" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <rect width="24" height="24" rx="6" fill="currentColor" />
      <path fill="#fff" d="M5 9.5A1.5 1.5 0 0 1 6.5 8h3.3l1.5 1.6h6.2A1.5 1.5 0 0 1 19 11.1v5.4a1.5 1.5 0 0 1-1.5 1.5h-11A1.5 1.5 0 0 1 5 16.5z" />
    </svg>
  );
}

function Shell({ children }: { children: ComponentChildren }) {
  const session = currentSession();
  const { path } = useLocation();
  const [leaving, setLeaving] = useState(false);
  const [open, setOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  const leave = async () => {
    setLeaving(true);
    await signOut();
  };
  // Another page: the menu folds again.
  useEffect(() => setOpen(false), [path]);
  useEffect(() => {
    if (!open) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      setOpen(false);
      menuButton.current?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [open]);

  return (
    <>
      <header class="top">
        <Link href="/" class="brand">
          <Logo />
          <span>{t.appName}</span>
        </Link>
        {session && (
          <>
            <div class="who">
              <span class="who-name">{t.signedInAs(session.fullname)}</span>
              <button type="button" class="secondary" onClick={leave} disabled={leaving}>
                {t.signOut}
              </button>
            </div>
            <button type="button" class="menu-button secondary" ref={menuButton} aria-expanded={open ? 'true' : 'false'} aria-controls="main-nav" onClick={() => setOpen(!open)}>
              <NavIcon name={open ? 'close' : 'menu'} />
              <span class="menu-label">{t.menu}</span>
            </button>
          </>
        )}
      </header>
      <div class={session ? 'frame with-nav' : 'frame'}>
        {session && (
          <nav id="main-nav" class={open ? 'side open' : 'side'} aria-label={t.mainNav}>
            <ul>
              {NAV.filter((item) => !item.adminOnly || session.isAdmin).map((item) => (
                <li key={item.href}>
                  <Link href={item.href} aria-current={path === item.href || path.startsWith(`${item.href}/`) ? 'page' : undefined}>
                    <NavIcon name={item.icon} />
                    <span>{item.label}</span>
                    {item.href === '/requests' && <WaitingCount />}
                    {item.href === '/notifications' && <NotificationCount />}
                  </Link>
                </li>
              ))}
            </ul>
            <Usage />
          </nav>
        )}
        {children}
      </div>
    </>
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
      <Shell>
        <main id="main">
          <h1 tabIndex={-1} ref={heading}>
            {title}
          </h1>
          {children}
        </main>
      </Shell>
    </>
  );
}
