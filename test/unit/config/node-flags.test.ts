/**
 * The node flags driveway runs with live in package.json ("config.nodeFlags", used by the npm
 * scripts and by bench/). The Docker image cannot read package.json at start, so its
 * ENTRYPOINT repeats them: this keeps the two equal.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { config: { nodeFlags: string }; scripts: Record<string, string> };

describe('node flags', () => {
  it('are passed by every npm script that starts driveway', () => {
    for (const name of ['start', 'store', 'bridge']) expect(pkg.scripts[name]).toContain('node $npm_package_config_nodeFlags dist/main.js');
  });

  it('are the ones the Docker image starts with', () => {
    const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(readFileSync(path.join(root, 'Dockerfile'), 'utf8'));
    expect(entrypoint).not.toBeNull();
    const argv = JSON.parse(entrypoint![1]!) as string[];
    expect(argv).toEqual(['node', ...pkg.config.nodeFlags.split(' '), 'dist/main.js']);
  });
});
