/**
 * Folder listings per (user, folder) in a bounded lru-cache with a TTL. Each folder also has a
 * generation number: any write the bridge makes into a folder bumps it, so every user's cached
 * listing of that folder is stale at once (read-after-write for everyone behind this bridge),
 * while the writer may patch its own copy in place instead of re-listing. Writes made by others
 * directly on the store show after the TTL, or at once when the store announces them (a change
 * feed over PostgreSQL: forget() per folder, forgetAll() when anything may have changed). No
 * store calls here.
 *
 * Tree versions (docs/extensions.md "Tree versions and sizes"): a folder entry carries the
 * version and size of everything below it, so a change in a folder outdates those entries in the
 * listing of every folder above it, up to the root and `/groups/` (the parents the cache learnt
 * from the listings it was given). Those listings are marked tree-stale, not dropped: a path
 * walk (every write's) still uses them, since ids and names are unchanged; what shows a folder's
 * ETag or size (PROPFIND) asks for a tree-fresh listing and lists again.
 */
import { LRUCache } from 'lru-cache';
import type { NodeEntry } from '../store-client/contract.js';

export interface Listing {
  readonly entries: readonly NodeEntry[];
  /** NFC name -> entry (after duplicate names were made unique). */
  readonly byName: ReadonlyMap<string, NodeEntry>;
  /** How many times upsert() patched this listing object (it changes in place). */
  readonly changes: number;
}

interface Cached extends Listing {
  readonly entries: NodeEntry[];
  readonly byName: Map<string, NodeEntry>;
  readonly indexById: Map<string, number>;
  generation: number;
  /** The folder's tree generation when it was fetched: below it, older means its folder entries' tree versions may be outdated. */
  treeGeneration: number;
  changes: number;
  /** listingBytes() of it, kept up to date by upsert(). */
  bytes: number;
}

export interface MetadataCacheOptions {
  ttlMs: number;
  /** Listings kept at most. */
  maxEntries: number;
  /** What the kept listings may weigh together, as listingBytes() estimates it; default 32 MiB. */
  maxBytes?: number;
  /**
   * Called when a listing leaves the cache (replaced, expired, evicted, cleared) or is patched
   * in place: whatever was derived from it (PROPFIND bodies) is stale.
   */
  onStale?: (listing: Listing) => void;
  /** Time source of the TTL in ms (tests); default `performance.now()`. */
  now?: () => number;
  /** The key of a listed folder entry's own listing, as the caller keys folders (by default its id). */
  keyOf?: (userId: string, id: string) => FolderKey;
}

const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;

/**
 * What a cached listing holds in memory, estimated: measured with node's heap statistics at
 * ~760 bytes per entry of a 10,000-entry folder with 40-character names (the entry from the
 * store client, its id and name strings, and its slots in the two maps).
 */
export function listingBytes(listing: Pick<Listing, 'entries'>): number {
  let bytes = LISTING_BYTES;
  for (const entry of listing.entries) bytes += entryBytes(entry);
  return bytes;
}

const LISTING_BYTES = 1024;

function entryBytes(entry: NodeEntry): number {
  return 700 + 2 * entry.name.length;
}

/** `folderKey` names a folder the same way for every user (bare top-level ids are per user). */
export type FolderKey = string;

export class MetadataCache {
  private readonly listings: LRUCache<string, Cached>;
  /** Listings load() answered from the cache, and those it had to fetch (or join a fetch of): for /metrics. */
  hits = 0;
  misses = 0;
  private readonly generations = new Map<FolderKey, number>();
  /** Per folder: moved when something below one of its folder entries changed (their tree versions). */
  private readonly treeGenerations = new Map<FolderKey, number>();
  /** The folders whose listings hold an entry for a folder (several for a group's top-level folder: each member's `/groups/`). */
  private readonly parents = new Map<FolderKey, Set<FolderKey>>();
  private readonly keyOf: (userId: string, id: string) => FolderKey;
  /** Added to every folder's generation: forgetAll() outdates every listing and fetch at once. */
  private epoch = 0;
  /** Users who have (or had) a listing of a folder cached: the ones a patch must reach. */
  private readonly holders = new Map<FolderKey, Set<string>>();
  /** Fetches under way, by user, folder and the generation they started in. */
  private readonly inflight = new Map<string, Promise<Listing>>();

