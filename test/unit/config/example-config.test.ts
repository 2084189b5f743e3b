/**
 * Keeps config/example.yaml and config/test.yaml honest: the example must load and hold exactly
 * the schema defaults (so it cannot drift from src/common/config.ts), must mention every other
 * non-secret key, and must hold no secret; the test file must keep tests on loopback and port 0.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { configSchema, loadConfig } from '../../../src/common/config.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const examplePath = path.join(root, 'config/example.yaml');
const testPath = path.join(root, 'config/test.yaml');
const SECRETS = ['store.adminPassword', 'store.jwtSecret', 'mail.password'];

/** Dotted name of every leaf key of the schema, with whether the schema gives it a default. */
function schemaKeys(shape: Record<string, z.ZodType>, prefix = ''): Array<{ key: string; hasDefault: boolean }> {
  return Object.entries(shape).flatMap(([name, field]) => {
    const inner = field instanceof z.ZodPrefault ? field.unwrap() : field;
    if (inner instanceof z.ZodObject) return schemaKeys(inner.shape as Record<string, z.ZodType>, `${prefix}${name}.`);
    return [{ key: `${prefix}${name}`, hasDefault: field instanceof z.ZodDefault }];
  });
}

describe('config/example.yaml', () => {
  it('holds exactly the schema defaults, key for key', () => {
    const fileTree: unknown = parseYaml(readFileSync(examplePath, 'utf8'));
    expect(fileTree).toStrictEqual(configSchema.parse({}));
  });

  it('loads through loadConfig into the same configuration as no file at all', () => {
    expect(loadConfig({ configFile: examplePath, env: {} })).toStrictEqual(loadConfig({ env: {} }));
  });

  it('documents every key without a default as a commented example, and no secret', () => {
    const text = readFileSync(examplePath, 'utf8');
    const keys = schemaKeys(configSchema.shape);
    const optional = keys.filter((k) => !k.hasDefault && !SECRETS.includes(k.key));
    expect(optional.map((k) => k.key).sort()).toEqual(['bridge.corsOrigins', 'bridge.publicUrl', 'bridge.storeUrl', 'bridge.tlsCert', 'bridge.tlsKey', 'database.url', 'mail.host', 'mail.user', 'store.blobs.backend', 'store.blobs.gcIntervalSec', 'store.blobs.s3.bucket', 'store.blobs.s3.endpoint', 'store.publicUrl', 'store.tlsCert', 'store.tlsKey', 'store.webDir']);
    for (const { key } of optional) {
      const leaf = key.split('.').pop() as string;
      expect(text, `${key} should appear as "# ${leaf}: ..."`).toMatch(new RegExp(`^\\s*# ${leaf}: \\S`, 'm'));
    }
    for (const secret of SECRETS) {
      const leaf = secret.split('.').pop() as string;
      expect(text).not.toMatch(new RegExp(`^\\s*#?\\s*${leaf}:`, 'm'));
    }
  });

  it('lets every commented example load once uncommented', () => {
    const uncommented = readFileSync(examplePath, 'utf8').replace(/^( +)# (\w+: \S+).*$/gm, '$1$2');
    const tree = parseYaml(uncommented) as { store: Record<string, unknown>; bridge: Record<string, unknown>; mail: Record<string, unknown> };
    expect(Object.keys(tree.store)).toEqual(expect.arrayContaining(['publicUrl', 'tlsCert', 'tlsKey']));
    expect(Object.keys(tree.bridge)).toEqual(expect.arrayContaining(['storeUrl', 'tlsCert', 'tlsKey', 'publicUrl', 'corsOrigins']));
    expect(Object.keys(tree.mail)).toEqual(expect.arrayContaining(['host', 'user']));
    expect(configSchema.safeParse(tree).success).toBe(true);
  });
});

describe('config/test.yaml', () => {
  it('keeps tests on loopback, on OS-chosen ports and silent', () => {
    const config = loadConfig({ configFile: testPath, env: {} });
    expect(config.host).toBe('127.0.0.1');
    expect(config.store.port).toBe(0);
    expect(config.bridge.port).toBe(0);
    expect(config.logLevel).toBe('silent');
  });
});
