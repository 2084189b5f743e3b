#!/usr/bin/env node
/**
 * `npm start` runs the built JavaScript (dist/main.js); this builds it first only when dist/ is
 * missing or older than a source it is made from (src/, the tsconfig files, package-lock.json),
 * so a fresh clone's `npm ci && npm start` works and later starts do not compile. Not a
 * `prepare` script: `npm ci --omit=dev` (the Docker image) has no TypeScript to run one.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function newestMtime(entry) {
  const stat = statSync(entry, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of readdirSync(entry)) newest = Math.max(newest, newestMtime(path.join(entry, name)));
  return newest;
}

const built = statSync(path.join(root, 'dist/main.js'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
const sources = Math.max(...['src', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'].map((p) => newestMtime(path.join(root, p))));
if (built < sources) {
  process.stderr.write(built === 0 ? 'driveway: building dist/ (first start)\n' : 'driveway: sources changed since the last build: rebuilding dist/\n');
  const result = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
