/**
 * Thumbnails of image files (issue 31, docs/api.md "Thumbnails"): a WebP of at most `px` x `px`
 * (64, 256 or 1024) made by sharp (libvips) from the bytes of one revision, for the web app's
 * listing and Details, and for link pages. Owns what may be decoded and how much of it; who may
 * read the revision is decided before this is called, exactly as for its download
 * (ops/download.ts fileVersion, ops/public-links.ts for links).
 *
 * What is decoded: JPEG, PNG, WebP, GIF (its first frame) and AVIF/HEIF, and only when both the
 * file's first bytes (its magic number) and sharp's own reading of its header name a format on
 * that list. Never SVG (sharp includes librsvg, which would fetch, parse XML and run a renderer
 * over the page's markup), nor TIFF, PDF or anything else: those answer "no thumbnail". Bounded:
 * at most MAX_INPUT_BYTES read, MAX_INPUT_PIXELS decoded (checked from the header before any
 * pixel is, so a 30,000 x 30,000 PNG of a few bytes is refused at once), TIMEOUT_SEC of libvips
 * work, MAX_RUNNING at once with MAX_WAITING queued (past that 503 with Retry-After).
 *
 * Cache: `<dataDir>/thumbnails/<2 hex>/<blob hash>-<px>.webp`, folders 0700, files 0600. Keyed
 * by the revision's content address, so a new revision (other bytes) gets a new thumbnail and
 * identical bytes share one; a file that gives none leaves `<blob hash>.none` (empty) so it is
 * not decoded again. Bounded at MAX_CACHE_BYTES: past it the least recently used files go
 * (a hit refreshes a file's time) until a quarter is free. A revision removed is never served
 * (the access check comes first); its thumbnail ages out with the rest.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type Sharp from 'sharp';
import { makePrivateDir, PRIVATE_FILE_MODE } from '../../common/private-files.js';
import type { StoreContext } from '../context.js';
import { invalid, notFound, StoreHttpError } from '../envelope.js';
import { openRevision, type FileVersion } from './download.js';

let sharpModule: Promise<typeof Sharp> | undefined;
/** sharp (libvips: ~23 MiB of RSS) loads at the first thumbnail made, not with the store (docs/performance.md "Memory"). */
function loadSharp(): Promise<typeof Sharp> {
  return (sharpModule ??= import('sharp').then((m) => m.default));
}

export const THUMBNAIL_SIZES = [64, 256, 1024] as const;
export type ThumbnailPx = (typeof THUMBNAIL_SIZES)[number];

/** Larger files are not read for a thumbnail (a photo is a few MiB; a 64 MiB "image" is not one to decode on a request). */
const MAX_INPUT_BYTES = 64 * 1024 * 1024;
/** 50 megapixels: any camera's photo, not a decompression bomb. */
const MAX_INPUT_PIXELS = 50_000_000;
const TIMEOUT_SEC = 10;
const MAX_RUNNING = 2;
const MAX_WAITING = 64;
const MAX_CACHE_BYTES = 256 * 1024 * 1024;

/** sharp's metadata().format values decoded; "heif" covers AVIF (libheif with AV1). */
const ALLOWED_FORMATS = new Set(['jpeg', 'png', 'webp', 'gif', 'heif']);
/** ISO-BMFF brands of AVIF and HEIF stills and sequences. */
const HEIF_BRANDS = new Set(['avif', 'avis', 'heic', 'heix', 'heim', 'heis', 'hevc', 'hevx', 'mif1', 'msf1']);

export interface Thumbnail {
  body: Buffer;
  /** `"<uuid>-<revision>-<px>"`: changes with the revision, like the download's ETag. */
  etag: string;
}

/** The px of a request (`"64"`, `"256"`, `"1024"`), or 400. */
export function thumbnailPx(value: unknown): ThumbnailPx {
  const px = typeof value === 'string' && /^\d{1,5}$/.test(value) ? Number(value) : NaN;
  const size = THUMBNAIL_SIZES.find((allowed) => allowed === px);
  if (size === undefined) throw invalid(`thumbnail size must be one of ${THUMBNAIL_SIZES.join(', ')}`);
  return size;
}

