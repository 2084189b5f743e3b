/**
 * The storage handle of a running embedded store, for what lives beside it in the same database
 * (the bridge's locks and dead properties under `npm start`): the store's own `ctx.storage`, so
 * the bridge's transactions queue with the store's on one connection (SQLite) or pool (PostgreSQL).
 */
import type { StoreContext } from '../context.js';
import type { Storage } from './sql.js';

export function storeStorageOf(ctx: StoreContext): Storage {
  return ctx.storage;
}
