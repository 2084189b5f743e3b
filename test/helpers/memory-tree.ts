/**
 * The bridge core (StoreTree) over the in-memory store, for unit tests: a user as the bridge
 * holds one (a session, renewed after a 401) and a tree with its own listings cache.
 */
import type { StoreSession } from '../../src/store-client/contract.js';
import { MetadataCache } from '../../src/bridge/metadata-cache.js';
import type { BridgeUser } from '../../src/bridge/sessions.js';
import { StoreTree } from '../../src/bridge/store-tree.js';
import type { MemoryStore, MemoryUser } from './memory-store.js';

export function bridgeUserOf(store: MemoryStore, user: MemoryUser): BridgeUser {
  let session: Promise<StoreSession> | undefined;
  return {
    name: user.email,
    userId: user.uuid,
    session: () => (session ??= store.client.login(user.email, user.password)),
    invalidate: () => {
      session = undefined;
    },
  };
}

/** A tree over `store`; `close` stops its cache's timer. */
export function memoryTree(store: MemoryStore): { tree: StoreTree; cache: MetadataCache; close(): void } {
  const cache = new MetadataCache({ ttlMs: 60_000, maxEntries: 1000 });
  return { tree: new StoreTree({ client: store.client, cache }), cache, close: () => cache.close() };
}
