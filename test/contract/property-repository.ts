/**
 * One suite for every storage the bridge keeps dead properties and client mtimes in: the
 * SqlPropertyRepository over the bridge's own bridge.sqlite (test/unit/store/dav-state),
 * over the store's SQLite database and over PostgreSQL
 * (test/integration/bridge-state/repositories.test.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DeadPropertyLimitError, type DeadPropertyStoreOptions } from '../../src/contracts/dav-properties.js';
import { SqlPropertyRepository } from '../../src/store/storage/dav-properties.js';
import type { Sql } from '../../src/store/storage/sql.js';

const WIN_NS = 'urn:schemas-microsoft-com:';
const win = (local: string, value: string) => ({ ns: WIN_NS, local, xml: `<Z:${local} xmlns:Z="${WIN_NS}">${value}</Z:${local}>` });

/** A fresh, empty set of the storage layer's dav_* tables, and how to let it go after a test. */
export interface PropertyStorageFactory {
  open(): Promise<Sql>;
  close?(): Promise<void>;
}

export function describePropertyRepository(name: string, factory: () => PropertyStorageFactory): void {
  describe(`PropertyRepository contract: ${name}`, () => {
    let current: PropertyStorageFactory | undefined;
    afterEach(async () => {
      await current?.close?.();
      current = undefined;
    });

    async function openStore(options: DeadPropertyStoreOptions = {}) {
      current = factory();
      const sql = await current.open();
      return { store: new SqlPropertyRepository(sql, options), sql };
    }

    it('sets, replaces, reads and removes properties by namespace and name', async () => {
      const { store } = await openStore();
      await store.set('n1', win('Win32LastModifiedTime', 'Tue, 07 Jan 2025 11:22:33 GMT'));
      await store.set('n1', { ns: '', local: 'nonamespace', xml: '<nonamespace>randomvalue</nonamespace>' });
      await store.set('n1', win('Win32LastModifiedTime', 'Wed, 08 Jan 2025 00:00:00 GMT'));
      expect(await store.get('n1', WIN_NS, 'Win32LastModifiedTime')).toEqual(win('Win32LastModifiedTime', 'Wed, 08 Jan 2025 00:00:00 GMT'));
      expect((await store.list('n1')).map((p) => `{${p.ns}}${p.local}`)).toEqual(['{}nonamespace', `{${WIN_NS}}Win32LastModifiedTime`]);
      await store.remove('n1', '', 'nonamespace');
      expect(await store.get('n1', '', 'nonamespace')).toBeUndefined();
      await store.remove('n1', 'urn:never', 'set');
      expect(await store.list('n1')).toHaveLength(1);
      expect(await store.list('other')).toEqual([]);
    });

    it('keeps values byte for byte, high Unicode included', async () => {
      const { store } = await openStore();
      const xml = '<t:high xmlns:t="http://example.com/neon/litmus/">\u{10000}\u{10FFFD}😀 &amp; &lt;</t:high>';
      await store.set('n1', { ns: 'http://example.com/neon/litmus/', local: 'high', xml });
      expect((await store.get('n1', 'http://example.com/neon/litmus/', 'high'))?.xml).toBe(xml);
    });

    it('applies a batch in order, all or nothing', async () => {
      const { store } = await openStore({ maxPropertiesPerNode: 3 });
      await store.apply('n1', [
        { op: 'set', ...win('a', '1') },
        { op: 'set', ...win('b', '1') },
        { op: 'remove', ns: WIN_NS, local: 'a' },
        { op: 'set', ...win('b', '2') },
      ]);
      expect(await store.list('n1')).toEqual([win('b', '2')]);
      const before = await store.list('n1');
      await expect(store.apply('n1', [
          { op: 'remove', ns: WIN_NS, local: 'b' },
          { op: 'set', ...win('c', '1') },
          { op: 'set', ...win('d', '1') },
          { op: 'set', ...win('e', '1') },
          { op: 'set', ...win('f', '1') },
        ])).rejects.toThrow(DeadPropertyLimitError);
      expect(await store.list('n1')).toEqual(before);
    });

    it('bounds the bytes one node may carry', async () => {
      const { store } = await openStore({ maxBytesPerNode: 1000 });
      await store.set('n1', { ns: 'urn:x', local: 'a', xml: `<x:a xmlns:x="urn:x">${'é'.repeat(300)}</x:a>` });
      try {
        await store.set('n1', { ns: 'urn:x', local: 'b', xml: `<x:b xmlns:x="urn:x">${'é'.repeat(300)}</x:b>` });
        expect.unreachable('the second property passes the byte limit');
      } catch (err) {
        expect(err).toBeInstanceOf(DeadPropertyLimitError);
        expect((err as DeadPropertyLimitError).kind).toBe('too-large');
      }
      expect(await store.list('n1')).toHaveLength(1);
    });

    it('lists many nodes in one call, leaving out nodes without properties', async () => {
      const { store } = await openStore();
      await store.set('n1', win('a', '1'));
      await store.set('n2', win('a', '2'));
      await store.set('n2', win('b', '2'));
      const many = await store.listMany(['n1', 'n2', 'n3']);
      expect([...many.keys()].sort()).toEqual(['n1', 'n2']);
      expect(many.get('n2')).toEqual([win('a', '2'), win('b', '2')]);
      expect((await store.listMany([])).size).toBe(0);
    });

    it('copies properties and mtime onto another node, replacing what it had (COPY)', async () => {
      const { store } = await openStore();
      await store.set('src', win('a', 'from-src'));
      await store.setMtime('src', 1_577_836_800_000);
      await store.set('dst', win('old', 'gone'));
      await store.setMtime('dst', 1);
      await store.copy('src', 'dst');
      expect(await store.list('dst')).toEqual([win('a', 'from-src')]);
      expect(await store.getMtime('dst')).toBe(1_577_836_800_000);
      expect(await store.list('src')).toEqual([win('a', 'from-src')]);
      await store.copy('nothing', 'dst');
      expect(await store.list('dst')).toEqual([]);
      expect(await store.getMtime('dst')).toBeUndefined();
      await store.copy('src', 'src');
      expect(await store.list('src')).toHaveLength(1);
    });

    it('drops everything a node had (DELETE)', async () => {
      const { store } = await openStore();
      await store.set('n1', win('a', '1'));
      await store.setMtime('n1', 5);
      await store.set('n2', win('a', '1'));
      await store.set('n3', win('a', '1'));
      await store.drop('n1');
      expect(await store.list('n1')).toEqual([]);
      expect(await store.getMtime('n1')).toBeUndefined();
      await store.dropMany(['n2', 'n3']);
      expect((await store.listMany(['n2', 'n3'])).size).toBe(0);
    });

    it('keeps client modification times per node', async () => {
      const { store } = await openStore();
      expect(await store.getMtime('n1')).toBeUndefined();
      await store.setMtime('n1', 1_577_836_800_123.9);
      expect(await store.getMtime('n1')).toBe(1_577_836_800_123);
      await store.setMtime('n1', 1_600_000_000_000);
      await store.setMtime('n2', 0);
      expect(await store.getMtimes(['n1', 'n2', 'n3'])).toEqual(new Map([['n1', 1_600_000_000_000], ['n2', 0]]));
      await store.clearMtime('n1');
      expect(await store.getMtime('n1')).toBeUndefined();
      await expect(store.setMtime('n1', Number.NaN)).rejects.toThrow(RangeError);
    });

    it('answers a 10,000-node listing lookup in one query each', async () => {
      const { store } = await openStore();
      const ids = Array.from({ length: 10_000 }, (_, i) => `node-${i}`);
      await store.setMtime('node-9999', 42);
      await store.set('node-5000', win('a', '1'));
      expect(await store.getMtimes(ids)).toEqual(new Map([['node-9999', 42]]));
      expect([...(await store.listMany(ids)).keys()]).toEqual(['node-5000']);
    });

    it('counts each owner’s bytes exactly across nodes, refuses growth past the owner’s limit, and frees bytes on removal', async () => {
      const { store } = await openStore({ maxBytesPerOwner: 4000 });
      const big = (local: string) => ({ ns: 'urn:x', local, xml: `<x:${local} xmlns:x="urn:x">${'v'.repeat(900)}</x:${local}>` });
      const weight = (p: { ns: string; local: string; xml: string }) => Buffer.byteLength(p.xml) + Buffer.byteLength(p.ns) + Buffer.byteLength(p.local);
      await store.apply('n1', [{ op: 'set', ...big('a') }], 'alice');
      await store.apply('n2', [{ op: 'set', ...big('a') }], 'alice');
      await store.apply('n3', [{ op: 'set', ...big('a') }, { op: 'set', ...big('b') }], 'alice');
      expect(await store.ownerBytes('alice')).toBe(4 * weight(big('a')));
      // Another owner has a budget of their own.
      await store.apply('n9', [{ op: 'set', ...big('a') }], 'bob');
      try {
        await store.apply('n4', [{ op: 'set', ...big('a') }], 'alice');
        expect.unreachable('the fifth property passes alice’s limit');
      } catch (err) {
        expect((err as DeadPropertyLimitError).kind).toBe('owner-full');
      }
      expect(await store.list('n4')).toEqual([]);
      // Replacing a value by one of the same size, and removing, still work at the limit.
      await store.apply('n1', [{ op: 'set', ...big('a') }], 'alice');
      await store.apply('n3', [{ op: 'remove', ns: 'urn:x', local: 'b' }], 'alice');
      expect(await store.ownerBytes('alice')).toBe(3 * weight(big('a')));
      await store.drop('n2');
      await store.dropMany(['n1']);
      expect(await store.ownerBytes('alice')).toBe(weight(big('a')));
      await store.apply('n4', [{ op: 'set', ...big('a') }], 'alice');
      // A COPY that would pass the limit copies nothing; one that fits is charged.
      await store.apply('n5', [{ op: 'set', ...big('b') }, { op: 'set', ...big('c') }], 'alice');
      expect(await store.copy('n5', 'n6', 'alice')).toBe(false);
      expect(await store.list('n6')).toEqual([]);
      expect(await store.copy('n5', 'n6', 'bob')).toBe(true);
      expect(await store.ownerBytes('bob')).toBe(3 * weight(big('a')));
      // A node patched under another owner (it moved) is charged to that owner as a whole.
      await store.apply('n5', [{ op: 'set', ...big('d') }], 'carol');
      expect(await store.ownerBytes('carol')).toBe(3 * weight(big('a')));
      expect(await store.ownerBytes('alice')).toBe(2 * weight(big('a')));
    });

    it('keeps the per-owner total equal to what the rows weigh, whatever changed them', async () => {
      const { store, sql } = await openStore();
      await store.apply('n1', [{ op: 'set', ...win('a', 'é'.repeat(50)) }, { op: 'set', ...win('b', '1') }], 'alice');
      await store.apply('n2', [{ op: 'set', ...win('a', '2') }], 'alice');
      await store.copy('n1', 'n3', 'alice');
      await store.apply('n1', [{ op: 'remove', ns: WIN_NS, local: 'b' }], 'alice');
      await store.apply('n2', [{ op: 'set', ...win('a', 'longer value') }], 'bob');
      await store.dropMany(['n3']);
      for (const owner of ['alice', 'bob']) {
        const rows = await sql.all<{ xml: string; ns: string; local: string }>('SELECT xml, ns, local FROM dav_properties WHERE owner = ?', [owner]);
        const weight = rows.reduce((sum, p) => sum + Buffer.byteLength(p.xml) + Buffer.byteLength(p.ns) + Buffer.byteLength(p.local), 0);
        expect(await store.ownerBytes(owner), owner).toBe(weight);
      }
    });

    it('applies PROPPATCHes of one node started at once one after the other, none lost', async () => {
      const { store } = await openStore({ maxPropertiesPerNode: 100 });
      await Promise.all(Array.from({ length: 10 }, (_, i) => store.apply('n1', [{ op: 'set', ...win(`p${i}`, String(i)) }], 'alice')));
      expect((await store.list('n1')).map((p) => p.local).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `p${i}`).sort());
    });
  });
}
