/**
 * lockDataDir (store/storage/instance-lock.ts) on a real lock file: one holder per data directory and
 * part, store and bridge independent, released on release(). Across processes, and after a
 * SIGKILL, test/security/single-instance.test.ts. tryLockFile, the same lock on a bare file (a
 * staging owner's): busy while held, missing without the file, an empty 0600 file and no journal;
 * across processes, test/integration/faults/staging-leftovers.test.ts.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { DataDirInUseError, lockDataDir, tryLockFile } from '../../../src/store/storage/instance-lock.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

let tmp: ReturnType<typeof makeTmpDir>;
beforeEach(() => {
  tmp = makeTmpDir('driveway-lock-');
});
afterEach(() => tmp.remove());

it('refuses a second holder of the same part until the first releases', () => {
  const first = lockDataDir(tmp.dir, 'store');
  expect(() => lockDataDir(tmp.dir, 'store')).toThrow(DataDirInUseError);
  expect(() => lockDataDir(tmp.dir, 'store')).toThrow(`the data directory ${tmp.dir} is in use`);
  first.release();
  first.release();
  const again = lockDataDir(tmp.dir, 'store');
  again.release();
});

it('keeps the store and the bridge apart (`--only store` and `--only bridge` may share a directory)', () => {
  const store = lockDataDir(tmp.dir, 'store');
  const bridge = lockDataDir(tmp.dir, 'bridge');
  expect(() => lockDataDir(tmp.dir, 'bridge')).toThrow(/\(its bridge\)/);
  store.release();
  bridge.release();
});

it('tryLockFile: holds a bare file, busy for anyone else until released, missing when there is no file', () => {
  const file = path.join(tmp.dir, 'x.owner');
  expect(tryLockFile(file, { create: false })).toBe('missing');
  const held = tryLockFile(file, { create: true });
  expect(typeof held).toBe('object');
  expect(tryLockFile(file, { create: false })).toBe('busy');
  // Nothing written: an empty file of mode 0600, no journal beside it.
  expect(statSync(file).size).toBe(0);
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(readdirSync(tmp.dir)).toEqual(['x.owner']);
  (held as { release(): void }).release();
  const again = tryLockFile(file, { create: false });
  expect(typeof again).toBe('object');
  (again as { release(): void }).release();
});
