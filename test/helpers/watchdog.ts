import { spawn } from 'node:child_process';

/**
 * Cleanup that survives the test process: a detached shell that waits until this process is
 * gone (checked through /proc, since a watchdog running as another user may not signal us) and
 * then runs `cleanup` with `args` as "$1"... — for a server a helper started (postgres, nginx)
 * when the vitest worker dies before it could stop it. stop() ends the watchdog (its own
 * process group: the shell and its `sleep`, nothing else) once the helper has cleaned up itself.
 */
export function startWatchdog(
  cleanup: string,
  args: string[],
  options: { uid?: number; gid?: number; env?: NodeJS.ProcessEnv } = {},
): { stop(): void } {
  const script = `parent=$1; shift; while [ -d "/proc/$parent" ]; do sleep 1; done; ${cleanup}`;
  const child = spawn('sh', ['-c', script, 'driveway-test-watchdog', String(process.pid), ...args], {
    ...options,
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
  const pid = child.pid;
  return {
    stop() {
      if (!pid) return;
      try {
        process.kill(-pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    },
  };
}
