/**
 * Which Node.js driveway runs on (src/common/node-version.mjs), asked before anything loads by
 * `npm start` (scripts/build-if-stale.mjs) and by main.ts: the two LTS lines, 22 from 22.12 and
 * 24 on, as package.json `engines` says (which `npm ci` enforces through .npmrc's engine-strict).
 * The processes that print its line are test/integration/cli/node-version.test.ts.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ENGINES, nodeVersionProblem } from '../../../src/common/node-version.mjs';

describe('nodeVersionProblem', () => {
  it.each(['22.12.0', '22.23.5', 'v22.12.0', '24.0.0', '24.22.3', '25.1.0', '26.0.0-nightly20260101abc'])('lets Node.js %s through', (version) => {
    expect(nodeVersionProblem(version)).toBeUndefined();
  });

  it.each(['20.20.2', 'v20.19.0', '22.11.0', '22.0.0', '23.11.0', '18.20.4', '16.0.0'])('refuses Node.js %s in one line naming what is needed and what runs', (version) => {
    const line = nodeVersionProblem(version);
    expect(line).toBe(
      `driveway needs Node.js 22 (22.12 or newer) or 24 or newer (^22.12.0 || >=24.0.0); this is Node.js ${version.replace(/^v/, '')}. Install Node.js 24, then run npm ci again.`,
    );
    expect(line).not.toContain('\n');
  });

  it('refuses a version it cannot read, quoting it', () => {
    expect(nodeVersionProblem('unknown')).toMatch(/^driveway needs Node\.js 22 .*; this is a Node\.js that reports version "unknown"\./);
  });

  it('is the rule package.json engines states, the one npm ci enforces (.npmrc engine-strict)', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(ENGINES);
    expect(readFileSync(new URL('../../../.npmrc', import.meta.url), 'utf8')).toMatch(/^engine-strict=true$/m);
  });
});
