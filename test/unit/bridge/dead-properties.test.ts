import Database from 'better-sqlite3';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DeadPropertyLimitError,
  DeadPropertyStore,
  parseDateProperty,
  parseOcMtime,
  type DeadPropertyStoreOptions,
} from '../../../src/bridge/dead-properties.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length > 0) cleanups.pop()?.();
});

function openStore(options: DeadPropertyStoreOptions = {}) {
  const tmp = makeTmpDir('driveway-deadprops-');
  const file = path.join(tmp.dir, 'bridge.sqlite');
  const store = DeadPropertyStore.open(file, options);
  cleanups.push(() => {
    store.close();
    tmp.remove();
  });
  return { store, file };
}

const WIN_NS = 'urn:schemas-microsoft-com:';
const win = (local: string, value: string) => ({ ns: WIN_NS, local, xml: `<Z:${local} xmlns:Z="${WIN_NS}">${value}</Z:${local}>` });

describe('DeadPropertyStore', () => {
  it('creates its schema in WAL mode and reopens an existing file', () => {
    const { store, file } = openStore();
    store.set('n1', win('Win32FileAttributes', '00000020'));
    store.close();
    const reopened = DeadPropertyStore.open(file);
    cleanups.push(() => reopened.close());
    expect(reopened.list('n1')).toEqual([win('Win32FileAttributes', '00000020')]);
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(raw.pragma('user_version', { simple: true })).toBe(2);
    raw.close();
  });

  it('refuses a file written by a newer bridge', () => {
    const { store, file } = openStore();
    store.close();
    const raw = new Database(file);
    raw.pragma('user_version = 99');
    raw.close();
    expect(() => DeadPropertyStore.open(file)).toThrow(/schema 99/);
  });

  it('sets, replaces, reads and removes properties by namespace and name', () => {
    const { store } = openStore();
    store.set('n1', win('Win32LastModifiedTime', 'Tue, 07 Jan 2025 11:22:33 GMT'));
    store.set('n1', { ns: '', local: 'nonamespace', xml: '<nonamespace>randomvalue</nonamespace>' });
    store.set('n1', win('Win32LastModifiedTime', 'Wed, 08 Jan 2025 00:00:00 GMT'));
    expect(store.get('n1', WIN_NS, 'Win32LastModifiedTime')).toEqual(win('Win32LastModifiedTime', 'Wed, 08 Jan 2025 00:00:00 GMT'));
    expect(store.list('n1').map((p) => `{${p.ns}}${p.local}`)).toEqual(['{}nonamespace', `{${WIN_NS}}Win32LastModifiedTime`]);
    store.remove('n1', '', 'nonamespace');
    expect(store.get('n1', '', 'nonamespace')).toBeUndefined();
    store.remove('n1', 'urn:never', 'set');
    expect(store.list('n1')).toHaveLength(1);
    expect(store.list('other')).toEqual([]);
  });

  it('keeps values byte for byte, high Unicode included', () => {
    const { store } = openStore();
    const xml = '<t:high xmlns:t="http://example.com/neon/litmus/">\u{10000}\u{10FFFD}😀 &amp; &lt;</t:high>';
    store.set('n1', { ns: 'http://example.com/neon/litmus/', local: 'high', xml });
    expect(store.get('n1', 'http://example.com/neon/litmus/', 'high')?.xml).toBe(xml);
  });

  it('applies a batch in order, all or nothing', () => {
    const { store } = openStore({ maxPropertiesPerNode: 3 });
    store.apply('n1', [
      { op: 'set', ...win('a', '1') },
      { op: 'set', ...win('b', '1') },
      { op: 'remove', ns: WIN_NS, local: 'a' },
      { op: 'set', ...win('b', '2') },
    ]);
    expect(store.list('n1')).toEqual([win('b', '2')]);
    const before = store.list('n1');
    expect(() =>
      store.apply('n1', [
        { op: 'remove', ns: WIN_NS, local: 'b' },
        { op: 'set', ...win('c', '1') },
        { op: 'set', ...win('d', '1') },
        { op: 'set', ...win('e', '1') },
        { op: 'set', ...win('f', '1') },
      ]),
    ).toThrow(DeadPropertyLimitError);
    expect(store.list('n1')).toEqual(before);
  });

  it('bounds the bytes one node may carry', () => {
    const { store } = openStore({ maxBytesPerNode: 1000 });
    store.set('n1', { ns: 'urn:x', local: 'a', xml: `<x:a xmlns:x="urn:x">${'é'.repeat(300)}</x:a>` });
    try {
      store.set('n1', { ns: 'urn:x', local: 'b', xml: `<x:b xmlns:x="urn:x">${'é'.repeat(300)}</x:b>` });
      expect.unreachable('the second property passes the byte limit');
    } catch (err) {
      expect(err).toBeInstanceOf(DeadPropertyLimitError);
      expect((err as DeadPropertyLimitError).kind).toBe('too-large');
    }
    expect(store.list('n1')).toHaveLength(1);
  });

  it('lists many nodes in one call, leaving out nodes without properties', () => {
    const { store } = openStore();
    store.set('n1', win('a', '1'));
    store.set('n2', win('a', '2'));
    store.set('n2', win('b', '2'));
    const many = store.listMany(['n1', 'n2', 'n3']);
    expect([...many.keys()].sort()).toEqual(['n1', 'n2']);
    expect(many.get('n2')).toEqual([win('a', '2'), win('b', '2')]);
    expect(store.listMany([]).size).toBe(0);
  });

  it('copies properties and mtime onto another node, replacing what it had (COPY)', () => {
    const { store } = openStore();
    store.set('src', win('a', 'from-src'));
    store.setMtime('src', 1_577_836_800_000);
    store.set('dst', win('old', 'gone'));
    store.setMtime('dst', 1);
    store.copy('src', 'dst');
    expect(store.list('dst')).toEqual([win('a', 'from-src')]);
    expect(store.getMtime('dst')).toBe(1_577_836_800_000);
    expect(store.list('src')).toEqual([win('a', 'from-src')]);
    store.copy('nothing', 'dst');
    expect(store.list('dst')).toEqual([]);
    expect(store.getMtime('dst')).toBeUndefined();
    store.copy('src', 'src');
    expect(store.list('src')).toHaveLength(1);
  });

  it('drops everything a node had (DELETE)', () => {
    const { store } = openStore();
    store.set('n1', win('a', '1'));
    store.setMtime('n1', 5);
    store.set('n2', win('a', '1'));
    store.set('n3', win('a', '1'));
    store.drop('n1');
    expect(store.list('n1')).toEqual([]);
    expect(store.getMtime('n1')).toBeUndefined();
    store.dropMany(['n2', 'n3']);
    expect(store.listMany(['n2', 'n3']).size).toBe(0);
  });

  it('keeps client modification times per node', () => {
    const { store } = openStore();
    expect(store.getMtime('n1')).toBeUndefined();
    store.setMtime('n1', 1_577_836_800_123.9);
    expect(store.getMtime('n1')).toBe(1_577_836_800_123);
    store.setMtime('n1', 1_600_000_000_000);
    store.setMtime('n2', 0);
    expect(store.getMtimes(['n1', 'n2', 'n3'])).toEqual(new Map([['n1', 1_600_000_000_000], ['n2', 0]]));
    store.clearMtime('n1');
    expect(store.getMtime('n1')).toBeUndefined();
    expect(() => store.setMtime('n1', Number.NaN)).toThrow(RangeError);
  });

  it('answers a 10,000-node listing lookup in one query each', () => {
    const { store } = openStore();
    const ids = Array.from({ length: 10_000 }, (_, i) => `node-${i}`);
    store.setMtime('node-9999', 42);
    store.set('node-5000', win('a', '1'));
    expect(store.getMtimes(ids)).toEqual(new Map([['node-9999', 42]]));
    expect([...store.listMany(ids).keys()]).toEqual(['node-5000']);
  });

  it('counts each owner’s bytes exactly across nodes, refuses growth past the owner’s limit, and frees bytes on removal', () => {
    const { store } = openStore({ maxBytesPerOwner: 4000 });
    const big = (local: string) => ({ ns: 'urn:x', local, xml: `<x:${local} xmlns:x="urn:x">${'v'.repeat(900)}</x:${local}>` });
    const weight = (p: { ns: string; local: string; xml: string }) => Buffer.byteLength(p.xml) + Buffer.byteLength(p.ns) + Buffer.byteLength(p.local);
    store.apply('n1', [{ op: 'set', ...big('a') }], 'alice');
    store.apply('n2', [{ op: 'set', ...big('a') }], 'alice');
    store.apply('n3', [{ op: 'set', ...big('a') }, { op: 'set', ...big('b') }], 'alice');
    expect(store.ownerBytes('alice')).toBe(4 * weight(big('a')));
    // Another owner has a budget of their own.
    store.apply('n9', [{ op: 'set', ...big('a') }], 'bob');
    try {
      store.apply('n4', [{ op: 'set', ...big('a') }], 'alice');
      expect.unreachable('the fifth property passes alice’s limit');
    } catch (err) {
      expect((err as DeadPropertyLimitError).kind).toBe('owner-full');
    }
    expect(store.list('n4')).toEqual([]);
    // Replacing a value by one of the same size, and removing, still work at the limit.
    store.apply('n1', [{ op: 'set', ...big('a') }], 'alice');
    store.apply('n3', [{ op: 'remove', ns: 'urn:x', local: 'b' }], 'alice');
    expect(store.ownerBytes('alice')).toBe(3 * weight(big('a')));
    store.drop('n2');
    store.dropMany(['n1']);
    expect(store.ownerBytes('alice')).toBe(weight(big('a')));
    store.apply('n4', [{ op: 'set', ...big('a') }], 'alice');
    // A COPY that would pass the limit copies nothing; one that fits is charged.
    store.apply('n5', [{ op: 'set', ...big('b') }, { op: 'set', ...big('c') }], 'alice');
    expect(store.copy('n5', 'n6', 'alice')).toBe(false);
    expect(store.list('n6')).toEqual([]);
    expect(store.copy('n5', 'n6', 'bob')).toBe(true);
    expect(store.ownerBytes('bob')).toBe(3 * weight(big('a')));
    // A node patched under another owner (it moved) is charged to that owner as a whole.
    store.apply('n5', [{ op: 'set', ...big('d') }], 'carol');
    expect(store.ownerBytes('carol')).toBe(3 * weight(big('a')));
    expect(store.ownerBytes('alice')).toBe(2 * weight(big('a')));
  });

  it('migrates a version 1 file: its properties are kept and charged to nobody until patched again', () => {
    const tmp = makeTmpDir('driveway-deadprops-');
    cleanups.push(() => tmp.remove());
    const file = path.join(tmp.dir, 'bridge.sqlite');
    const raw = new Database(file);
    raw.exec(`CREATE TABLE dead_properties (node_id TEXT NOT NULL, ns TEXT NOT NULL, local TEXT NOT NULL, xml TEXT NOT NULL, PRIMARY KEY (node_id, ns, local)) WITHOUT ROWID;
      CREATE TABLE client_mtimes (node_id TEXT PRIMARY KEY, mtime_ms INTEGER NOT NULL) WITHOUT ROWID;`);
    raw.prepare('INSERT INTO dead_properties VALUES (?, ?, ?, ?)').run('n1', WIN_NS, 'a', win('a', '1').xml);
    raw.pragma('user_version = 1');
    raw.close();
    const store = DeadPropertyStore.open(file);
    cleanups.push(() => store.close());
    expect(store.list('n1')).toEqual([win('a', '1')]);
    expect(store.ownerBytes('')).toBeGreaterThan(0);
    store.apply('n1', [{ op: 'set', ...win('b', '2') }], 'alice');
    expect(store.ownerBytes('')).toBe(0);
    expect(store.ownerBytes('alice')).toBe(store.list('n1').reduce((sum, p) => sum + Buffer.byteLength(p.xml) + Buffer.byteLength(p.ns) + Buffer.byteLength(p.local), 0));
  });
});

describe('client mtime parsers', () => {
  it('reads X-OC-Mtime seconds (rclone)', () => {
    expect(parseOcMtime('1577836800')).toBe(1_577_836_800_000);
    expect(parseOcMtime(' 1577836800.25 ')).toBe(1_577_836_800_250);
    expect(parseOcMtime(undefined)).toBeUndefined();
    expect(parseOcMtime('-5')).toBeUndefined();
    expect(parseOcMtime('soon')).toBeUndefined();
    expect(parseOcMtime('1e9')).toBeUndefined();
  });

  it('reads date properties (Win32LastModifiedTime, SAR:lastmodified)', () => {
    expect(parseDateProperty('Tue, 07 Jan 2025 11:22:33 GMT')).toBe(Date.UTC(2025, 0, 7, 11, 22, 33));
    expect(parseDateProperty('2025-01-07T11:22:33Z')).toBe(Date.UTC(2025, 0, 7, 11, 22, 33));
    expect(parseDateProperty('')).toBeUndefined();
    expect(parseDateProperty('not a date')).toBeUndefined();
    expect(parseDateProperty('1577836800')).toBeUndefined();
  });
});
