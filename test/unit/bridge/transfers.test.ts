/**
 * The undo steps of a failed MOVE or COPY (StoreTree.move, StoreTree.copy). A transfer is several
 * store calls: the source to a passing name and into the target folder, the replaced target to
 * the trash, the last rename; for a copy a staging folder around copy_to, purged at the end.
 * Each case runs once to learn its store writes (and checks where everything ended up), then
 * once per write with that write failing (the in-memory store's fault injection: the store
 * unreachable, nothing changed by that call). A failure the bridge answers leaves both owners'
 * whole trees (hidden names, trash and revisions included, same UUIDs) as they were, and the
 * bridge resolves the source and the destination to what they were; the only exceptions are the
 * documented ones: the cleanup of a transfer that succeeded (an empty staging folder stays,
 * hidden), and a save over a store without the revision route, whose new revision nothing can take
 * back through the interface (docs/bridge-design.md "Saves").
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { NodeId } from '../../../src/store-client/contract.js';
import type { BridgeUser } from '../../../src/bridge/sessions.js';
import type { DavPath, StoreTree } from '../../../src/bridge/store-tree.js';
import { MemoryStore, type MemoryStoreOptions, type WriteCall, type WriteMethod } from '../../helpers/memory-store.js';
import { bridgeUserOf, memoryTree } from '../../helpers/memory-tree.js';

const closing: Array<() => void> = [];
afterEach(() => {
  for (const close of closing.splice(0)) close();
});

interface World {
  store: MemoryStore;
  tree: StoreTree;
  alice: BridgeUser;
  aliceId: string;
  groupId: string;
}

/** Alice, a member of group Team with every node permission, and what `seed` lists: `home/a/x.txt` a file, `null` a folder. */
async function world(options: MemoryStoreOptions, seed: Array<['alice' | 'group', Record<string, string | null>]>): Promise<World> {
  const store = new MemoryStore(options);
  const user = store.admin.addUser();
  const groupId = store.admin.addGroup('Team');
  store.admin.addMember(groupId, user.uuid);
  const { tree, close } = memoryTree(store);
  closing.push(close);
  const alice = bridgeUserOf(store, user);
  const s = await alice.session();
  for (const [owner, entries] of seed) {
    for (const [path, content] of Object.entries(entries)) {
      const [top, ...names] = path.split('/');
      let folder = (owner === 'alice' ? top : `${top}:${groupId}`) as NodeId;
      for (const [i, name] of names.entries()) {
        if (i === names.length - 1 && content !== null) {
          await store.client.upload(s, { folder, name }, Buffer.from(content));
          break;
        }
        let listed = (await store.client.listFolder(s, folder)).find((e) => e.name === name);
        if (!listed) {
          await store.client.createFolder(s, folder, name);
          listed = (await store.client.listFolder(s, folder)).find((e) => e.name === name);
        }
        folder = listed?.id as NodeId;
      }
    }
  }
  return { store, tree, alice, aliceId: user.uuid, groupId };
}

/** Both owners' trees, a staging folder's random name made comparable. */
function snapshot(w: World): string[] {
  const lines = [...w.store.snapshot(w.aliceId).map((l) => `alice ${l}`), ...w.store.snapshot(w.groupId).map((l) => `group ${l}`)];
  return lines.map((l) => l.replace(/\.driveway-staging-[0-9a-f]+/g, '.driveway-staging-*')).sort();
}

/** A snapshot without node ids, to be read. */
function plain(lines: string[]): string[] {
  return lines.map((l) => l.replace(/ (\w+:)?0{8}-0{4}-4000-8000-\d{12}/g, '')).sort();
}

/** What a failing step leaves: the transfer refused or done, the tree as before or after it, plus what stays. */
interface Outcome {
  settles: 'rejects' | 'resolves';
  tree: 'before' | 'after';
  extra?: string[];
}
const UNDONE: Outcome = { settles: 'rejects', tree: 'before' };
const doneLeaving = (...extra: string[]): Outcome => ({ settles: 'resolves', tree: 'after', extra });
const refusedLeaving = (...extra: string[]): Outcome => ({ settles: 'rejects', tree: 'after', extra });

interface Case {
  name: string;
  options?: MemoryStoreOptions;
  seed: Array<['alice' | 'group', Record<string, string | null>]>;
  verb: 'move' | 'copy';
  from: string;
  to: string;
  shallow?: boolean;
  /** Where everything is after the transfer succeeded (snapshot lines without ids). */
  after: string[];
  /** The transfer's store writes in order, and what a failure of each leaves. */
  steps: Array<[WriteMethod, Outcome]>;
}

