/** Draining a listener on stop, the same for the store's and the bridge's (run.ts stops both at once). */
import type { Server } from 'node:http';

/**
 * Runs `close` (which stops accepting and resolves once every connection ended) while connections
 * that fall idle after their last answer are closed at once, and cuts whatever is still open
 * after `graceMs`. Shared by both listeners.
 */
export async function drainWhile(server: Server, graceMs: number, close: () => Promise<void>): Promise<void> {
  const idle = setInterval(() => server.closeIdleConnections(), 100);
  const cut = setTimeout(() => server.closeAllConnections(), graceMs);
  try {
    await close();
  } finally {
    clearInterval(idle);
    clearTimeout(cut);
  }
}