  private readonly onStale: ((listing: Listing) => void) | undefined;
  /** The listing upsert() takes out and puts back (not a listing leaving the cache). */
  private reweighing: Cached | undefined;
  private readonly purgeTimer: NodeJS.Timeout;

  constructor(options: MetadataCacheOptions) {
    this.onStale = options.onStale;
    this.keyOf = options.keyOf ?? ((_userId, id) => id);
    this.listings = new LRUCache({
      max: options.maxEntries,
      ttl: Math.max(1, options.ttlMs),
      // Bounded in bytes: a listing of 10,000 entries weighs ~7.5 MiB, one of 3 a few KiB. A
      // listing heavier than the whole budget is not kept (each PROPFIND then lists again).
      maxSize: options.maxBytes ?? DEFAULT_MAX_BYTES,
      sizeCalculation: (listing: Cached) => listing.bytes,
      ttlAutopurge: false,
      dispose: (listing) => {
        if (listing !== this.reweighing) this.onStale?.(listing);
      },
      // A given clock is read on every check (no 1 ms reuse): a test moves it by hand.
      ...(options.now ? { perf: { now: options.now }, ttlResolution: 0 } : {}),
    });
    // Expired listings are dropped once per TTL rather than on their next lookup, so a large
    // folder nobody lists again does not hold its memory (one timer, not one per entry).
    this.purgeTimer = setInterval(() => this.listings.purgeStale(), Math.max(1000, options.ttlMs));
    this.purgeTimer.unref();
  }

  /** Stops the purge timer and drops every listing. */
  close(): void {
    clearInterval(this.purgeTimer);
    this.clear();
  }

  private generation(folder: FolderKey): number {
    return this.epoch + (this.generations.get(folder) ?? 0);
  }

  private treeGeneration(folder: FolderKey): number {
    return this.epoch + (this.treeGenerations.get(folder) ?? 0);
  }

  /**
   * The listing when cached, fresh and not outdated by a write; undefined otherwise. `anyTree`:
   * one whose folder entries' tree versions a change below outdated will do (a path walk).
   */
  listing(userId: string, folder: FolderKey, anyTree = false): Listing | undefined {
    const cached = this.listings.get(`${userId}\0${folder}`);
    if (!cached || cached.generation !== this.generation(folder)) return undefined;
    if (!anyTree && cached.treeGeneration !== this.treeGeneration(folder)) return undefined;
    return cached;
  }

  /**
   * The listing of `folder`: cached, or fetched with `fetch` and remembered, one fetch shared by
   * concurrent callers. A fetch that started before the latest write into the folder is not
   * shared: its answer may lack what that write did.
   */
  load(userId: string, folder: FolderKey, fetch: () => Promise<readonly NodeEntry[]>, anyTree = false): Promise<Listing> {
    const hit = this.listing(userId, folder, anyTree);
    if (hit) {
      this.hits += 1;
      return Promise.resolve(hit);
    }
    this.misses += 1;
    const generation = this.generation(folder);
    const treeGeneration = this.treeGeneration(folder);
    const flightKey = `${userId}\0${folder}\0${generation}\0${treeGeneration}`;
    const pending = this.inflight.get(flightKey);
    if (pending) return pending;
    const run = fetch()
      .then((entries) => this.remember(userId, folder, entries, generation, treeGeneration))
      .finally(() => this.inflight.delete(flightKey));
    this.inflight.set(flightKey, run);
    return run;
  }

  /**
   * The listing of `folder` fetched anew whatever is cached, and remembered as load()'s would be:
   * a name the cached listing lacks, asked once more before a walk calls the path unmapped.
   */
  async reload(userId: string, folder: FolderKey, fetch: () => Promise<readonly NodeEntry[]>): Promise<Listing> {
    this.misses += 1;
    const generation = this.generation(folder);
    const treeGeneration = this.treeGeneration(folder);
    return this.remember(userId, folder, await fetch(), generation, treeGeneration);
  }

