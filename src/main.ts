#!/usr/bin/env node
/**
 * Entry point: `driveway` (the package's bin, `node dist/main.js`, the last step of `npm start`).
 * It asks first whether this Node.js is one driveway runs on (common/node-version.mjs): if not,
 * one line says which is needed and which is running, and nothing else loads (better-sqlite3 13
 * ends Node.js 20 with a segmentation fault, and an import the old line lacks fails before any
 * code of the importing module runs: hence the dynamic import). Then run.ts: the command line,
 * `serve` and the subcommands.
 */
import { nodeVersionProblem } from './common/node-version.mjs';

const problem = nodeVersionProblem(process.versions.node);
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
await import('./run.js');
