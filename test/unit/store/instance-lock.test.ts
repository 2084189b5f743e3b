/**
 * lockDataDir (store/storage/instance-lock.ts) on a real lock file: one holder per data directory and
 * part, store and bridge independent, released on release(). Across processes, and after a
 * SIGKILL, test/security/single-instance.test.ts.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { DataDirInUseError, lockDataDir } from '../../../src/store/storage/instance-lock.js';
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
