/**
 * Reads what a client run left in the store, through the store client only (never the bridge),
 * so the client suites assert stored state and not just what the client printed.
 */
import { createHash } from 'node:crypto';
import { nodeId, type NodeEntry } from '../../src/store-client/index.js';
import type { BridgeFixture } from '../helpers/start-bridge.js';
import type { TestUser } from '../helpers/store-fixture.js';

/** What the readers need of a fixture: its store client (an embedded fixture, or a client of several instances). */
export type StoreReader = Pick<BridgeFixture, 'client'>;

/** The entries of the folder at `segments` below the user's home ([] = home itself). */
export async function storeList(f: StoreReader, user: TestUser, segments: readonly string[]): Promise<NodeEntry[]> {
  let folder = nodeId('home');
  for (const name of segments) {
    const entry = (await f.client.listFolder(user.session, folder)).find((e) => e.name === name);
    if (!entry || entry.kind !== 'folder') throw new Error(`no folder ${segments.join('/')} in the store (missing at ${name})`);
    folder = entry.id;
  }
  return f.client.listFolder(user.session, folder);
}

/** The entry at `segments` below home, or undefined. */
export async function storeEntry(f: StoreReader, user: TestUser, segments: readonly string[]): Promise<NodeEntry | undefined> {
  const name = segments[segments.length - 1];
  if (name === undefined) throw new Error('storeEntry needs at least one segment');
  const entries = await storeList(f, user, segments.slice(0, -1)).catch(() => []);
  return entries.find((e) => e.name === name);
}

/** The bytes of a stored file (small files only). */
export async function storeRead(f: StoreReader, user: TestUser, entry: NodeEntry): Promise<Buffer> {
  const download = await f.client.download(user.session, entry.id, entry.name);
  const chunks: Buffer[] = [];
  for await (const chunk of download.body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Calls `visit` with the relative path of every file below the folder at `segments`, walking the store tree. */
async function walkStoreFiles(f: StoreReader, user: TestUser, segments: readonly string[], visit: (relative: string, entry: NodeEntry) => Promise<void> | void): Promise<void> {
  const walk = async (folderSegments: readonly string[], prefix: string): Promise<void> => {
    for (const entry of await storeList(f, user, folderSegments)) {
      const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.kind === 'folder') await walk([...folderSegments, entry.name], relative);
      else await visit(relative, entry);
    }
  };
  await walk(segments, '');
}

/** `relative path -> sha256` of every file below the folder at `segments`, walking the store tree. */
export async function storeTreeSha256(f: StoreReader, user: TestUser, segments: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  await walkStoreFiles(f, user, segments, async (relative, entry) => {
    const hash = createHash('sha256');
    const download = await f.client.download(user.session, entry.id, entry.name);
    for await (const chunk of download.body) hash.update(chunk as Buffer);
    out.set(relative, hash.digest('hex'));
  });
  return out;
}

/** `relative path (NFC) -> "<uuid> <revision>"` of every file below the folder at `segments`: what a run uploaded changes exactly those. */
export async function storeTreeRevisions(f: StoreReader, user: TestUser, segments: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  await walkStoreFiles(f, user, segments, (relative, entry) => {
    out.set(relative.normalize('NFC'), `${entry.id} ${entry.revision}`);
  });
  return out;
}
