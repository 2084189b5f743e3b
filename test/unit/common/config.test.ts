/**
 * loadConfig: precedence (defaults < file < DRIVEWAY_* environment < flags), errors that name
 * the key and where its value came from, secrets refused from files, and the public list of
 * environment variable names.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, ENV_KEYS, loadConfig } from '../../../src/common/config.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function configFile(yaml: string): string {
  const tmp = makeTmpDir('driveway-config-');
  cleanups.push(tmp.remove);
  const file = path.join(tmp.dir, 'config.yaml');
  writeFileSync(file, yaml);
  return file;
}

function loadError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig precedence', () => {
  it('uses the schema defaults when nothing is given', () => {
    const config = loadConfig({ env: {} });
    expect(config.host).toBe('127.0.0.1');
    expect(config.store.port).toBe(8080);
    expect(config.store.edition).toBe('3.0');
    expect(config.store.sessionTtlSec).toBe(86_400);
    expect(config.store.loginMaxFailures).toBe(10);
    expect(config.store.loginWindowSec).toBe(900);
    expect(config.bridge.port).toBe(8081);
    expect(config.dataDir).toBe(path.resolve('./data'));
  });

  it('lets the file override defaults, the environment override the file, and flags override both', () => {
    const file = configFile('logLevel: warn\nstore:\n  port: 9000\n  edition: "1.0"\nbridge:\n  port: 9001\n');

    const fromFile = loadConfig({ configFile: file, env: {} });
    expect(fromFile.logLevel).toBe('warn');
    expect(fromFile.store.port).toBe(9000);
    expect(fromFile.store.edition).toBe('1.0');
    expect(fromFile.bridge.port).toBe(9001);
    expect(fromFile.host).toBe('127.0.0.1');

    const env = { DRIVEWAY_STORE_PORT: '9100', DRIVEWAY_EDITION: '3.0' };
    const fromEnv = loadConfig({ configFile: file, env });
    expect(fromEnv.store.port).toBe(9100);
    expect(fromEnv.store.edition).toBe('3.0');
    expect(fromEnv.logLevel).toBe('warn');
    expect(fromEnv.bridge.port).toBe(9001);

    const fromFlags = loadConfig({ configFile: file, env, flags: { 'store.port': 9200, logLevel: 'debug' } });
    expect(fromFlags.store.port).toBe(9200);
    expect(fromFlags.logLevel).toBe('debug');
    expect(fromFlags.store.edition).toBe('3.0');
    expect(fromFlags.bridge.port).toBe(9001);
  });

  it('treats an empty environment variable as unset', () => {
    const file = configFile('store:\n  port: 9000\n');
    expect(loadConfig({ configFile: file, env: { DRIVEWAY_STORE_PORT: '' } }).store.port).toBe(9000);
  });

  it('resolves dataDir to an absolute path', () => {
    expect(path.isAbsolute(loadConfig({ env: { DRIVEWAY_DATA_DIR: 'rel/dir' } }).dataDir)).toBe(true);
  });
});

describe('loadConfig errors', () => {
  it('names the key and the environment variable a bad value came from', () => {
    const err = loadError(() => loadConfig({ env: { DRIVEWAY_STORE_PORT: 'eighty' } }));
    expect(err.message).toContain('store.port');
    expect(err.message).toContain('environment DRIVEWAY_STORE_PORT');
  });

  it('reads log.format and log.accessLog from the environment and refuses an unknown format', () => {
    const config = loadConfig({ env: { DRIVEWAY_LOG_FORMAT: 'pretty', DRIVEWAY_ACCESS_LOG: 'false' } });
    expect(config.log).toEqual({ format: 'pretty', accessLog: false });
    expect(loadConfig({ env: {} }).log).toEqual({ format: 'json', accessLog: true });
    const err = loadError(() => loadConfig({ env: { DRIVEWAY_LOG_FORMAT: 'colour' } }));
    expect(err.message).toContain('log.format');
    expect(err.message).toContain('environment DRIVEWAY_LOG_FORMAT');
  });

  it('takes origins in bridge.corsOrigins and refuses `*`, a path or another scheme, naming the key', () => {
    expect(loadConfig({ env: {}, flags: { 'bridge.corsOrigins': ['https://files.example.org/'] } }).bridge.corsOrigins).toEqual(['https://files.example.org/']);
    expect(loadConfig({ env: {}, flags: { 'bridge.corsOrigins': [] } }).bridge.corsOrigins).toEqual([]);
    expect(loadConfig({ env: {} }).bridge.corsOrigins).toBeUndefined();
    for (const bad of ['*', 'https://files.example.org/app', 'ftp://files.example.org', 'files.example.org']) {
      const err = loadError(() => loadConfig({ env: { DRIVEWAY_BRIDGE_CORS_ORIGINS: bad } }));
      expect(err.message, bad).toContain('bridge.corsOrigins');
      expect(err.message, bad).toContain('never *');
    }
  });

  it('names the key and the file a bad value came from', () => {
    const file = configFile('store:\n  edition: "2.0"\n');
    const err = loadError(() => loadConfig({ configFile: file, env: {} }));
    expect(err.message).toContain('store.edition');
    expect(err.message).toContain(`file ${file}`);
  });

  it('names the key of a bad flag and says it came from a flag', () => {
    const err = loadError(() => loadConfig({ env: {}, flags: { 'bridge.port': 70_000 } }));
    expect(err.message).toContain('bridge.port (from flag)');
  });

  it('names every bad key at once', () => {
    const err = loadError(() => loadConfig({ env: { DRIVEWAY_STORE_PORT: '-1', DRIVEWAY_LOG_LEVEL: 'loud' } }));
    expect(err.message).toContain('store.port');
    expect(err.message).toContain('logLevel');
  });

  it('refuses a secret written in a config file and says to use the environment', () => {
    for (const yaml of ['store:\n  adminPassword: Secret-Passw0rd\n', `store:\n  jwtSecret: ${'x'.repeat(40)}\n`]) {
      const file = configFile(yaml);
      const err = loadError(() => loadConfig({ configFile: file, env: {} }));
      expect(err.message).toMatch(/store\.(adminPassword|jwtSecret) is a secret: set it through the environment/);
      expect(err.message).not.toContain('Secret-Passw0rd');
    }
  });

  it('accepts secrets from the environment', () => {
    const config = loadConfig({ env: { DRIVEWAY_ADMIN_PASSWORD: 'Secret-Passw0rd', DRIVEWAY_JWT_SECRET: 'j'.repeat(32) } });
    expect(config.store.adminPassword).toBe('Secret-Passw0rd');
    expect(config.store.jwtSecret).toBe('j'.repeat(32));
  });

  it('reports an unreadable config file by name', () => {
    const err = loadError(() => loadConfig({ configFile: '/nonexistent/driveway.yaml', env: {} }));
    expect(err.message).toContain('/nonexistent/driveway.yaml');
  });

  it('refuses a config file that is not a mapping', () => {
    const file = configFile('- a\n- b\n');
    expect(loadError(() => loadConfig({ configFile: file, env: {} })).message).toContain('must hold a mapping');
  });
});

describe('DRIVEWAY_* environment variables', () => {
  const samples: Record<string, { value: string; expected: unknown }> = {
    DRIVEWAY_HOST: { value: '0.0.0.0', expected: '0.0.0.0' },
    DRIVEWAY_DATA_DIR: { value: '/tmp/driveway-env-data', expected: '/tmp/driveway-env-data' },
    DRIVEWAY_LOG_LEVEL: { value: 'trace', expected: 'trace' },
    DRIVEWAY_LOG_FORMAT: { value: 'pretty', expected: 'pretty' },
    DRIVEWAY_ACCESS_LOG: { value: '0', expected: false },
    DRIVEWAY_METRICS_ENABLED: { value: 'true', expected: true },
    DRIVEWAY_METRICS_PORT: { value: '19464', expected: 19464 },
    DRIVEWAY_STORE_PORT: { value: '18080', expected: 18080 },
    DRIVEWAY_EDITION: { value: '1.0', expected: '1.0' },
    DRIVEWAY_ADMIN_PASSWORD: { value: 'Env-Passw0rd', expected: 'Env-Passw0rd' },
    DRIVEWAY_JWT_SECRET: { value: 's'.repeat(48), expected: 's'.repeat(48) },
    DRIVEWAY_JWT_ROTATE_DAYS: { value: '7', expected: 7 },
    DRIVEWAY_DAV_PORT: { value: '18081', expected: 18081 },
    DRIVEWAY_BULK_UPLOAD_CLIENTS: { value: 'all', expected: 'all' },
    DRIVEWAY_STORE_URL: { value: 'http://127.0.0.1:18080', expected: 'http://127.0.0.1:18080' },
    DRIVEWAY_TLS_CERT: { value: '/etc/driveway/cert.pem', expected: '/etc/driveway/cert.pem' },
    DRIVEWAY_TLS_KEY: { value: '/etc/driveway/key.pem', expected: '/etc/driveway/key.pem' },
    DRIVEWAY_CACHE_TTL_MS: { value: '750', expected: 750 },
    DRIVEWAY_BRIDGE_PUBLIC_URL: { value: 'https://dav.example.org', expected: 'https://dav.example.org' },
    DRIVEWAY_BRIDGE_CORS_ORIGINS: { value: 'https://files.example.org, http://127.0.0.1:8080', expected: ['https://files.example.org', 'http://127.0.0.1:8080'] },
    DRIVEWAY_TRUSTED_PROXIES: { value: '127.0.0.1, ::1', expected: ['127.0.0.1', '::1'] },
    DRIVEWAY_SMTP_HOST: { value: 'smtp.example.org', expected: 'smtp.example.org' },
    DRIVEWAY_SMTP_PORT: { value: '465', expected: 465 },
    DRIVEWAY_SMTP_USER: { value: 'mailer', expected: 'mailer' },
    DRIVEWAY_SMTP_PASSWORD: { value: 'smtp-secret', expected: 'smtp-secret' },
    DRIVEWAY_MAIL_FROM: { value: 'files@example.org', expected: 'files@example.org' },
    DRIVEWAY_DATABASE_URL: { value: 'postgres://driveway@db.internal/driveway', expected: 'postgres://driveway@db.internal/driveway' },
    DRIVEWAY_DATABASE_MAX_CONNECTIONS: { value: '25', expected: 25 },
    DRIVEWAY_SHUTDOWN_GRACE_SEC: { value: '5', expected: 5 },
    DRIVEWAY_BLOB_BACKEND: { value: 'local', expected: 'local' },
    DRIVEWAY_S3_BUCKET: { value: 'driveway-blobs', expected: 'driveway-blobs' },
    DRIVEWAY_S3_ENDPOINT: { value: 'http://127.0.0.1:9000', expected: 'http://127.0.0.1:9000' },
    DRIVEWAY_S3_REGION: { value: 'eu-central-1', expected: 'eu-central-1' },
    DRIVEWAY_S3_PREFIX: { value: 'prod/', expected: 'prod/' },
    DRIVEWAY_S3_FORCE_PATH_STYLE: { value: 'true', expected: true },
    DRIVEWAY_STORE_TLS_CERT: { value: '/etc/driveway/store-cert.pem', expected: '/etc/driveway/store-cert.pem' },
    DRIVEWAY_STORE_TLS_KEY: { value: '/etc/driveway/store-key.pem', expected: '/etc/driveway/store-key.pem' },
  };

  it('keeps exactly the documented names (they are a public interface)', () => {
    expect(Object.keys(ENV_KEYS).sort()).toEqual(Object.keys(samples).sort());
  });

  /** A certificate needs its key and the reverse: each is set with its partner. */
  const partners: Record<string, string> = {
    DRIVEWAY_TLS_CERT: 'DRIVEWAY_TLS_KEY',
    DRIVEWAY_TLS_KEY: 'DRIVEWAY_TLS_CERT',
    DRIVEWAY_STORE_TLS_CERT: 'DRIVEWAY_STORE_TLS_KEY',
    DRIVEWAY_STORE_TLS_KEY: 'DRIVEWAY_STORE_TLS_CERT',
  };

  it.each(Object.entries(samples))('%s sets its key', (name, { value, expected }) => {
    const partner = partners[name];
    const config = loadConfig({ env: { [name]: value, ...(partner ? { [partner]: '/partner.pem' } : {}) } }) as unknown as Record<string, unknown>;
    const keys = ENV_KEYS[name] as string[];
    const actual = keys.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], config);
    expect(actual).toEqual(expected);
  });

  it('ignores variables outside the list, with one warning line naming the nearest known name', () => {
    const warnings: string[] = [];
    expect(loadConfig({ env: { DRIVEWAY_SESSION_TTL_SEC: '5', DRIVEWAY_STORE_PORTS: '1', PATH: '/bin' }, warn: (line) => warnings.push(line) }).store.sessionTtlSec).toBe(86_400);
    expect(warnings).toEqual([
      'warning: environment variable DRIVEWAY_SESSION_TTL_SEC is not a driveway setting and is ignored',
      'warning: environment variable DRIVEWAY_STORE_PORTS is not a driveway setting and is ignored; did you mean DRIVEWAY_STORE_PORT?',
    ]);
  });

  it('does not warn about the test suites\' DRIVEWAY_TEST_* variables nor the migrate command\'s', () => {
    const warnings: string[] = [];
    loadConfig({ env: { DRIVEWAY_TEST_STORAGE: 'sqlite', DRIVEWAY_MIGRATE_BATCH_ROWS: '10' }, warn: (line) => warnings.push(line) });
    expect(warnings).toEqual([]);
  });
});

