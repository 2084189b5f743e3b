/**
 * Runs a real client program for the client suites with a hard time limit: output is collected,
 * and a program that overruns is stopped by the PID this module spawned (SIGTERM, then SIGKILL
 * two seconds later), never by name. Never throws for a non-zero exit: the caller asserts.
 */
import { spawn } from 'node:child_process';

export interface ProgramRun {
  command: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  ms: number;
}

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed; stdin is empty otherwise. */
  input?: string;
  timeoutMs: number;
}

const KILL_GRACE_MS = 2_000;
const MAX_KEPT_CHARS = 4 * 1024 * 1024;

export function runProgram(file: string, args: readonly string[], options: RunOptions): Promise<ProgramRun> {
  const started = performance.now();
  const command = [file, ...args].map((part) => (/^[\w@%+=:,./-]+$/.test(part) ? part : JSON.stringify(part))).join(' ');
  return new Promise((resolve) => {
    const child = spawn(file, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let killTimer: NodeJS.Timeout | undefined;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (stdout.length < MAX_KEPT_CHARS) stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < MAX_KEPT_CHARS) stderr += chunk;
    });
    child.stdin.on('error', () => {
      // The program may exit before reading all of its input; its exit status tells the story.
    });
    child.stdin.end(options.input ?? '');
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) process.kill(child.pid, 'SIGTERM');
      killTimer = setTimeout(() => {
        if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL');
      }, KILL_GRACE_MS);
    }, options.timeoutMs);
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      resolve({ command, code, signal, stdout, stderr, timedOut, ms: Math.round(performance.now() - started) });
    };
    child.on('error', (err) => {
      stderr += `\n[spawn failed: ${err.message}]`;
      finish(null, null);
    });
    child.on('close', finish);
  });
}

/** Everything a failure message needs about one run. */
export function describeRun(run: ProgramRun, maxChars = 20_000): string {
  const status = run.timedOut ? `TIMED OUT after ${run.ms} ms (killed)` : `exit ${run.code ?? run.signal} after ${run.ms} ms`;
  const clip = (text: string) => (text.length > maxChars ? `…${text.slice(-maxChars)}` : text);
  return `$ ${run.command}\n${status}\n--- stdout ---\n${clip(run.stdout)}\n--- stderr ---\n${clip(run.stderr)}`;
}
