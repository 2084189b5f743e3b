/**
 * Retention (docs/operations.md "Retention"): removes the old revisions and the trash items the
 * settings let go, for every user and group, and frees their quota. The settings are
 * `store.retention` unless the owner's organization sets its own (each of the three separately).
 *
 * - The current revision of a file is never removed. `keepRevisions` N keeps the newest N
 *   revisions of each file, the current one included; `keepRevisionDays` D keeps the revisions
 *   uploaded less than D days ago (and the current one, however old). With both set, a revision is
 *   removed only when both rules let it go. 0 turns a rule off.
 * - A trash item (a direct child of a trash folder) moved there more than `trashDays` days ago is
 *   deleted for good, exactly as its owner's DELETE inside trash does (ops/tree.ts purge): its
 *   subtree, revisions, stars and shares go, blob references are released, usage drops.
 *
 * Safe while the store serves and on several instances at once: work goes in bounded batches,
 * each its own transaction keyed on the owner's writes (tree.ts writesOf), which re-reads what
 * it removes; a revision's blob reference is released only by the transaction whose DELETE
 * removed the row, and a trash item is purged only if it is still in trash and still expired.
 * Blobs that lost their last reference are removed after the commit (ops/blob-files.ts), once it
 * is on disk (the blob backend waits for that, as on every path: blobs/blob-backend.ts).
 * Used by the store's background job (app.ts) and by `driveway prune` (cli/prune.ts).
 */
import type { StoreContext } from '../context.js';
import type { Sql } from '../storage/sql.js';
import type { OwnerType } from '../storage/nodes.js';
import { ownerName, subtreeBytes } from '../storage/nodes.js';
import { adjustUsage } from '../storage/revisions.js';
import {
  deleteOldRevision,
  expiredTrashItems,
  ownerFileUuids,
  prunableRevisions,
  prunableTotals,
  retentionOwners,
  stillExpiredTrashItem,
  type RetentionOwnerRow,
  type RevisionRule,
} from '../storage/retention.js';
import { purge, writesOf } from './tree.js';
import { removeBlobFiles } from './blob-files.js';

const DAY_MS = 86_400_000;
/** Owners read per page, files per range, revisions removed per transaction, trash items listed per page. */
export interface RetentionPages {
  owners: number;
  files: number;
  revisions: number;
  trash: number;
}
const PAGES: RetentionPages = { owners: 200, files: 100, revisions: 100, trash: 100 };

export interface RetentionSettings {
  /** Newest revisions kept per file, the current one included; 0: all. */
  keepRevisions: number;
  /** Days an old revision is kept after its upload; 0: forever. */
  keepRevisionDays: number;
  /** Days an item stays in trash; 0: forever. */
  trashDays: number;
}

/** What retention needs of the store: the storage, the blob backend and a logger. */
export interface RetentionContext extends Pick<StoreContext, 'blobs' | 'log'> {
  sql: Sql;
  settings: RetentionSettings;
}

export interface OwnerPruned {
  ownerType: OwnerType;
  ownerUuid: string;
  /** Full name of a user, name of a group. */
  name: string;
  settings: RetentionSettings;
  revisions: number;
  trashItems: number;
  /** Bytes of usage (quota) freed: the sizes of the removed revisions, trash subtrees included. */
  bytesFreed: number;
}

export interface PruneReport {
  dryRun: boolean;
  ownersChecked: number;
  revisions: number;
  trashItems: number;
  bytesFreed: number;
  /** Owners with something removed (or, in a dry run, to remove). */
  owners: OwnerPruned[];
}

export interface PruneOptions {
  /** Now, in ms: the days rules count back from it. */
  now: number;
  /** Count what would be removed, change nothing. */
  dryRun?: boolean;
  /** Stops between batches (the store closing); what was done stays done. */
  signal?: AbortSignal;
  /** Page and batch sizes; tests make them small, to cross every page with a few rows. */
  pages?: RetentionPages;
}

/** The owner's settings: its organization's where set (not NULL), else the global ones. */
export function effectiveSettings(global: RetentionSettings, org: Pick<RetentionOwnerRow, 'keep_revisions' | 'keep_revision_days' | 'trash_days'>): RetentionSettings {
  return {
    keepRevisions: org.keep_revisions ?? global.keepRevisions,
    keepRevisionDays: org.keep_revision_days ?? global.keepRevisionDays,
    trashDays: org.trash_days ?? global.trashDays,
  };
}

/** Applies the settings to every user and group once. */
export async function applyRetention(ctx: RetentionContext, options: PruneOptions): Promise<PruneReport> {
  const report: PruneReport = { dryRun: options.dryRun === true, ownersChecked: 0, revisions: 0, trashItems: 0, bytesFreed: 0, owners: [] };
  const pages = options.pages ?? PAGES;
  for (const type of ['User', 'Group'] as const) {
    let after = '';
    for (;;) {
      const page = await retentionOwners(ctx.sql, type, after, pages.owners);
      for (const owner of page) {
        if (options.signal?.aborted) return report;
        report.ownersChecked += 1;
        const settings = effectiveSettings(ctx.settings, owner);
        if (settings.keepRevisions === 0 && settings.keepRevisionDays === 0 && settings.trashDays === 0) continue;
        const pruned = await pruneOwner(ctx, owner, settings, options);
        if (pruned.revisions === 0 && pruned.trashItems === 0) continue;
        report.revisions += pruned.revisions;
        report.trashItems += pruned.trashItems;
        report.bytesFreed += pruned.bytesFreed;
        report.owners.push({ ...pruned, name: await ownerName(ctx.sql, { type: owner.owner_type, uuid: owner.uuid }) });
      }
      if (page.length < pages.owners) break;
      after = (page.at(-1) as RetentionOwnerRow).uuid;
    }
  }
  return report;
}

