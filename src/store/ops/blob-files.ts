/**
 * Removes the blobs whose last reference a committed transaction released (a purge from trash,
 * a deleted user or group) from the blob backend. Call only after the commit: before it, a
 * rollback would leave rows pointing at nothing. BlobBackend.remove waits until that commit is
 * on disk before the bytes go, and keeps a blob that an upload or copy of the same bytes
 * referenced again meanwhile; one that cannot be removed now is collected later
 * (BlobBackend.sweepAtStart, collectGarbage).
 */
import type { StoreContext } from '../context.js';

export async function removeBlobFiles(ctx: Pick<StoreContext, 'blobs' | 'log'>, hashes: readonly string[]): Promise<void> {
  for (const hash of hashes) {
    try {
      await ctx.blobs.remove(hash);
    } catch (err) {
      ctx.log.warn({ err, hash }, 'could not remove an unreferenced blob; the garbage collector takes it later');
    }
  }
}

/**
 * One run of the blob collector while the store serves: expired upload intents cleaned up, then
 * blobs unreferenced for longer than `store.blobs.gcGraceSec` removed (each re-checked by the
 * backend just before). Never throws: a failed run is logged and the next one tries again.
 */
export async function collectBlobGarbage(ctx: StoreContext): Promise<void> {
  try {
    const report = await ctx.blobs.collectGarbage(ctx.config.store.blobs.gcGraceSec * 1000);
    if (report.removed > 0 || report.expiredUploads > 0) ctx.log.info({ ...report, backend: ctx.blobs.kind }, 'blob garbage collected');
    else ctx.log.debug({ ...report, backend: ctx.blobs.kind }, 'blob garbage collection found nothing');
  } catch (err) {
    ctx.log.warn({ err, backend: ctx.blobs.kind }, 'blob garbage collection failed; the next run tries again');
  }
}