function run(c: Case, w: World): Promise<unknown> {
  return (async () => {
    const source = await w.tree.stat(w.alice, c.from as DavPath);
    if (c.verb === 'move') return w.tree.move(w.alice, source, c.to as DavPath, true);
    return w.tree.copy(w.alice, source, c.to as DavPath, true, c.shallow ? { shallow: true } : {});
  })();
}

const cases: Case[] = [
  {
    name: 'MOVE of a folder onto a folder in the same folder',
    seed: [['alice', { 'home/docs/a/x.txt': 'x', 'home/docs/b/y.txt': 'y' }]],
    verb: 'move',
    from: '/home/docs/a',
    to: '/home/docs/b',
    after: ['alice home/docs folder', 'alice home/docs/b folder', 'alice home/docs/b/x.txt file r1: x', 'alice trash/b folder (deleted from home/docs as b)', 'alice trash/b/y.txt file r1: y'],
    // The source to a passing name, the target to the trash, the source to the target's name.
    steps: [
      ['rename', UNDONE],
      ['remove', UNDONE],
      ['rename', UNDONE],
    ],
  },
  {
    name: 'MOVE of a folder onto a file in another folder',
    seed: [['alice', { 'home/src/a/x.txt': 'x', 'home/dst/b': 'old' }]],
    verb: 'move',
    from: '/home/src/a',
    to: '/home/dst/b',
    after: ['alice home/dst folder', 'alice home/dst/b folder', 'alice home/dst/b/x.txt file r1: x', 'alice home/src folder', 'alice trash/b file r1: old (deleted from home/dst as b)'],
    // Into the target folder under its own name, the target to the trash, the target's name.
    steps: [
      ['moveInto', UNDONE],
      ['remove', UNDONE],
      ['rename', UNDONE],
    ],
  },
  {
    name: 'MOVE onto a folder in a folder that holds the source name too',
    seed: [['alice', { 'home/src/a/x.txt': 'x', 'home/dst/b/y.txt': 'y', 'home/dst/a': 'other a' }]],
    verb: 'move',
    from: '/home/src/a',
    to: '/home/dst/b',
    after: [
      'alice home/dst folder',
      'alice home/dst/a file r1: other a',
      'alice home/dst/b folder',
      'alice home/dst/b/x.txt file r1: x',
      'alice home/src folder',
      'alice trash/b folder (deleted from home/dst as b)',
      'alice trash/b/y.txt file r1: y',
    ],
    steps: [
      ['rename', UNDONE],
      ['moveInto', UNDONE],
      ['remove', UNDONE],
      ['rename', UNDONE],
    ],
  },
  {
    name: 'MOVE to a free name in another folder',
    seed: [['alice', { 'home/src/a/x.txt': 'x', 'home/dst': null }]],
    verb: 'move',
    from: '/home/src/a',
    to: '/home/dst/c',
    after: ['alice home/dst folder', 'alice home/dst/c folder', 'alice home/dst/c/x.txt file r1: x', 'alice home/src folder'],
    steps: [
      ['moveInto', UNDONE],
      ['rename', UNDONE],
    ],
  },
  {
    name: 'MOVE to a free name in another folder that holds the source name',
    seed: [['alice', { 'home/src/a/x.txt': 'x', 'home/dst/a': 'other a' }]],
    verb: 'move',
    from: '/home/src/a',
    to: '/home/dst/c',
    after: ['alice home/dst folder', 'alice home/dst/a file r1: other a', 'alice home/dst/c folder', 'alice home/dst/c/x.txt file r1: x', 'alice home/src folder'],
    steps: [
      ['rename', UNDONE],
      ['moveInto', UNDONE],
    ],
  },
  {
    name: 'MOVE to a free name when each folder holds the other name',
    seed: [['alice', { 'home/src/a/x.txt': 'x', 'home/src/c': 'other c', 'home/dst/a': 'other a' }]],
    verb: 'move',
    from: '/home/src/a',
    to: '/home/dst/c',
    after: ['alice home/dst folder', 'alice home/dst/a file r1: other a', 'alice home/dst/c folder', 'alice home/dst/c/x.txt file r1: x', 'alice home/src folder', 'alice home/src/c file r1: other c'],
    // A passing name, the move, the final name.
    steps: [
      ['rename', UNDONE],
      ['moveInto', UNDONE],
      ['rename', UNDONE],
    ],
  },
  {
    name: "MOVE of a folder into a group's drive onto a folder (another owner)",
    seed: [
      ['alice', { 'home/a/x.txt': 'x' }],
      ['group', { 'home/b/y.txt': 'y' }],
    ],
    verb: 'move',
    from: '/home/a',
    to: '/groups/Team/home/b',
    after: ['group home/b folder', 'group home/b/x.txt file r1: x', 'group trash/b folder (deleted from home as b)', 'group trash/b/y.txt file r1: y'],
    steps: [
      ['moveInto', UNDONE],
      ['remove', UNDONE],
      ['rename', UNDONE],
    ],
  },
  {
    name: "MOVE of a folder out of a group's drive onto a file of the user's own",
    seed: [
      ['alice', { 'home/dst/b': 'old' }],
      ['group', { 'home/a/x.txt': 'x', 'home/dst/a': 'other a' }],
    ],
    verb: 'move',
    from: '/groups/Team/home/a',
    to: '/home/dst/b',
    after: ['alice home/dst folder', 'alice home/dst/b folder', 'alice home/dst/b/x.txt file r1: x', 'alice trash/b file r1: old (deleted from home/dst as b)', 'group home/dst folder', 'group home/dst/a file r1: other a'],
    steps: [
      ['moveInto', UNDONE],
      ['remove', UNDONE],
      ['rename', UNDONE],
    ],
  },
  {
    name: 'MOVE of a file onto a file (a new revision of the target, one store call)',
    seed: [['alice', { 'home/src/new.txt': 'new', 'home/dst/doc.txt': 'old' }]],
    verb: 'move',
    from: '/home/src/new.txt',
    to: '/home/dst/doc.txt',
    after: ['alice home/dst folder', 'alice home/dst/doc.txt file r1,2: new', 'alice home/src folder'],
    steps: [['reviseFrom', UNDONE]],
  },
  {
    name: 'MOVE of a file onto a file over a store without the revision route',
    options: { lacks: ['reviseFrom'] },
    seed: [['alice', { 'home/src/new.txt': 'new', 'home/dst/doc.txt': 'old' }]],
    verb: 'move',
    from: '/home/src/new.txt',
    to: '/home/dst/doc.txt',
    after: ['alice home/dst folder', 'alice home/dst/doc.txt file r1,2: new', 'alice home/src folder'],
    // The route asked for (refused), the bytes uploaded as a revision, the source to the trash and out of it.
    steps: [
      ['reviseFrom', UNDONE],
      ['upload', UNDONE],
      ['remove', refusedLeaving('alice home/src/new.txt file r1: new')],
      ['remove', doneLeaving('alice trash/new.txt file r1: new (deleted from home/src as new.txt)')],
    ],
  },
  {
    name: 'COPY of a folder onto a folder in another folder',
    seed: [['alice', { 'home/src/a/x.txt': 'x', 'home/dst/b/y.txt': 'y' }]],
    verb: 'copy',
    from: '/home/src/a',
    to: '/home/dst/b',
    after: [
      'alice home/dst folder',
      'alice home/dst/b folder',
      'alice home/dst/b/x.txt file r1: x',
      'alice home/src folder',
      'alice home/src/a folder',
      'alice home/src/a/x.txt file r1: x',
      'alice trash/b folder (deleted from home/dst as b)',
      'alice trash/b/y.txt file r1: y',
    ],
    // A staging folder, the copy into it, its name, the target to the trash, the copy out, the staging folder purged.
    steps: [
      ['createFolder', UNDONE],
      ['copyInto', UNDONE],
      ['rename', UNDONE],
      ['remove', UNDONE],
      ['moveInto', UNDONE],
      ['remove', doneLeaving('alice home/dst/.driveway-staging-* folder')],
      ['remove', doneLeaving('alice trash/.driveway-staging-* folder (deleted from home/dst as .driveway-staging-*)')],
    ],
  },
  {
    name: 'COPY Depth 0 of a folder onto a folder (an empty collection)',
    seed: [['alice', { 'home/src/a/x.txt': 'x', 'home/dst/b/y.txt': 'y' }]],
    verb: 'copy',
    from: '/home/src/a',
    to: '/home/dst/b',
    shallow: true,
    after: ['alice home/dst folder', 'alice home/dst/b folder', 'alice home/src folder', 'alice home/src/a folder', 'alice home/src/a/x.txt file r1: x', 'alice trash/b folder (deleted from home/dst as b)', 'alice trash/b/y.txt file r1: y'],
    steps: [
      ['createFolder', UNDONE],
      ['createFolder', UNDONE],
      ['remove', UNDONE],
      ['moveInto', UNDONE],
      ['remove', doneLeaving('alice home/dst/.driveway-staging-* folder')],
      ['remove', doneLeaving('alice trash/.driveway-staging-* folder (deleted from home/dst as .driveway-staging-*)')],
    ],
  },
  {
    name: 'COPY of a file to a new name in its folder',
    seed: [['alice', { 'home/src/a.txt': 'a' }]],
    verb: 'copy',
    from: '/home/src/a.txt',
    to: '/home/src/b.txt',
    after: ['alice home/src folder', 'alice home/src/a.txt file r1: a', 'alice home/src/b.txt file r1: a'],
    steps: [
      ['createFolder', UNDONE],
      ['copyInto', UNDONE],
      ['rename', UNDONE],
      ['moveInto', UNDONE],
      ['remove', doneLeaving('alice home/src/.driveway-staging-* folder')],
      ['remove', doneLeaving('alice trash/.driveway-staging-* folder (deleted from home/src as .driveway-staging-*)')],
    ],
  },
  {
    name: "COPY of a folder into a group's drive onto a file (another owner)",
    seed: [
      ['alice', { 'home/a/x.txt': 'x' }],
      ['group', { 'home/b': 'old' }],
    ],
    verb: 'copy',
    from: '/home/a',
    to: '/groups/Team/home/b',
    after: ['alice home/a folder', 'alice home/a/x.txt file r1: x', 'group home/b folder', 'group home/b/x.txt file r1: x', 'group trash/b file r1: old (deleted from home as b)'],
    steps: [
      ['createFolder', UNDONE],
      ['copyInto', UNDONE],
      ['rename', UNDONE],
      ['remove', UNDONE],
      ['moveInto', UNDONE],
      ['remove', doneLeaving('group home/.driveway-staging-* folder')],
      ['remove', doneLeaving('group trash/.driveway-staging-* folder (deleted from home as .driveway-staging-*)')],
    ],
  },
  {
    name: 'COPY of a file onto a file (a new revision of the target, one store call)',
    seed: [['alice', { 'home/src/new.txt': 'new', 'home/dst/doc.txt': 'old' }]],
    verb: 'copy',
    from: '/home/src/new.txt',
    to: '/home/dst/doc.txt',
    after: ['alice home/dst folder', 'alice home/dst/doc.txt file r1,2: new', 'alice home/src folder', 'alice home/src/new.txt file r1: new'],
    steps: [['reviseFrom', UNDONE]],
  },
  {
    name: 'COPY of a file onto a file over a store without the revision route',
    options: { lacks: ['reviseFrom'] },
    seed: [['alice', { 'home/src/new.txt': 'new', 'home/dst/doc.txt': 'old' }]],
    verb: 'copy',
    from: '/home/src/new.txt',
    to: '/home/dst/doc.txt',
    after: ['alice home/dst folder', 'alice home/dst/doc.txt file r1,2: new', 'alice home/src folder', 'alice home/src/new.txt file r1: new'],
    steps: [
      ['reviseFrom', UNDONE],
      ['upload', UNDONE],
    ],
  },
];

