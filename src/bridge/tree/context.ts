/**
 * What every room of the tree shares: the store client, the listings cache, the log, and the one
 * way to call the store as a user (withSession). The rooms (resolver, grants, files, trash,
 * revisions, transfers) each take this and the rooms below them; none touches HTTP.
 */
import type { Logger } from '../../common/logger.js';
import { StoreError, type StoreClient, type StoreSession } from '../../store-client/contract.js';
import type { MetadataCache } from '../metadata-cache.js';
import type { BridgeUser } from '../sessions.js';

export interface TreeContext {
  readonly client: StoreClient;
  readonly cache: MetadataCache;
  readonly log?: Logger | undefined;
}

/**
 * Runs a store call with the user's session; after a 401 it logs in again once (the token may
 * have been revoked or the store restarted with another secret).
 */
export async function withSession<T>(user: BridgeUser, call: (session: StoreSession) => Promise<T>): Promise<T> {
  const session = await user.session();
  try {
    return await call(session);
  } catch (err) {
    if (!(err instanceof StoreError) || err.kind !== 'unauthenticated') throw err;
    user.invalidate(session);
    return call(await user.session());
  }
}
