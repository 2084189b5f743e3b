/**
 * Reads and writes of one resource: a file's bytes (a range of them), a new file or a new
 * revision, a new collection. Each write lands in a store folder its caller resolved (the
 * `…At` forms resolve a path first, as a verb that holds no resource does), then patches or
 * forgets exactly the listings and the quota it changed. Refusals the bridge makes are DAV errors;
 * the store's are StoreErrors (dav-errors.ts maps both).
 */
import { Transform, type Readable } from 'node:stream';
import { StoreError, type ByteRange, type Download, type NodeEntry } from '../../store-client/contract.js';
import { DavStatusError } from '../dav-errors.js';
import type { BridgeUser } from '../sessions.js';
import { revisionOfId } from '../versions-view.js';
import { withSession, type TreeContext } from './context.js';
import type { Grants } from './grants.js';
import { folderKeyOf, nameOf, type DavPath } from './paths.js';
import type { Resolver } from './resolver.js';
import type { Resource } from './resource.js';
import { forgetRevisions } from './versions.js';

export interface WriteOutcome {
  created: boolean;
  /** The file as the store now lists it, when the store said enough (id, size). */
  entry?: NodeEntry;
}

export class Files {
  constructor(
    private readonly ctx: TreeContext,
    private readonly resolver: Resolver,
    private readonly grants: Grants,
  ) {}

  /**
   * Reads a file, a byte range of it when asked. The range is handed to the store; a store that
   * ignores it (200) is read from the start and the bytes before the range are skipped here.
   */
  async read(user: BridgeUser, file: Resource, range?: ByteRange, signal?: AbortSignal): Promise<Download> {
    if (file.entry.kind !== 'file') throw new DavStatusError(400, 'not a file');
    // A revision in /versions/ is its file's bytes at that revision.
    const revision = revisionOfId(file.entry.id);
    const id = revision?.file ?? file.entry.id;
    const download = await withSession(user, (s) => this.ctx.client.download(s, id, file.entry.name, { range, signal, ...(revision ? { version: revision.revision } : {}) }));
    if (!range || download.rangeHonoured) return download;
    const start = range.start;
    const end = range.end ?? Number.POSITIVE_INFINITY;
    // Only the sliced stream is right now: the download's own sendTo (if any) would send it all.
    const { sendTo: _whole, ...rest } = download;
    return { ...rest, status: 206, rangeHonoured: true, contentLength: undefined, body: sliceStream(download.body, start, end) };
  }

  /** write() at a path: its parent resolved first (403 fixed, 409 missing: Resolver.parentFolder). */
  async writeAt(user: BridgeUser, path: DavPath, body: Readable | Buffer, sizeBytes?: number, signal?: AbortSignal, checksum?: string): Promise<WriteOutcome> {
    return this.write(user, await this.resolver.parentFolder(user, path), nameOf(path), body, sizeBytes, signal, checksum);
  }

  /**
   * Writes file `name` into `parent`: a new revision when a file is there, else a new file; 409
   * when a collection has that name. `checksum`: the client's OC-Checksum, refused by the store
   * (StoreError `invalid`) when the bytes contradict it, nothing written.
   */
  async write(user: BridgeUser, parent: Resource, name: string, body: Readable | Buffer, sizeBytes?: number, signal?: AbortSignal, checksum?: string): Promise<WriteOutcome> {
    const listing = await this.resolver.listing(user, parent.entry.id);
    const existing = listing.byName.get(name);
    if (existing?.kind === 'folder') throw new DavStatusError(409, 'a collection has that name');
    const target = existing ? { revisionOf: existing.id, name: existing.name } : { folder: parent.entry.id, name };
    const result = await withSession(user, (s) => this.ctx.client.upload(s, target, body, sizeBytes, signal, checksum === undefined ? undefined : { checksum }));
    this.grants.afterWrite(user, parent.top?.id);
    if (existing) forgetRevisions(this.ctx.cache, existing.id);
    const key = folderKeyOf(user, parent.entry.id);
    const id = result.id ?? existing?.id;
    if (id && result.sizeBytes !== undefined) {
      const entry: NodeEntry = {
        id,
        name: existing?.name ?? name,
        kind: 'file',
        sizeBytes: result.sizeBytes,
        updatedMs: Date.now(),
        ...(result.revision !== undefined ? { revision: result.revision } : {}),
        isStarred: existing?.isStarred ?? false,
        ...(result.checksums ? { checksums: result.checksums } : {}),
        ...(result.fileId !== undefined ? { fileId: result.fileId } : existing?.fileId !== undefined ? { fileId: existing.fileId } : {}),
      };
      this.ctx.cache.upsert(key, entry);
      return { created: !existing, entry };
    }
    this.ctx.cache.forget(key);
    return { created: !existing };
  }

  /** mkdir() at a path: its parent resolved first. */
  async mkdirAt(user: BridgeUser, path: DavPath): Promise<void> {
    return this.mkdir(user, await this.resolver.parentFolder(user, path), nameOf(path));
  }

  /** Creates collection `name` in `parent`; 405 when the name is taken. */
  async mkdir(user: BridgeUser, parent: Resource, name: string): Promise<void> {
    const { cache, client } = this.ctx;
    const key = folderKeyOf(user, parent.entry.id);
    const listing = await this.resolver.listing(user, parent.entry.id);
    if (listing.byName.has(name)) throw new DavStatusError(405, 'exists');
    try {
      await withSession(user, (s) => client.createFolder(s, parent.entry.id, name));
    } catch (err) {
      // Two MKCOLs of one name at once (rclone's parallel transfers each make their parent):
      // both found the name free, the store made it for the first. The second is told it
      // exists (405, which rclone takes as done), not a bare conflict (409: "parent missing").
      if (!(err instanceof StoreError) || err.kind !== 'conflict') throw err;
      cache.forget(key);
      if ((await this.resolver.listing(user, parent.entry.id)).byName.has(name)) throw new DavStatusError(405, 'exists');
      throw err;
    } finally {
      cache.forget(key);
    }
  }
}

/** Skips `start` bytes and ends after byte `end` (inclusive) of a stream that starts at 0. */
function sliceStream(source: Readable, start: number, end: number): Readable {
  let position = 0;
  // Set once the range is complete: the source is then destroyed on purpose, and the error an
  // undici body reports for that must not fail the slice.
  let complete = false;
  const slicer = new Transform({
    transform(chunk: Buffer, _enc, callback) {
      const chunkStart = position;
      position += chunk.length;
      if (position <= start || chunkStart > end) {
        if (chunkStart > end) {
          complete = true;
          source.destroy();
        }
        callback();
        return;
      }
      callback(null, chunk.subarray(Math.max(0, start - chunkStart), Math.min(chunk.length, end - chunkStart + 1)));
      if (position > end) {
        complete = true;
        source.unpipe(slicer);
        source.destroy();
        slicer.end();
      }
    },
  });
  source.on('error', (err) => {
    if (!complete) slicer.destroy(err);
  });
  return source.pipe(slicer);
}
