/**
 * The storage handle of a running embedded store, for what lives beside it in the same database
 * (the bridge's locks and dead properties under `npm start`). The one place that knows how to get
 * it: the store's own `ctx.storage` once the store runs on the storage layer; until then a
 * SqliteStorage over the store's better-sqlite3 connection, made once per store. Such a handle
 * shares the connection with the store's synchronous statements, so whoever uses it must not
 * roll back a transaction for an expected refusal (a store write made between two of its awaits
 * would go with it): the bridge's repositories decide inside and refuse after committing.
 */
import type { StoreContext } from '../context.js';
import { SqliteStorage } from './dialects/sqlite.js';
import type { Storage } from './sql.js';

const made = new WeakMap<StoreContext, Storage>();

export function storeStorageOf(ctx: StoreContext): Storage {
  const own = (ctx as StoreContext & { storage?: Storage }).storage;
  if (own !== undefined) return own;
  let storage = made.get(ctx);
  if (storage === undefined) {
    storage = new SqliteStorage(ctx.db);
    made.set(ctx, storage);
  }
  return storage;
}