/** Whether the first bytes are those of a format on the list (never SVG, XML or text of any kind). */
export function hasImageMagic(head: Buffer): boolean {
  const ascii = (from: number, to: number) => head.subarray(from, to).toString('latin1');
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return true; // JPEG
  if (head.length >= 8 && head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return true; // PNG
  if (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a') return true;
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return true;
  return ascii(4, 8) === 'ftyp' && HEIF_BRANDS.has(ascii(8, 12)); // AVIF / HEIF
}

const noThumbnail = () => notFound('no thumbnail for this file (not an image of a supported kind, or too large)');

/** Waits for one of MAX_RUNNING places; 503 when MAX_WAITING are already waiting. */
class Slots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= MAX_RUNNING) {
      if (this.waiting.length >= MAX_WAITING) throw new StoreHttpError(503, 'unavailable', 'too many thumbnails being made; try again', { 'Retry-After': '2' });
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.running += 1;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}

/** One store's thumbnail folder: cache lookups, the queue, and the bytes it holds. */
class ThumbnailCache {
  private readonly slots = new Slots();
  /** Made now, keyed `<hash>-<px>`: parallel requests for one thumbnail share one decode. */
  private readonly making = new Map<string, Promise<Buffer | undefined>>();
  private sizeBytes: number | undefined;
  private evicting: Promise<void> | undefined;

  constructor(readonly dir: string) {}

  private fileOf(hash: string, suffix: string): string {
    return path.join(this.dir, hash.slice(0, 2), `${hash}${suffix}`);
  }

  /** The thumbnail of the bytes `hash` at `px`, or undefined when none can be made. */
  async get(ctx: StoreContext, file: FileVersion, px: ThumbnailPx): Promise<Buffer | undefined> {
    const hash = file.revision.blob_hash;
    const cached = this.fileOf(hash, `-${px}.webp`);
    const found = await fs.readFile(cached).catch(() => undefined);
    if (found) {
      const now = new Date();
      void fs.utimes(cached, now, now).catch(() => undefined);
      return found;
    }
    if (await exists(this.fileOf(hash, '.none'))) return undefined;
    const key = `${hash}-${px}`;
    let pending = this.making.get(key);
    if (!pending) {
      pending = this.slots.run(() => this.make(ctx, file, px)).finally(() => this.making.delete(key));
      this.making.set(key, pending);
    }
    return pending;
  }

  private async make(ctx: StoreContext, file: FileVersion, px: ThumbnailPx): Promise<Buffer | undefined> {
    const hash = file.revision.blob_hash;
    if (file.revision.size > MAX_INPUT_BYTES || file.revision.size < 12) return this.refuse(hash);
    const input = await readAll(await openRevision(ctx, file), file.revision.size);
    if (!hasImageMagic(input)) return this.refuse(hash);
    let body: Buffer;
    try {
      const options = { limitInputPixels: MAX_INPUT_PIXELS, pages: 1, failOn: 'error' as const };
      const sharp = await loadSharp();
      const meta = await sharp(input, options).metadata();
      if (!meta.format || !ALLOWED_FORMATS.has(meta.format)) return this.refuse(hash);
      if (!meta.width || !meta.height || meta.width * meta.height > MAX_INPUT_PIXELS) return this.refuse(hash);
      body = await sharp(input, options)
        .timeout({ seconds: TIMEOUT_SEC })
        .autoOrient()
        .resize(px, px, { fit: 'inside', withoutEnlargement: true })
        .webp({ quality: px <= 64 ? 70 : 80, effort: 2 })
        .toBuffer();
    } catch (err) {
      const timedOut = /timeout/i.test(err instanceof Error ? err.message : '');
      ctx.log.info({ node: file.node.uuid, revision: file.revision.revision, reason: err instanceof Error ? err.message : String(err) }, 'no thumbnail made');
      // A timeout may be the machine's load: tried again next time; a file libvips refuses is not.
      return timedOut ? undefined : this.refuse(hash);
    }
    await this.store(this.fileOf(hash, `-${px}.webp`), body).catch((err: unknown) => ctx.log.warn({ err }, 'thumbnail not cached'));
    return body;
  }

  private async refuse(hash: string): Promise<undefined> {
    await this.store(this.fileOf(hash, '.none'), Buffer.alloc(0)).catch(() => undefined);
    return undefined;
  }

  /** Writes a cache file whole (a temporary name, then rename), 0600, and keeps the folder under its bound. */
  private async store(target: string, body: Buffer): Promise<void> {
    await makePrivateDir(path.dirname(target));
    const temporary = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    await fs.writeFile(temporary, body, { mode: PRIVATE_FILE_MODE });
    await fs.rename(temporary, target);
    this.sizeBytes = (this.sizeBytes ?? (await folderBytes(this.dir))) + body.length;
    if (this.sizeBytes > MAX_CACHE_BYTES && !this.evicting) this.evicting = this.evict().finally(() => (this.evicting = undefined));
  }

  /** Removes the least recently used files until a quarter of the bound is free. */
  private async evict(): Promise<void> {
    const files = await cacheFiles(this.dir);
    files.sort((a, b) => a.mtimeMs - b.mtimeMs);
    let total = files.reduce((sum, f) => sum + f.size, 0);
    for (const f of files) {
      if (total <= MAX_CACHE_BYTES * 0.75) break;
      await fs.rm(f.file, { force: true });
      total -= f.size;
    }
    this.sizeBytes = total;
  }
}

async function exists(file: string): Promise<boolean> {
  return fs.stat(file).then(() => true, () => false);
}

async function readAll(stream: AsyncIterable<unknown>, sizeBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of stream) {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    total += bytes.length;
    if (total > MAX_INPUT_BYTES) throw new Error('blob longer than its row says');
    chunks.push(bytes);
  }
  return Buffer.concat(chunks, Math.min(total, sizeBytes));
}