  /** The generation to pass to remember() for a listing fetched from now on. */
  currentGeneration(folder: FolderKey): number {
    return this.generation(folder);
  }

  /**
   * Stores a listing fetched while `generation` was current. A listing that a write outdated
   * while it was being fetched is handed back to its caller but does not replace a current
   * (patched) one in the cache.
   */
  remember(userId: string, folder: FolderKey, entries: readonly NodeEntry[], generation = this.generation(folder), treeGeneration = this.treeGeneration(folder)): Listing {
    const unique = uniqueNames(entries);
    const listing: Cached = {
      entries: unique,
      byName: new Map(unique.map((e) => [e.name.normalize('NFC'), e])),
      indexById: new Map(unique.map((e, i) => [e.id, i])),
      generation,
      treeGeneration,
      changes: 0,
      bytes: 0,
    };
    listing.bytes = listingBytes(listing);
    this.learnParents(userId, folder, unique);
    const key = `${userId}\0${folder}`;
    const existing = this.listings.get(key);
    const current = this.generation(folder);
    if (generation !== current && existing?.generation === current) return listing;
    if (existing?.generation === generation && existing.treeGeneration > treeGeneration) return listing;
    this.listings.set(key, listing);
    let users = this.holders.get(folder);
    if (!users) {
      if (this.holders.size > 100_000) this.holders.clear();
      users = new Set();
      this.holders.set(folder, users);
    }
    users.add(userId);
    return listing;
  }

  /** Remembers `folder` as a parent of each folder among `entries`. */
  private learnParents(userId: string, folder: FolderKey, entries: readonly NodeEntry[]): void {
    for (const entry of entries) {
      if (entry.kind !== 'folder') continue;
      this.addParent(this.keyOf(userId, entry.id), folder);
    }
  }

  /** Declares `parent`'s listing outdated by a change below `child` although it lists no entry of it (a made-up collection showing a derived version). */
  addParent(child: FolderKey, parent: FolderKey): void {
    let parents = this.parents.get(child);
    if (!parents) {
      if (this.parents.size > 100_000) this.parents.clear();
      parents = new Set();
      this.parents.set(child, parents);
    }
    parents.add(parent);
  }

  /**
   * Something below `folder` changed: the listings of every folder above it (as far as the cache
   * knows them) hold entries whose tree versions are outdated. `folder`'s own listing is not
   * touched (forget() or upsert() decide about it).
   */
  forgetTreeAbove(folder: FolderKey): void {
    const seen = new Set<FolderKey>([folder]);
    const queue = [folder];
    while (queue.length > 0) {
      for (const parent of this.parents.get(queue.pop() as FolderKey) ?? []) {
        if (seen.has(parent)) continue;
        seen.add(parent);
        this.treeGenerations.set(parent, (this.treeGenerations.get(parent) ?? 0) + 1);
        queue.push(parent);
      }
    }
    if (this.treeGenerations.size > 100_000) this.forgetAll();
  }

  /** The tree versions of `folder`'s entries moved (a change below one of them): its listing is tree-stale, and those above it. */
  forgetTree(folder: FolderKey): void {
    this.treeGenerations.set(folder, (this.treeGenerations.get(folder) ?? 0) + 1);
    this.forgetTreeAbove(folder);
  }

  /** After a write into `folder` whose outcome is unknown: every user's listing of it is stale, and the tree versions above it. */
  forget(folder: FolderKey): void {
    this.generations.set(folder, (this.generations.get(folder) ?? 0) + 1);
    this.forgetTreeAbove(folder);
    if (this.generations.size > 100_000) this.forgetAll();
  }

