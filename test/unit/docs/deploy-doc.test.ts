/**
 * docs/deploy.md quotes the nginx proxy settings the multi-instance suites run behind
 * (test/helpers/nginx.ts davProxyLocation()): every `location / { ... }` of its nginx example
 * must be that function's output for the upstream it names, character for character.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { davProxyLocation } from '../../helpers/nginx.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const doc = readFileSync(path.join(root, 'docs/deploy.md'), 'utf8');

describe('docs/deploy.md', () => {
  it('quotes davProxyLocation() for the store and for the bridge', () => {
    const nginx = /```nginx\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
    const blocks = [...nginx.matchAll(/^( *)location \/ \{\n[\s\S]*?^\1\}$/gm)];
    expect(blocks.map((block) => /proxy_pass http:\/\/(\w+);/.exec(block[0])?.[1])).toEqual(['driveway_store', 'driveway_dav']);
    for (const block of blocks) {
      const upstream = /proxy_pass http:\/\/(\w+);/.exec(block[0])?.[1] as string;
      expect(block[0]).toBe(davProxyLocation(upstream, block[1]));
      expect(nginx).toContain(`upstream ${upstream} {`);
    }
  });
});
