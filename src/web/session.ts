/**
 * Who is signed in, for every tab of this browser at once. The session itself is the store's
 * HttpOnly cookie (POST /api/session: docs/security.md "Sessions of the web app"), which no
 * script here can read; what this module keeps is who it belongs to:
 *  - in localStorage, shared by every tab and kept across reloads: uuid, name, role, username,
 *    never a token nor the file access key, so a new tab or a reload renders at once (and asks
 *    the store to confirm: api/client.ts confirmSession);
 *  - in memory, once the store confirmed it: the same with the file access key of SPEC's
 *    view/download paths.
 * Another tab's sign-out (the entry removed) or sign-in as someone else reaches this tab by the
 * `storage` event, at once.
 */
export interface Session {
  uuid: string;
  fullname: string;
  isAdmin: boolean;
  username: string;
  /** The key of SPEC's view/download paths (the only place a credential may be in a URL); known once confirmed. */
  fileaccesskey?: string;
}

const KEY = 'driveway.session';
const listeners = new Set<() => void>();
/** The session the store confirmed in this tab (with its file access key). */
let confirmed: Session | undefined;
let endedElsewhere: (() => void) | undefined;

function isSession(value: unknown): value is Session {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.uuid === 'string' && typeof v.fullname === 'string' && typeof v.isAdmin === 'boolean' && typeof v.username === 'string';
}

function stored(): Session | undefined {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(KEY) ?? 'null');
    return isSession(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function announce(): void {
  for (const listener of listeners) listener();
}

/** The signed-in person: as the store confirmed it here, else as another tab or an earlier load left it. */
export function currentSession(): Session | undefined {
  return confirmed ?? stored();
}

/** Keeps the session the store answered, for this tab and (without its key) for every other. */
export function saveSession(session: Session): void {
  confirmed = session;
  const { fileaccesskey: _key, ...shared } = session;
  const text = JSON.stringify(shared);
  if (localStorage.getItem(KEY) !== text) localStorage.setItem(KEY, text);
  announce();
}

export function clearSession(): void {
  confirmed = undefined;
  localStorage.removeItem(KEY);
  announce();
}

export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** What to do when another tab signs out (api/client.ts: to sign-in with its notice); called before this tab forgets the session. */
export function onSessionEndedElsewhere(handler: () => void): void {
  endedElsewhere = handler;
}

if (typeof window !== 'undefined') {
  window.addEventListener('storage', (event) => {
    if (event.key !== KEY && event.key !== null) return;
    const next = stored();
    if (!next) {
      if (confirmed || event.oldValue) endedElsewhere?.();
      confirmed = undefined;
    } else if (confirmed && confirmed.uuid !== next.uuid) {
      // Someone else signed in in another tab: this tab's page is of the one before.
      window.location.reload();
      return;
    }
    announce();
  });
}
