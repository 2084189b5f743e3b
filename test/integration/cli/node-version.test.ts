/**
 * On a Node.js driveway does not run on, `npm start` (scripts/build-if-stale.mjs, its first step)
 * and `driveway` itself (main.ts: `node dist/main.js`, the bin) print one line naming the Node.js
 * needed and the one running, exit 1, and load nothing else: before this, Node.js 20 met a
 * segmentation fault in better-sqlite3. A preload makes this Node.js report 20.20.2, so the
 * processes run everywhere; the machine's /usr/bin/node runs them too when it is a Node.js 20.
 * The rule itself: test/unit/common/node-version.test.ts.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const AS_NODE_20 = 'data:text/javascript,Object.defineProperty(process,"versions",{value:{...process.versions,node:"20.20.2"}})';
const LINE = /^driveway needs Node\.js 22 \(22\.12 or newer\) or 24 or newer \(\^22\.12\.0 \|\| >=24\.0\.0\); this is Node\.js 20\.\d+\.\d+\. Install Node\.js 24, then run npm ci again\.\n$/;

function run(node: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(node, args, { cwd: REPO_ROOT, encoding: 'utf8', timeout: 30_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The machine's own Node.js 20, when it has one (a developer's distribution default). */
const systemNode = '/usr/bin/node';
const systemNodeVersion = spawnSync(systemNode, ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '';
const hasNode20 = systemNodeVersion.startsWith('v20.');
if (!hasNode20) console.warn(`node-version.test.ts: ${systemNode} is ${systemNodeVersion || 'missing'}, not a Node.js 20: its two tests are skipped (the preloaded ones still run)`);

describe('a Node.js driveway does not run on', () => {
  it("gets one line from npm start's first step, which builds nothing", () => {
    expect(run(process.execPath, ['--import', AS_NODE_20, 'scripts/build-if-stale.mjs'])).toEqual({ status: 1, stdout: '', stderr: expect.stringMatching(LINE) });
  });

  it('gets one line from driveway itself, before the command line is even read (no --version)', () => {
    expect(run(process.execPath, ['--import', AS_NODE_20, '--import', 'tsx', 'src/main.ts', '--version'])).toEqual({ status: 1, stdout: '', stderr: expect.stringMatching(LINE) });
    // This Node.js as it is: the same command answers.
    expect(run(process.execPath, ['--import', 'tsx', 'src/main.ts', '--version'])).toMatchObject({ status: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+\n$/) });
  });

  it.skipIf(!hasNode20)(`gets the line from npm start's first step on ${systemNode} (${systemNodeVersion})`, () => {
    expect(run(systemNode, ['scripts/build-if-stale.mjs'])).toEqual({ status: 1, stdout: '', stderr: expect.stringMatching(LINE) });
  });

  it.skipIf(!hasNode20)(`gets the line from driveway itself on ${systemNode} (${systemNodeVersion}), not a segmentation fault`, () => {
    const answer = run(systemNode, ['--import', 'tsx', 'src/main.ts', 'serve']);
    expect(answer).toEqual({ status: 1, stdout: '', stderr: expect.stringMatching(LINE) });
    expect(answer.stderr).toContain(`this is Node.js ${systemNodeVersion.slice(1)}.`);
  });
});
