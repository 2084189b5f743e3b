/**
 * Failures an operator can fix before the process serves anything: a data folder that cannot be
 * written, a port in use, a certificate that cannot be read. The message is one line that names
 * the path or setting and what to do; `main` prints it without a stack and exits 1. Owns the
 * wording only; what failed is decided where it failed.
 */
export class StartupError extends Error {}

/** The reason of a Node or SQLite error, without the stack: `EACCES: permission denied`. */
export function reasonOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && !err.message.startsWith(code) ? `${err.message} (${code})` : err.message;
}

export interface ListenTarget {
  host: string;
  port: number;
  /** The settings that choose the port, as the operator writes them: `store.port / DRIVEWAY_STORE_PORT`. */
  setting: string;
}

/** A listen failure as a StartupError naming the address and the setting; other errors pass through. */
export function listenFailure(err: unknown, target: ListenTarget): unknown {
  const code = (err as { code?: unknown } | undefined)?.code;
  const where = `port ${target.port} on ${target.host}`;
  if (code === 'EADDRINUSE') return new StartupError(`${where} is in use (${target.setting}): stop what holds it or choose another port`, { cause: err });
  if (code === 'EACCES') return new StartupError(`${where} needs privileges this user lacks (${target.setting}): choose a port above 1023 or put a reverse proxy in front`, { cause: err });
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new StartupError(`cannot listen on ${target.host}: no such address on this machine (host / DRIVEWAY_HOST)`, { cause: err });
  }
  return err;
}