describe('unknown keys', () => {
  it('refuses a misspelt key with its dotted name and the nearest known key', () => {
    const file = configFile('store:\n  loginMaxFailure: 5\n');
    expect(loadError(() => loadConfig({ configFile: file, env: {} })).message).toBe(
      `invalid configuration: unknown key store.loginMaxFailure; did you mean store.loginMaxFailures? (in ${file})`,
    );
  });

  it('suggests a key of the same group before one elsewhere (store.port, not bridge.port)', () => {
    const file = configFile('store:\n  prot: 9000\n');
    expect(loadError(() => loadConfig({ configFile: file, env: {} })).message).toContain('unknown key store.prot; did you mean store.port?');
  });

  it('finds a misspelt group and a key in the wrong case', () => {
    const file = configFile('stroe:\n  port: 9000\nbridge:\n  TlsCert: /x.pem\n');
    const message = loadError(() => loadConfig({ configFile: file, env: {} })).message;
    expect(message).toContain('unknown key stroe; did you mean store?');
    expect(message).toContain('unknown key bridge.TlsCert; did you mean bridge.tlsCert?');
  });

  it('lists the keys of the group when nothing is near', () => {
    const file = configFile('http:\n  somethingElse: 1\n');
    expect(loadError(() => loadConfig({ configFile: file, env: {} })).message).toContain(
      'unknown key http.somethingElse; known keys in http: headersTimeoutMs, requestTimeoutMs, idleTimeoutMs',
    );
  });

  it('refuses an unknown key inside a deep group (store.blobs.s3)', () => {
    const file = configFile('store:\n  blobs:\n    s3:\n      buckte: b\n');
    expect(loadError(() => loadConfig({ configFile: file, env: {} })).message).toContain('unknown key store.blobs.s3.buckte; did you mean store.blobs.s3.bucket?');
  });
});

