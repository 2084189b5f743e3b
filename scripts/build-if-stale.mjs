#!/usr/bin/env node
/**
 * `npm start` runs the built JavaScript (dist/main.js) and serves the built web app (dist/web);
 * this builds both first only when either is missing or older than a source they are made from
 * (src/, src/web among it, the tsconfig files, the web app's Vite config, package-lock.json),
 * so a fresh clone's `npm ci && npm start` works and later starts do not compile. Not a
 * `prepare` script: `npm ci --omit=dev` (the Docker image) has no TypeScript to run one.
 *
 * First of all it asks whether this Node.js is one driveway runs on (src/common/node-version.mjs,
 * plain JavaScript importing nothing, like everything imported here): if not, that one line and
 * exit 1, before anything is built or loaded.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeVersionProblem } from '../src/common/node-version.mjs';

const problem = nodeVersionProblem(process.versions.node);
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function newestMtime(entry) {
  const stat = statSync(entry, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const name of readdirSync(entry)) newest = Math.max(newest, newestMtime(path.join(entry, name)));
  return newest;
}

// The older of the two outputs: a dist/ built before the web app existed has no dist/web.
const built = Math.min(...['dist/main.js', 'dist/web/index.html'].map((p) => statSync(path.join(root, p), { throwIfNoEntry: false })?.mtimeMs ?? 0));
const sources = Math.max(...['src', 'tsconfig.json', 'tsconfig.build.json', 'vite.web.config.ts', 'package-lock.json'].map((p) => newestMtime(path.join(root, p))));
if (built < sources) {
  process.stderr.write(built === 0 ? 'driveway: building dist/ (first start)\n' : 'driveway: sources changed since the last build: rebuilding dist/\n');
  const result = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