  /**
   * Every listing is stale, and so is every fetch under way (its answer may predate the change):
   * the epoch moves past every folder's generation, which keeps generations increasing.
   */
  forgetAll(): void {
    let highest = 0;
    for (const generation of this.generations.values()) highest = Math.max(highest, generation);
    for (const generation of this.treeGenerations.values()) highest = Math.max(highest, generation);
    this.epoch += highest + 1;
    this.generations.clear();
    this.treeGenerations.clear();
    this.listings.clear();
    this.holders.clear();
  }

  /**
   * After a write into `folder` whose outcome is known exactly (the store returned the uploaded
   * file's id and size): `entry` is put in place of the entry with its id, or added, in every
   * user's current listing of the folder, so read-after-write holds for everyone and concurrent
   * writers do not re-list each other. The listing is patched in place, O(1) per listing, so a
   * folder filling up with thousands of uploads stays linear; a caller still walking a listing
   * it was handed may see the new entry too, which is as true as the listing it had.
   */
  upsert(folder: FolderKey, entry: NodeEntry): void {
    const before = this.generation(folder);
    this.forget(folder);
    if (entry.kind === 'folder') for (const userId of this.holders.get(folder) ?? []) this.learnParents(userId, folder, [entry]);
    const generation = this.generation(folder);
    const name = entry.name.normalize('NFC');
    for (const userId of this.holders.get(folder) ?? []) {
      const key = `${userId}\0${folder}`;
      const cached = this.listings.get(key);
      if (!cached || cached.generation !== before) continue;
      const index = cached.indexById.get(entry.id);
      const previous = index === undefined ? undefined : cached.entries[index];
      const holder = cached.byName.get(name);
      if ((holder && holder.id !== entry.id) || (previous && previous.name.normalize('NFC') !== name)) {
        // A name shared with another entry, or a renamed one: let uniqueNames decide again.
        this.remember(userId, folder, [...cached.entries.filter((e) => e.id !== entry.id), entry]);
        continue;
      }
      if (index === undefined) {
        cached.indexById.set(entry.id, cached.entries.length);
        cached.entries.push(entry);
      } else {
        cached.bytes -= entryBytes(cached.entries[index] as NodeEntry);
        cached.entries[index] = entry;
      }
      cached.bytes += entryBytes(entry);
      cached.byName.set(name, entry);
      cached.generation = generation;
      cached.changes += 1;
      this.onStale?.(cached);
      // lru-cache weighs a value only when it is set as a different object: take the listing
      // out and put it back to weigh it anew, with the TTL it had left.
      const ttl = Math.max(1, this.listings.getRemainingTTL(key));
      this.reweighing = cached;
      this.listings.delete(key);
      this.reweighing = undefined;
      this.listings.set(key, cached, { ttl });
    }
  }

  clear(): void {
    this.listings.clear();
    this.generations.clear();
    this.treeGenerations.clear();
    this.parents.clear();
    this.holders.clear();
  }
}

/**
 * A server may return one name twice in a folder (ours never does); the later ones, ordered by
 * id so the choice is stable, get the id's first 8 characters appended before the extension:
 * `a.txt`, `a (1a2b3c4d).txt`. Names are compared in NFC. Order is kept.
 */
export function uniqueNames(entries: readonly NodeEntry[]): NodeEntry[] {
  const groups = new Map<string, NodeEntry[]>();
  for (const entry of entries) {
    const key = entry.name.normalize('NFC');
    const group = groups.get(key);
    if (group) group.push(entry);
    else groups.set(key, [entry]);
  }
  if (groups.size === entries.length) return [...entries];
  const renamed = new Map<NodeEntry, NodeEntry>();
  for (const [name, group] of groups) {
    if (group.length < 2) continue;
    [...group]
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(1)
      .forEach((entry) => {
        const dot = name.lastIndexOf('.');
        const stem = dot > 0 ? name.slice(0, dot) : name;
        const ext = dot > 0 ? name.slice(dot) : '';
        renamed.set(entry, { ...entry, name: `${stem} (${entry.id.replace(/[^0-9a-zA-Z]/g, '').slice(0, 8)})${ext}` });
      });
  }
  return entries.map((entry) => renamed.get(entry) ?? entry);
}
