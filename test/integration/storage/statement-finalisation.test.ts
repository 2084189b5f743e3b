/**
 * The SQLite driver survives the garbage collector finalising prepared statements on the Node.js
 * running the suite (issue 21, item 3): better-sqlite3 12 aborted the process on Node 24
 * (`Assertion failed: (env) != nullptr` in node::RemoveEnvironmentCleanupHook, from
 * Statement::~Statement) as soon as a statement it had prepared was collected. The store drops
 * statements whenever its statement cache starts over (sqlite-open.ts), so this runs the store's
 * own opening path in a child process with `--expose-gc`: an abort is a signal, not an exception.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const script = `
const { openDatabase } = await import('./src/store/storage/dialects/sqlite-open.ts');
const db = openDatabase(process.env.DB_FILE);
for (let round = 0; round < 4; round++) {
  // 5,000 distinct texts a round: past the cache's limit, so it starts over and lets go of them.
  for (let i = 0; i < 5000; i++) db.prepare('SELECT ' + (round * 5000 + i) + ' AS n').get();
  globalThis.gc();
}
db.close();
globalThis.gc();
console.log('survived');
`;

describe('prepared statements collected by the garbage collector', () => {
  let remove: (() => void) | undefined;
  afterEach(() => remove?.());

  it('do not abort the process', () => {
    const tmp = makeTmpDir();
    remove = tmp.remove;
    const run = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: path.resolve(import.meta.dirname, '../../..'),
      env: { ...process.env, DB_FILE: path.join(tmp.dir, 'gc.sqlite') },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect({ signal: run.signal, status: run.status, stderr: run.stderr.slice(-2000) }).toEqual({ signal: null, status: 0, stderr: '' });
    expect(run.stdout).toContain('survived');
  });
});
