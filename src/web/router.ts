/**
 * A small router over the History API: the current path and query, navigate(), and a Link that
 * navigates without a page load (a modified or middle click still opens a new tab). The store
 * answers index.html for every app path (src/store/web-app.ts), so a reload or a pasted address
 * lands on the same page.
 */
import { createElement, type ComponentChildren, type JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export interface Location {
  path: string;
  search: URLSearchParams;
}

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((listener) => listener()));

function readLocation(): Location {
  return { path: window.location.pathname, search: new URLSearchParams(window.location.search) };
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  listeners.forEach((listener) => listener());
}

export function useLocation(): Location {
  const [location, setLocation] = useState(readLocation);
  useEffect(() => {
    const update = () => setLocation(readLocation());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return location;
}

/**
 * A path of this app to return to after signing in: same origin, absolute path, never `//host`.
 * No control character either: the URL parser drops tabs and newlines, so `/<tab>/host` would
 * become `//host` (pushState then throws, and the person is stuck on sign-in).
 */
export function safeNext(value: string | null): string | undefined {
  if (!value || !value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\') || value.startsWith('/sign-in')) return undefined;
  if (/[\u0000-\u001f\u007f]/.test(value) || new URL(value, window.location.origin).origin !== window.location.origin) return undefined;
  return value;
}

/**
 * The rest of `path` after `prefix`, decoded: an id in the address (`/item/<uuid>`). A broken
 * %-escape (a mangled link) stays as written, so the page asks the store and says "not found"
 * instead of decodeURIComponent throwing while rendering, which left a blank page.
 */
export function pathRest(path: string, prefix: string): string {
  const rest = path.slice(prefix.length);
  try {
    return decodeURIComponent(rest);
  } catch {
    return rest;
  }
}

type LinkProps = Omit<JSX.HTMLAttributes<HTMLAnchorElement>, 'href'> & { href: string; children: ComponentChildren };

export function Link({ href, children, ...rest }: LinkProps) {
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return createElement('a', { ...rest, href, onClick }, children);
}