/** The transfer's store writes, and the tree after it. */
async function dryRun(c: Case): Promise<{ writes: WriteCall[]; after: string[] }> {
  const w = await world(c.options ?? {}, c.seed);
  const mark = w.store.writes.length;
  await run(c, w);
  return { writes: w.store.writes.slice(mark), after: snapshot(w) };
}

/** The ids the bridge finds at a path (undefined: nothing there). */
async function idAt(w: World, path: string): Promise<string | undefined> {
  return (await w.tree.tryStat(w.alice, path as DavPath))?.entry.id;
}

describe('StoreTree transfers: a failure in any step', () => {
  for (const c of cases) {
    it(`${c.name}: is undone, whichever store call fails`, async () => {
      const dry = await dryRun(c);
      expect(plain(dry.after)).toEqual([...c.after].sort());
      expect(dry.writes.map((s) => s.method)).toEqual(c.steps.map(([method]) => method));

      for (const [index, step] of dry.writes.entries()) {
        const outcome = (c.steps[index] as [WriteMethod, Outcome])[1];
        const w = await world(c.options ?? {}, c.seed);
        const before = snapshot(w);
        const fromId = await idAt(w, c.from);
        const toId = await idAt(w, c.to);
        w.store.failOn(step.method, step.nth);
        const settled = await run(c, w).then(
          () => 'resolves',
          (err: unknown) => {
            expect(err).toMatchObject({ kind: 'unavailable' });
            return 'rejects';
          },
        );
        const label = `${step.method} (step ${index + 1}) failing`;
        expect(settled, label).toBe(outcome.settles);
        const now = snapshot(w);
        if (outcome.tree === 'before' && !outcome.extra?.length) {
          expect(now, label).toEqual(before);
          // The bridge sees it so too: nothing stale in its listings.
          expect(await idAt(w, c.from), label).toBe(fromId);
          expect(await idAt(w, c.to), label).toBe(toId);
        } else {
          expect(plain(now), label).toEqual([...plain(outcome.tree === 'before' ? before : dry.after), ...(outcome.extra ?? [])].sort());
        }
      }
    });
  }
});