async function cacheFiles(dir: string): Promise<Array<{ file: string; size: number; mtimeMs: number }>> {
  const found: Array<{ file: string; size: number; mtimeMs: number }> = [];
  const fans = await fs.readdir(dir).catch(() => [] as string[]);
  for (const fan of fans) {
    const names = await fs.readdir(path.join(dir, fan)).catch(() => [] as string[]);
    for (const name of names) {
      const file = path.join(dir, fan, name);
      const stat = await fs.stat(file).catch(() => undefined);
      if (stat?.isFile()) found.push({ file, size: stat.size, mtimeMs: stat.mtimeMs });
    }
  }
  return found;
}

async function folderBytes(dir: string): Promise<number> {
  return (await cacheFiles(dir)).reduce((sum, f) => sum + f.size, 0);
}

/** One cache per store (keyed by its blob backend: withSql() copies of a context share it). */
const caches = new WeakMap<object, ThumbnailCache>();

/** The folder thumbnails are cached in, under the data folder. */
export function thumbnailDir(ctx: StoreContext): string {
  return path.join(ctx.config.dataDir, 'thumbnails');
}

/**
 * The WebP thumbnail of `file` (whose reading the caller has already been allowed) at `px`;
 * 404 when none can be made, 503 when too many are being made.
 */
export async function makeThumbnail(ctx: StoreContext, file: FileVersion, px: ThumbnailPx): Promise<Thumbnail> {
  let cache = caches.get(ctx.blobs);
  if (!cache) {
    cache = new ThumbnailCache(thumbnailDir(ctx));
    caches.set(ctx.blobs, cache);
  }
  const body = await cache.get(ctx, file, px);
  if (!body) throw noThumbnail();
  return { body, etag: `"${file.node.uuid}-${file.revision.revision}-${px}"` };
}
