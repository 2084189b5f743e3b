/**
 * Zip archives of nodes, streamed (docs/api.md "Zip archives"): the caller's own files and
 * folders (routes/resources.ts) and what a public link reads (routes/public.ts). What goes in is
 * decided before the first byte (planZip: every named node admitted as a download would be, every
 * folder walked, 404/403/400 as clean errors); the bytes of each file are then read through the
 * store's download path (ops/download.ts), one file at a time, as the client takes them:
 * nothing is staged and memory stays flat whatever the size (yazl pipes with backpressure; ZIP64
 * past 4 GiB). Files are stored, not deflated (most large files are compressed already, and
 * deflate would cost more than the network). A failure after the first byte destroys the stream,
 * so the connection is cut and the client sees an error rather than a short archive that looks whole.
 *
 * Entry names are made safe: no `/`, `\` or control characters inside a name, never `.`, `..`
 * or a drive letter, and names that would clash (case-insensitively, for the file systems most
 * archives are unpacked on) get ` (2)`, ` (3)` before their extension. Folders are entries of
 * their own, so empty ones are kept; every entry carries its node's modification time.
 */
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { ZipFile } from 'yazl';
import type { StoreContext } from '../context.js';
import { invalid } from '../envelope.js';
import type { NodeRow } from '../storage/nodes.js';
import { openRevision, type FileVersion } from './download.js';

// yazl computes each entry's CRC-32 with buffer-crc32, a byte-at-a-time loop in JavaScript
// (~45 MiB/s here, a third of a plain download's rate); zlib's native crc32 gives the same
// numbers several times faster. Swapped in on the one module object yazl itself requires.
const yazlRequire = createRequire(createRequire(import.meta.url).resolve('yazl'));
(yazlRequire('buffer-crc32') as { unsigned: (data: Buffer, previous?: number) => number }).unsigned = (data, previous) => crc32(data, previous ?? 0);

/** Nodes one request may name (the URL's `node` values): ~300 UUIDs fit Node's 16 KiB header limit. */
export const MAX_ZIP_NODES = 300;
/** Entries (files and folders, walked) one archive may hold: a zip's central directory is kept in memory until its end. */
export const MAX_ZIP_ENTRIES = 100_000;

export interface ZipItem {
  node: NodeRow;
  /** The entry's name in the archive: safe segments joined by `/`. */
  path: string;
}

/** One name as a safe path segment of an archive entry. */
export function safeSegment(name: string): string {
  // eslint-disable-next-line no-control-regex
  const cleaned = name.replace(/[\u0000-\u001f\u007f]/g, '').replace(/[/\\]/g, '_');
  if (cleaned === '' || /^\.+$/.test(cleaned)) return '_';
  // `C:x` would read as a drive letter to an unpacker on Windows (and yazl refuses it).
  return /^[a-zA-Z]:/.test(cleaned) ? `_${cleaned}` : cleaned;
}

/** `name`, or `name (2).ext`, `name (3).ext`... whichever is not yet in `taken` (compared case-insensitively); records it. */
function claim(taken: Set<string>, name: string, isFolder: boolean): string {
  const dot = isFolder ? -1 : name.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  let candidate = name;
  for (let n = 2; taken.has(candidate.toLowerCase()); n += 1) candidate = `${stem} (${n})${ext}`;
  taken.add(candidate.toLowerCase());
  return candidate;
}

/**
 * The entries of an archive of `roots` (each at the archive's top) and, for folders, all they
 * hold as `childrenOf` answers it, parents before children. 400 past MAX_ZIP_ENTRIES.
 */
export async function planZip(roots: readonly NodeRow[], childrenOf: (folder: NodeRow) => Promise<NodeRow[]>): Promise<ZipItem[]> {
  const items: ZipItem[] = [];
  const add = (node: NodeRow, path: string): void => {
    if (items.length >= MAX_ZIP_ENTRIES) throw invalid(`a zip holds at most ${MAX_ZIP_ENTRIES} files and folders; download the folders one by one`);
    items.push({ node, path });
  };
  const walk = async (folder: NodeRow, path: string): Promise<void> => {
    const taken = new Set<string>();
    for (const child of await childrenOf(folder)) {
      const childPath = `${path}/${claim(taken, safeSegment(child.name), child.type === 'Dir')}`;
      add(child, childPath);
      if (child.type === 'Dir') await walk(child, childPath);
    }
  };
  const top = new Set<string>();
  for (const root of roots) {
    const path = claim(top, safeSegment(root.name), root.type === 'Dir');
    add(root, path);
    if (root.type === 'Dir') await walk(root, path);
  }
  return items;
}

/** The `node` values of a zip request's query: 1 to MAX_ZIP_NODES, distinct (400 otherwise). */
export function zipNodeList(value: unknown): string[] {
  const list = (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((v): v is string => typeof v === 'string' && v !== '');
  if (list.length === 0) throw invalid('name at least one node: ?node=<uuid>&node=<uuid>...');
  if (list.length > MAX_ZIP_NODES) throw invalid(`a zip names at most ${MAX_ZIP_NODES} nodes; zip their folder instead`);
  return [...new Set(list)];
}

/**
 * The archive of `items` as a stream: each file's revision (as `version` answers it for the
 * planned row) is opened only when its turn comes and read as the client takes the bytes.
 * Any failure destroys the stream (and so cuts the response); so does the client going away,
 * which also closes the file being read.
 */
export function zipStream(ctx: StoreContext, items: readonly ZipItem[], version: (file: NodeRow) => Promise<FileVersion>): Readable {
  const zip = new ZipFile();
  // A PassThrough (yazl), typed more narrowly by its types.
  const out = zip.outputStream as Readable;
  let reading: Readable | undefined;
  const fail = (err: Error): void => {
    ctx.log.warn({ err }, 'zip archive cut short');
    reading?.destroy();
    out.destroy(err);
  };
  zip.on('error', fail);
  out.on('close', () => reading?.destroy());
  for (const { node, path } of items) {
    const mtime = new Date(node.updated);
    if (node.type === 'Dir') {
      zip.addEmptyDirectory(path, { mtime });
      continue;
    }
    // The planned size: yazl decides ZIP64 in the entry's header from it, and checks it at the end.
    zip.addReadStreamLazy(path, { mtime, compress: false, size: node.size }, (give) => {
      if (out.destroyed) return;
      version(node)
        .then((file) => openRevision(ctx, file))
        .then((stream) => {
          reading = stream;
          stream.once('error', fail);
          give(null, stream);
        }, fail);
    });
  }
  zip.end();
  return out;
}