describe('editions written as YAML numbers', () => {
  it('reads unquoted edition: 3.0 and 1.0 (YAML numbers 3 and 1) as "3.0" and "1.0"', () => {
    expect(loadConfig({ configFile: configFile('store:\n  edition: 3.0\n'), env: {} }).store.edition).toBe('3.0');
    expect(loadConfig({ configFile: configFile('store:\n  edition: 1.0\n'), env: {} }).store.edition).toBe('1.0');
    expect(loadConfig({ configFile: configFile('store:\n  edition: 1\n'), env: {} }).store.edition).toBe('1.0');
  });

  it('refuses any other edition and says to quote it', () => {
    const file = configFile('store:\n  edition: 2.0\n');
    expect(loadError(() => loadConfig({ configFile: file, env: {} })).message).toBe(
      `invalid configuration: store.edition (from file ${file}): must be "3.0" or "1.0" (quote it in YAML: edition: "3.0")`,
    );
  });
});

describe('TLS settings', () => {
  it('reads the store\'s certificate and key from DRIVEWAY_STORE_TLS_CERT and DRIVEWAY_STORE_TLS_KEY', () => {
    const config = loadConfig({ env: { DRIVEWAY_STORE_TLS_CERT: '/etc/driveway/cert.pem', DRIVEWAY_STORE_TLS_KEY: '/etc/driveway/key.pem' } });
    expect(config.store.tlsCert).toBe('/etc/driveway/cert.pem');
    expect(config.store.tlsKey).toBe('/etc/driveway/key.pem');
  });

  it('refuses a certificate without its key, on either listener', () => {
    expect(loadError(() => loadConfig({ env: { DRIVEWAY_STORE_TLS_CERT: '/c.pem' } })).message).toContain('store.tlsKey (not set): required when tlsCert is set');
    expect(loadError(() => loadConfig({ env: { DRIVEWAY_TLS_KEY: '/k.pem' } })).message).toContain('bridge.tlsCert (not set): required when tlsKey is set');
  });
});