async function pruneOwner(ctx: RetentionContext, owner: RetentionOwnerRow, settings: RetentionSettings, options: PruneOptions): Promise<OwnerPruned> {
  const pruned: OwnerPruned = { ownerType: owner.owner_type, ownerUuid: owner.uuid, name: '', settings, revisions: 0, trashItems: 0, bytesFreed: 0 };
  const rule: RevisionRule = {
    keep: settings.keepRevisions,
    createdBefore: settings.keepRevisionDays > 0 ? options.now - settings.keepRevisionDays * DAY_MS : null,
  };
  if (rule.keep > 0 || rule.createdBefore !== null) await pruneRevisions(ctx, owner, rule, options, pruned);
  if (settings.trashDays > 0) await expireTrash(ctx, owner, options.now - settings.trashDays * DAY_MS, options, pruned);
  return pruned;
}

/** Commits `work`, then removes the blobs it left unreferenced. */
async function commitThenRemoveBlobs<T extends { unreferenced: string[] }>(ctx: RetentionContext, ownerUuid: string, work: (tx: Sql) => Promise<T>): Promise<T> {
  const result = await ctx.sql.transaction(work, writesOf(ownerUuid));
  await removeBlobFiles(ctx, result.unreferenced);
  return result;
}

/**
 * Works through the owner's files a hundred at a time (by UUID); in each range, transactions of
 * at most a hundred revisions, each selecting what it deletes, until the range has nothing left
 * (RetentionPages: files, revisions).
 */
async function pruneRevisions(ctx: RetentionContext, owner: RetentionOwnerRow, rule: RevisionRule, options: PruneOptions, pruned: OwnerPruned): Promise<void> {
  const { files: filePage, revisions: batch } = options.pages ?? PAGES;
  const files = await ownerFileUuids(ctx.sql, owner.uuid);
  for (let start = 0; start < files.length; start += filePage) {
    const range = files.slice(start, start + filePage);
    if (options.dryRun) {
      const totals = await prunableTotals(ctx.sql, owner.uuid, rule, range);
      pruned.revisions += totals.count;
      pruned.bytesFreed += totals.bytes;
    } else {
      for (;;) {
        if (options.signal?.aborted) return;
        const done = await commitThenRemoveBlobs(ctx, owner.uuid, async (tx) => {
          const found = await prunableRevisions(tx, owner.uuid, rule, range, batch);
          let removed = 0;
          let bytes = 0;
          const unreferenced: string[] = [];
          for (const rev of found) {
            const outcome = await deleteOldRevision(tx, rev);
            if (!outcome.removed) continue;
            removed += 1;
            bytes += rev.size;
            if (outcome.unreferenced) unreferenced.push(rev.hash);
          }
          await adjustUsage(tx, owner.owner_type, owner.uuid, -bytes);
          return { found: found.length, removed, bytes, unreferenced };
        });
        pruned.revisions += done.removed;
        pruned.bytesFreed += done.bytes;
        // What a transaction selects it deletes; a short batch, or one that removed nothing, ends the page.
        if (done.found < batch || done.removed === 0) break;
      }
    }
  }
}

async function expireTrash(ctx: RetentionContext, owner: RetentionOwnerRow, trashedBefore: number, options: PruneOptions, pruned: OwnerPruned): Promise<void> {
  const { trash: trashPage } = options.pages ?? PAGES;
  let after = '';
  for (;;) {
    const page = await expiredTrashItems(ctx.sql, owner.uuid, trashedBefore, after, trashPage);
    for (const item of page) {
      if (options.signal?.aborted) return;
      if (options.dryRun) {
        pruned.trashItems += 1;
        pruned.bytesFreed += await subtreeBytes(ctx.sql, item.uuid);
        continue;
      }
      // One transaction per item, as the owner's own DELETE inside trash.
      const done = await commitThenRemoveBlobs(ctx, owner.uuid, async (tx) => {
        const node = await stillExpiredTrashItem(tx, item.uuid, trashedBefore);
        if (!node || node.owner_uuid !== owner.uuid) return { purged: false, bytes: 0, unreferenced: [] as string[] };
        const bytes = await subtreeBytes(tx, node.uuid);
        const unreferenced = await purge({ sql: tx, now: options.now, callerUuid: owner.uuid }, node);
        return { purged: true, bytes, unreferenced };
      });
      if (done.purged) {
        pruned.trashItems += 1;
        pruned.bytesFreed += done.bytes;
      }
    }
    if (page.length < trashPage) return;
    after = (page.at(-1) as { uuid: string }).uuid;
  }
}
