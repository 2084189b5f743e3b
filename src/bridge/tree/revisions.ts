/**
 * Revisions: a save that makes the moved or copied content the next revision of the file it
 * lands on (reviseInto: the store's revision route, one call, or the bytes through the bridge
 * over a store without it), and a revision of `/versions/` copied out (copyRevision: the
 * store's revision restore onto its own file, or a new file elsewhere). docs/bridge-design.md
 * "Saves" and "Versions and trash".
 */
import { StoreError, type NodeId } from '../../store-client/contract.js';
import { DavStatusError } from '../dav-errors.js';
import { ExtensionRoute } from '../extension-route.js';
import type { BridgeUser } from '../sessions.js';
import { revisionOfId } from '../versions-view.js';
import { withSession, type TreeContext } from './context.js';
import type { Files } from './files.js';
import type { Grants } from './grants.js';
import { trashKeyOf, type DavPath } from './paths.js';
import type { Resolver } from './resolver.js';
import type { Resource } from './resource.js';
import { forgetRevisions } from './versions.js';

/** An answer a server gives for a route it does not have: 404, or 405 / 501 from some. */
function mayLackRoute(err: StoreError): boolean {
  return err.kind === 'not-found' || err.httpStatus === 405 || err.httpStatus === 501;
}

export class Revisions {
  /** Whether the store answers reviseFrom (POST /api/nodes/{file}/revisions): hasRevisionRoute. */
  private readonly revisionRoute = new ExtensionRoute(() =>
    this.ctx.log?.info('the store has no revision route: a MOVE or COPY onto a file uploads the source as a new revision (docs/bridge-design.md "Saves")'),
  );

  constructor(
    private readonly ctx: TreeContext,
    private readonly resolver: Resolver,
    private readonly grants: Grants,
    private readonly files: Files,
  ) {}

  /**
   * COPY of a revision out of `/versions/` (`source`, a revision's resource) to `to`: onto its
   * own file it is the restore (the store's revision restore: the revision's bytes become the
   * next revision, no byte copied; 204, with Overwrite: T or F alike, as nothing is replaced);
   * to a free name it is a new file with the revision's
   * bytes (download and upload, 201). Onto any other resource it is refused (403): a revision is
   * restored onto the file it belongs to, never over another.
   */
  async copyRevision(user: BridgeUser, source: Resource, to: DavPath): Promise<{ replaced: boolean }> {
    const revision = revisionOfId(source.entry.id);
    if (!revision) throw new DavStatusError(400, 'not a revision');
    const existing = await this.resolver.tryStat(user, to);
    if (existing) {
      if (existing.entry.id !== revision.file) throw new DavStatusError(403, 'a revision is restored onto its own file only');
      // Overwrite: F is not refused here: the file is not replaced but gains a revision, its
      // history intact, and rclone (1.60 and later) sends F on every COPY (docs/client-quirks.md §3).
      try {
        await withSession(user, (s) => this.ctx.client.restoreRevision(s, revision.file, revision.revision));
      } finally {
        this.grants.afterWrite(user, existing.top?.id);
        if (existing.parent) this.ctx.cache.forget(existing.parent.key);
        forgetRevisions(this.ctx.cache, revision.file);
      }
      return { replaced: true };
    }
    const download = await withSession(user, (s) => this.ctx.client.download(s, revision.file, source.entry.name, { version: revision.revision }));
    try {
      await this.files.writeAt(user, to, download.body, download.totalBytes ?? source.entry.sizeBytes);
    } finally {
      if (!download.body.destroyed) download.body.destroy();
    }
    return { replaced: false };
  }

  /**
   * MOVE or COPY of a file onto a file with Overwrite: T (a client's safe save: docs/bridge-design.md
   * "Saves"): the source's content becomes the next revision of `existing`, which keeps its UUID,
   * earlier revisions, shares, links, star and tags; `consume` (MOVE) takes the source away. Over a
   * store with the extension (docs/extensions.md "Revision from another file") that is ONE call,
   * no byte copied, refused whole or done whole. Over a store that only speaks the interface, the
   * bridge downloads the source and uploads its bytes as a new revision of `existing` (SPEC: an
   * upload into a file), then removes the source; a refusal of the upload (quota, permission)
   * changes nothing, and a failure of the removal after it leaves the source in place beside the
   * new revision (nothing can take a revision back through the interface).
   */
  async reviseInto(user: BridgeUser, source: Resource, existing: Resource, consume: boolean): Promise<void> {
    try {
      if (!this.revisionRoute.isAbsent) {
        try {
          await withSession(user, (s) => this.ctx.client.reviseFrom(s, existing.entry.id, source.entry.id, { consume }));
          this.revisionRoute.markPresent();
          return;
        } catch (err) {
          if (!(err instanceof StoreError && mayLackRoute(err)) || (await this.hasRevisionRoute(user, err))) throw err;
        }
      }
      await this.reviseByUpload(user, source, existing, consume);
    } finally {
      this.grants.afterWrite(user, existing.top?.id, source.top?.id);
      forgetRevisions(this.ctx.cache, existing.entry.id);
      if (existing.parent) this.ctx.cache.forget(existing.parent.key);
      if (consume && source.parent) {
        this.ctx.cache.forget(source.parent.key);
        this.ctx.cache.forget(trashKeyOf(user, source.top?.id));
      }
    }
  }

  /**
   * Whether the store has the revision route, learned once per store and kept for the life of this
   * bridge, as hasMyAccess learns myaccess: driveway's store names a route it lacks
   * (`not_implemented`, edition 1.0); of another server, a revision of the caller's home from
   * itself is asked, which the route refuses with a 4xx other than 404 (a folder is no file) and
   * a server without it answers 404 (or 405, 501: mayLackRoute). A failure of that question
   * (store unreachable) is thrown.
   */
  private hasRevisionRoute(user: BridgeUser, refusal: StoreError): Promise<boolean> {
    return this.revisionRoute.learn(refusal, async () => {
      const home = 'home' as NodeId;
      try {
        await withSession(user, (s) => this.ctx.client.reviseFrom(s, home, home, { consume: false }));
        return true;
      } catch (err) {
        if (!(err instanceof StoreError)) throw err;
        if (err.kind === 'unavailable' || err.kind === 'bad-response' || err.kind === 'unauthenticated') throw err;
        return !mayLackRoute(err);
      }
    });
  }

  /** reviseInto over a store that only speaks the interface: the bytes through the bridge. */
  private async reviseByUpload(user: BridgeUser, source: Resource, existing: Resource, consume: boolean): Promise<void> {
    const { client } = this.ctx;
    const download = await withSession(user, (s) => client.download(s, source.entry.id, source.entry.name));
    try {
      await withSession(user, (s) => client.upload(s, { revisionOf: existing.entry.id, name: existing.entry.name }, download.body, download.totalBytes ?? source.entry.sizeBytes));
    } finally {
      if (!download.body.destroyed) download.body.destroy();
    }
    if (!consume) return;
    // As the store's route does: the source (a temp file) goes for good, its content living on
    // as the new revision. The interface deletes in two steps: into the trash, then out of it.
    // Below a "delete for good" folder the first step is the last.
    if ((await withSession(user, (s) => client.remove(s, source.entry.id))).forGood === true) return;
    try {
      await withSession(user, (s) => client.remove(s, source.entry.id));
    } catch (err) {
      this.ctx.log?.warn({ err, id: source.entry.id }, 'the source of a save is in the trash, not deleted for good');
    }
  }
}
