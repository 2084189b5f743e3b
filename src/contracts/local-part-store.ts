/**
 * Upload parts as files in a folder (`<dataDir>/uploads/<session key>/<part key>`): the PartStore
 * of a bridge in front of a foreign store (its own data directory), and the store of the parts
 * that store/blobs/staged-parts.ts cannot write at their place in the assembled file. Folders
 * 0700, files 0600 (common/private-files.ts). A part is written to `<part key>.tmp` and renamed
 * when its body is complete, so a cut write is never read as a part; what a crash leaves behind
 * goes with its session's folder.
 */
import { createReadStream, createWriteStream, promises as fs } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { makePrivateDir, PRIVATE_FILE_MODE } from '../common/private-files.js';
import { countingStream, type PartStore, type UploadPart } from './upload-sessions.js';

/** Keys are made by the bridge (UUIDs); anything else is refused rather than joined into a path. */
const SAFE_KEY = /^[A-Za-z0-9-]{1,64}$/;

function checkKey(key: string): string {
  if (!SAFE_KEY.test(key)) throw new Error(`not a part store key: ${JSON.stringify(key)}`);
  return key;
}

export class LocalPartStore implements PartStore {
  readonly needsLength = false;

  constructor(private readonly dir: string) {}

  /** The folder of a session's parts (staged-parts.ts keeps its assembled file there too). */
  sessionDir(sessionKey: string): string {
    return path.join(this.dir, checkKey(sessionKey));
  }

  async write(sessionKey: string, partKey: string, body: Readable, _sizeBytes: number | undefined, signal?: AbortSignal): Promise<number> {
    const dir = this.sessionDir(sessionKey);
    await makePrivateDir(dir);
    const file = path.join(dir, checkKey(partKey));
    const tmp = `${file}.tmp`;
    const seen = { bytes: 0 };
    try {
      await pipeline(countingStream(body, seen), createWriteStream(tmp, { mode: PRIVATE_FILE_MODE, flags: 'wx' }), signal ? { signal } : {});
      await fs.rename(tmp, file);
    } catch (err) {
      await fs.rm(tmp, { force: true });
      throw err;
    }
    return seen.bytes;
  }

  async read(sessionKey: string, { partKey }: Pick<UploadPart, 'partKey'>): Promise<Readable> {
    return createReadStream(path.join(this.sessionDir(sessionKey), checkKey(partKey)));
  }

  async removePart(sessionKey: string, partKey: string): Promise<void> {
    await fs.rm(path.join(this.sessionDir(sessionKey), checkKey(partKey)), { force: true });
  }

  async removeSession(sessionKey: string): Promise<void> {
    await fs.rm(this.sessionDir(sessionKey), { recursive: true, force: true });
  }
}
