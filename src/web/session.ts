/**
 * The signed-in session: kept in sessionStorage (this tab only, gone when it closes; never in a
 * URL), announced to whoever listens (the app re-renders on sign-in and sign-out). What the store
 * answered at sign-in, plus the username typed, which is what drive clients sign in with.
 */
export interface Session {
  token: string;
  uuid: string;
  fullname: string;
  isAdmin: boolean;
  username: string;
  /** The key of SPEC's view/download paths (the only place a credential may be in a URL). */
  fileaccesskey?: string;
}

const KEY = 'driveway.session';
const listeners = new Set<() => void>();

function isSession(value: unknown): value is Session {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.token === 'string' && typeof v.uuid === 'string' && typeof v.fullname === 'string' && typeof v.isAdmin === 'boolean' && typeof v.username === 'string';
}

export function currentSession(): Session | undefined {
  try {
    const parsed: unknown = JSON.parse(sessionStorage.getItem(KEY) ?? 'null');
    return isSession(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(KEY, JSON.stringify(session));
  for (const listener of listeners) listener();
}

export function clearSession(): void {
  sessionStorage.removeItem(KEY);
  for (const listener of listeners) listener();
}

export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
