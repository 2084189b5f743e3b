/**
 * Previews for the Nextcloud and ownCloud apps (docs/extensions.md "Thumbnails for the bridge",
 * docs/client-quirks.md "Previews"): which files may have one (`nc:has-preview`, decided from the
 * name and size alone, never by reading the file), which of the store's thumbnail sizes answers a
 * request's `x`/`y`, and the thumbnail itself from the store (StoreClient.thumbnail), which
 * decides who may read it exactly as for the file's download. A store without thumbnails (a
 * foreign server of the interface, edition 1.0) is learned once (extension-route.ts): from then on
 * no file has a preview. Owns no HTTP: the door is nextcloud/preview.ts.
 */
import { lookup as lookupMimeType } from 'mime-types';
import { NO_FILE_ACCESS_KEY, StoreError, type NodeId, type NodeKind, type StoreClient, type Thumbnail, type ThumbnailSize } from '../store-client/contract.js';
import type { Logger } from '../common/logger.js';
import { ExtensionRoute } from './extension-route.js';
import type { BridgeUser } from './sessions.js';
import { withSession } from './tree/context.js';

/** What the store makes (src/store/ops/thumbnails.ts THUMBNAIL_SIZES), smallest first. */
export const PREVIEW_SIZES: readonly ThumbnailSize[] = [64, 256, 1024];

/**
 * The types the store decodes (JPEG, PNG, WebP, GIF, AVIF/HEIF), by the name's extension. The
 * store still checks the bytes: a `.png` holding SVG gets no thumbnail (the preview answers 404).
 * Never SVG, TIFF, PDF or any other kind.
 */
const PREVIEW_TYPES: ReadonlySet<string> = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif', 'image/heic', 'image/heif']);

/** The store reads at most this much of a file for a thumbnail. */
const MAX_INPUT_BYTES = 64 * 1024 * 1024;

/**
 * The size that answers a request for `x` by `y` (Nextcloud's PreviewController; -1 means the
 * image's own size): the smallest the store makes that covers the larger of the two, the largest
 * past it. Undefined for 0 or anything else not a size (Nextcloud's 400).
 */
export function previewSizeFor(x: number, y: number): ThumbnailSize | undefined {
  const valid = (n: number) => Number.isInteger(n) && (n === -1 || (n >= 1 && n <= 100_000));
  if (!valid(x) || !valid(y)) return undefined;
  const largest = PREVIEW_SIZES[PREVIEW_SIZES.length - 1] as ThumbnailSize;
  if (x === -1 || y === -1) return largest;
  const wanted = Math.max(x, y);
  return PREVIEW_SIZES.find((px) => px >= wanted) ?? largest;
}

/** What mayHave looks at: a listing's entry or a node's details (which carry no size). */
export interface PreviewCandidate {
  kind: NodeKind;
  name: string;
  sizeBytes?: number;
}

export class Previews {
  private readonly route: ExtensionRoute;

  constructor(
    private readonly client: StoreClient,
    log: Logger,
  ) {
    this.route = new ExtensionRoute(() => log.info('the store makes no thumbnails: previews are off (nc:has-preview false, the preview endpoint 404)'));
  }

  /** `nc:has-preview`: a file of a type the store decodes, small enough, on a store that makes thumbnails. No store call. */
  mayHave(entry: PreviewCandidate): boolean {
    if (entry.kind !== 'file' || this.route.isAbsent || (entry.sizeBytes ?? 0) > MAX_INPUT_BYTES) return false;
    const type = lookupMimeType(entry.name);
    return type !== false && PREVIEW_TYPES.has(type);
  }

  /** Whether what PROPFIND shows of previews may have changed (a cached answer made before is stale). */
  get stateKey(): string {
    return this.route.isAbsent ? 'no-previews' : 'previews';
  }

  /**
   * The thumbnail of `node` at `px` for `user`; undefined when there is none (not an image the
   * store decodes, or a store without thumbnails). A StoreError forbidden when the user may not
   * download the file; not-found when the node is not theirs to see.
   */
  async thumbnail(user: BridgeUser, node: NodeId, entry: PreviewCandidate, px: ThumbnailSize, signal?: AbortSignal): Promise<Thumbnail | undefined> {
    if (!this.mayHave(entry)) return undefined;
    try {
      const made = await withSession(user, (s) => this.client.thumbnail(s, node, px, signal));
      this.route.markPresent();
      return made;
    } catch (err) {
      if (!(err instanceof StoreError) || err.kind !== 'not-found') throw err;
      // A bearer token's session over HTTP: nothing learned of the store (see NO_FILE_ACCESS_KEY).
      if (err.code === NO_FILE_ACCESS_KEY) return undefined;
      // driveway's store says `not_implemented` where it has no such route (edition 1.0); another
      // server's plain 404 is a missing route when a size no store makes is not refused as one.
      await this.route.learn(err, () => this.answersSizes(user, node));
      return undefined;
    }
  }

  /** A probe: driveway's route refuses a size it does not make (400) before looking for a thumbnail. */
  private async answersSizes(user: BridgeUser, node: NodeId): Promise<boolean> {
    try {
      await withSession(user, (s) => this.client.thumbnail(s, node, 0 as ThumbnailSize));
      return true;
    } catch (err) {
      if (err instanceof StoreError && err.kind === 'invalid') return true;
      if (err instanceof StoreError && err.kind === 'not-found') return false;
      throw err;
    }
  }
}
