/**
 * Gate for test files that drive a real client program (litmus, rclone, mount.davfs, cadaver).
 * On a developer machine a missing program skips the file's suites loudly: a console warning
 * and a suite title that says why. With CI=true a missing program fails the test file, so CI
 * can never pass by silently testing nothing. Owns the lookup only (absolute candidates such as
 * Debian's /usr/lib/postgresql/15/bin/initdb, then PATH); never installs anything (.ci/run does).
 *
 *   const litmus = requireBinary('litmus');
 *   litmus.describe('litmus against the bridge', () => {
 *     it('passes the basic suite', () => { spawnSync(litmus.path, [url]) });
 *   });
 */
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { describe } from 'vitest';

export interface RequiredBinary {
  name: string;
  /** Absolute path of the program; empty when it is missing (the suites are then skipped). */
  path: string;
  isAvailable: boolean;
  /** vitest's `describe` when the program exists; otherwise a skipped suite whose title says why. */
  describe: (title: string, body: () => void) => void;
}

export interface RequireBinaryOptions {
  /** Where PATH and CI are read; process.env unless a test of this helper passes its own. */
  env?: NodeJS.ProcessEnv;
  /** Where the skip warning goes; console.warn by default. */
  warn?: (message: string) => void;
  /**
   * Absolute paths tried in order before PATH, for programs a distribution keeps off PATH
   * (Debian's PostgreSQL server binaries live in /usr/lib/postgresql/<major>/bin).
   */
  candidates?: readonly string[];
  /** false: look only at `candidates`, never on PATH. Default true. */
  searchPath?: boolean;
}

export class MissingBinaryError extends Error {
  override name = 'MissingBinaryError';
}

/** Absolute path of the first executable regular file called `name` on `searchPath`. */
export function findBinary(name: string, searchPath: string): string | undefined {
  if (name.includes('/')) throw new Error(`requireBinary takes a program name, not a path: ${name}`);
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.resolve(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here or not executable: keep looking, as a shell would.
    }
  }
  return undefined;
}

/** The first of `candidates` (absolute paths) that is an executable regular file. */
export function findFirstExecutable(candidates: readonly string[]): string | undefined {
  for (const candidate of candidates) {
    if (!path.isAbsolute(candidate)) throw new Error(`requireBinary candidates must be absolute paths: ${candidate}`);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not installed there: try the next one.
    }
  }
  return undefined;
}

/**
 * Looks `name` up among `options.candidates`, then on PATH. Found: returns its path and vitest's `describe`. Missing: throws
 * MissingBinaryError when CI is 'true' (call it at the top of the test file, so the file
 * fails), otherwise warns and returns a `describe` that skips.
 */
export function requireBinary(name: string, options: RequireBinaryOptions = {}): RequiredBinary {
  const env = options.env ?? process.env;
  const candidates = options.candidates ?? [];
  const searchPath = options.searchPath ?? true;
  const found = findFirstExecutable(candidates) ?? (searchPath ? findBinary(name, env.PATH ?? '') : undefined);
  if (found) return { name, path: found, isAvailable: true, describe: (title, body) => describe(title, body) };

  const places = [...candidates, ...(searchPath ? ['PATH'] : [])].join(', ');
  const why = `${name} is not installed (not found in ${places})`;
  if (env.CI === 'true') {
    throw new MissingBinaryError(`${why}; CI=true, so this test file fails instead of skipping. Install it (bash .ci/run does).`);
  }
  const warn = options.warn ?? ((message: string) => console.warn(message));
  warn(`[requireBinary] SKIPPING tests that need ${name}: ${why}. Install it to run them; with CI=true they would fail.`);
  return {
    name,
    path: '',
    isAvailable: false,
    describe: (title, body) => describe.skip(`${title} [skipped: ${why}]`, body),
  };
}
