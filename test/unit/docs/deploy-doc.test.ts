/**
 * docs/deploy.md quotes the nginx settings the tests run behind (test/helpers/nginx.ts): every
 * `location / { ... }` of its nginx examples is davProxyLocation()'s output for the upstream it
 * names, every example logs with redactingLogFormat()'s `redacted` format, and the example for one
 * machine is localNginxConf() as a whole (test/integration/harness/nginx.test.ts runs that
 * function's output), for the instances README "Scaling out" starts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { davProxyLocation, LOCAL_NGINX_EXAMPLE, localNginxConf, pushProxyLocation, redactingLogFormat } from '../../helpers/nginx.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const doc = readFileSync(path.join(root, 'docs/deploy.md'), 'utf8');
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
const examples = [...doc.matchAll(/```nginx\n([\s\S]*?)```/g)].map((match) => match[1] as string);

describe('docs/deploy.md', () => {
  it('has two nginx examples: one machine, then production', () => {
    expect(examples).toHaveLength(2);
    expect(examples[0]).toBe(localNginxConf(LOCAL_NGINX_EXAMPLE));
    expect(examples[1]).toMatch(/listen 443 ssl;/);
  });

  it('quotes davProxyLocation() for the store and for the bridge in each', () => {
    for (const nginx of examples) {
      const blocks = [...nginx.matchAll(/^( *)location \/ \{\n[\s\S]*?^\1\}$/gm)];
      expect(blocks.map((block) => /proxy_pass http:\/\/(\w+);/.exec(block[0])?.[1])).toEqual(['driveway_store', 'driveway_dav']);
      for (const block of blocks) {
        const upstream = /proxy_pass http:\/\/(\w+);/.exec(block[0])?.[1] as string;
        expect(block[0]).toBe(davProxyLocation(upstream, block[1]));
        expect(nginx).toContain(`upstream ${upstream} {`);
      }
    }
  });

  it('quotes pushProxyLocation() for the bridge in each', () => {
    for (const nginx of examples) {
      const indent = /^( *)location = \/push\/ws \{$/m.exec(nginx)?.[1];
      expect(indent).toBeDefined();
      expect(nginx).toContain(pushProxyLocation('driveway_dav', indent));
    }
  });

  it('logs with the redacting format only, in each', () => {
    for (const nginx of examples) {
      const indent = /^( *)map \$request_uri /m.exec(nginx)?.[1] ?? '';
      expect(nginx).toContain(redactingLogFormat(indent));
      const accessLogs = [...nginx.matchAll(/^\s*access_log .*$/gm)].map((line) => line[0].trim());
      expect(accessLogs.length).toBeGreaterThan(0);
      for (const line of accessLogs) expect(line).toMatch(/ redacted;$/);
    }
  });
});

describe('docs/deploy.md "Big uploads behind a body limit"', () => {
  it('names the body limit test/clients/nextcloud-chunking-nginx.test.ts runs and settings davProxyLocation() holds', () => {
    const section = doc.slice(doc.indexOf('**Big uploads behind a body limit.**'), doc.indexOf('### Caddy'));
    const suite = readFileSync(path.join(root, 'test/clients/nextcloud-chunking-nginx.test.ts'), 'utf8');
    const limit = /bodyLimit: '(\w+)'/.exec(suite)?.[1];
    expect(section).toContain(`client_max_body_size ${limit}`);
    for (const directive of section.match(/`proxy_\w+ [^`]+`/g) ?? []) expect(davProxyLocation('x')).toContain(`${directive.slice(1, -1)};`);
    expect(section).toMatch(/`proxy_request_buffering off`/);
  });
});

describe('README "Scaling out"', () => {
  it('starts the instances the one-machine nginx example sends to', () => {
    const section = readme.slice(readme.indexOf('## Scaling out'));
    const [storeA, storeB] = LOCAL_NGINX_EXAMPLE.store.map((url) => new URL(url).port);
    const [davA, davB] = LOCAL_NGINX_EXAMPLE.dav.map((url) => new URL(url).port);
    expect(section).toContain(`DRIVEWAY_STORE_PORT=${storeA} DRIVEWAY_DAV_PORT=${davA} `);
    expect(section).toContain(`DRIVEWAY_STORE_PORT=${storeB} DRIVEWAY_DAV_PORT=${davB} `);
  });
});
