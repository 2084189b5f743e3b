/**
 * Unlinks blob files whose last reference a committed transaction released (a purge from trash,
 * a deleted user or group). Call only after the commit: before it, a rollback would leave rows
 * pointing at nothing. BlobStore.remove keeps a blob that an upload or copy of the same bytes
 * referenced again meanwhile; a file that cannot be removed now is swept at the next start
 * (BlobStore.sweepOrphans).
 */
import type { StoreContext } from '../context.js';

export async function removeBlobFiles(ctx: StoreContext, hashes: readonly string[]): Promise<void> {
  for (const hash of hashes) {
    try {
      await ctx.blobs.remove(hash);
    } catch (err) {
      ctx.log.warn({ err, hash }, 'could not remove an unreferenced blob; it is swept at the next start');
    }
  }
}
