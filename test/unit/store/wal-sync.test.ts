/**
 * Group commit (storage/dialects/wal-sync.ts, durability.ts) on a real database file: a request that wrote
 * waits for an fsync that started after its commit, concurrent writers share fsyncs, a request
 * that changed nothing waits for none, and a missing WAL file is nothing to flush. Before a blob
 * goes (durability.ts durable()): an fsync at the first call and after each change, none when one
 * covered everything already, and always beside a server's connection.
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../../src/store/storage/dialects/sqlite-open.js';
import { WalSync } from '../../../src/store/storage/dialects/wal-sync.js';
import { Durability } from '../../../src/store/durability.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

let tmp: ReturnType<typeof makeTmpDir>;
let file: string;
let db: Db;
let durability: Durability;

beforeEach(() => {
  tmp = makeTmpDir('driveway-wal-');
  file = path.join(tmp.dir, 'driveway.sqlite');
  db = openDatabase(file);
  db.exec('CREATE TABLE t (n INTEGER)');
  durability = new Durability(db, file);
});
afterEach(async () => {
  await durability.close();
  db.close();
  tmp.remove();
});

describe('group commit', () => {
  it('runs without a per-commit fsync: synchronous is NORMAL in WAL mode', () => {
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(1);
  });

  it('flushes for a request that wrote, and not for one that changed nothing', async () => {
    const before = durability.flushes;
    await durability.run(() => db.prepare('SELECT COUNT(*) FROM t').get());
    expect(durability.flushes).toBe(before);
    await durability.run(() => db.prepare('INSERT INTO t VALUES (1)').run());
    expect(durability.flushes).toBe(before + 1);
  });

  it('lets concurrent writers share fsyncs: many commits, at most two flushes', async () => {
    const before = durability.flushes;
    await Promise.all(Array.from({ length: 50 }, (_, i) => durability.run(() => db.prepare('INSERT INTO t VALUES (?)').run(i))));
    expect(durability.flushes - before).toBeGreaterThanOrEqual(1);
    expect(durability.flushes - before).toBeLessThanOrEqual(2);
    expect(db.prepare('SELECT COUNT(*) AS n FROM t').get()).toEqual({ n: 50 });
  });

  it('makes a commit that arrives during an fsync wait for the next one', async () => {
    const wal = new WalSync(`${file}-wal`);
    db.prepare('INSERT INTO t VALUES (1)').run();
    const first = wal.sync();
    // Committed after the first fsync started: it must not be answered by that one.
    db.prepare('INSERT INTO t VALUES (2)').run();
    let secondDone = false;
    const second = wal.sync().then(() => {
      secondDone = true;
    });
    const third = wal.sync();
    await first;
    expect(wal.flushes).toBe(1);
    await Promise.all([second, third]);
    expect(secondDone).toBe(true);
    expect(wal.flushes).toBe(2);
    await wal.close();
  });

  it('has nothing to flush when there is no WAL file', async () => {
    const wal = new WalSync(path.join(tmp.dir, 'nothing-wal'));
    await wal.sync();
    expect(wal.flushes).toBe(0);
    await wal.close();
  });
});

describe('what an fsync covers', () => {
  it('lets a caller whose commits came before the running fsync started share it', async () => {
    const wal = new WalSync(`${file}-wal`);
    db.prepare('INSERT INTO t VALUES (1)').run();
    const first = wal.sync(1);
    // Nothing committed since it started: the running fsync covers this caller too.
    const joined = wal.sync(1);
    db.prepare('INSERT INTO t VALUES (2)').run();
    const next = wal.sync(2);
    const unknown = wal.sync();
    await Promise.all([first, joined]);
    expect(wal.flushes).toBe(1);
    expect(wal.covered(1)).toBe(true);
    expect(wal.covered(2)).toBe(false);
    await Promise.all([next, unknown]);
    expect(wal.flushes).toBe(2);
    expect(wal.covered(2)).toBe(true);
    expect(wal.covered(3)).toBe(false);
    expect(wal.covered(undefined)).toBe(false);
    await wal.close();
  });

  it('durable(): an fsync at the first call, then only after the connection wrote', async () => {
    // The first: a WAL a killed process left may hold commits that never reached the disk.
    await durability.durable();
    expect(durability.flushes).toBe(1);
    await durability.durable();
    expect(durability.flushes).toBe(1);
    const mark = durability.mark();
    db.prepare('INSERT INTO t VALUES (1)').run();
    await durability.durable();
    expect(durability.flushes).toBe(2);
    // What durable() made durable, the request's settle() does not fsync again.
    await durability.settle(mark);
    expect(durability.flushes).toBe(2);
  });

  it('durable(): a change counted inside an open transaction is not covered until an fsync after its commit', async () => {
    await durability.durable();
    db.exec('BEGIN IMMEDIATE');
    db.prepare('INSERT INTO t VALUES (1)').run();
    // Synced while the transaction is open: its changes are counted, not committed.
    await durability.durable();
    db.exec('COMMIT');
    const flushed = durability.flushes;
    await durability.durable();
    expect(durability.flushes).toBe(flushed + 1);
  });

  it('durable() beside a server fsyncs every time: the server’s commits are not in its count', async () => {
    const beside = new Durability(db, file, { besideServer: true });
    try {
      await beside.durable();
      await beside.durable();
      expect(beside.flushes).toBe(2);
    } finally {
      await beside.close();
    }
  });
});
