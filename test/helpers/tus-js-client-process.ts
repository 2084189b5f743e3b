/**
 * The child process the tus fault suite (test/integration/faults/tus-resume.test.ts) uploads
 * with: tus-js-client 4's Node API, as a program of its own so the suite can kill it with -9.
 *   node tus-js-client-process.ts   (env: TUS_ENDPOINT, TUS_AUTH, TUS_FILE, TUS_URL_STORAGE,
 *                                    TUS_CHUNK_BYTES, optional TUS_UPLOAD_URL)
 * It uploads TUS_FILE (an fs.ReadStream, as a Node program would) to the folder TUS_ENDPOINT in
 * TUS_CHUNK_BYTES parts, keeping the upload's URL in a FileUrlStorage on disk (TUS_URL_STORAGE):
 * a second run finds it by the file's fingerprint (path, size, mtime, endpoint) and resumes
 * from the server's offset (HEAD). TUS_UPLOAD_URL resumes a known upload instead (another
 * instance's origin: the fingerprint names the endpoint, so the storage would not find it).
 * It prints one line per event: `location <url>`, `head <Upload-Offset>`, `patched <bytes>`
 * (each PATCH's body size, once answered), `done`, or `error <message>` (then exits 1).
 * Runs as TypeScript without tsx where Node strips types itself (22.18 and later).
 */
import { createReadStream } from 'node:fs';
import path from 'node:path';
import * as tus from 'tus-js-client';

const { TUS_ENDPOINT, TUS_AUTH, TUS_FILE, TUS_URL_STORAGE, TUS_CHUNK_BYTES, TUS_UPLOAD_URL } = process.env;
if (!TUS_ENDPOINT || !TUS_AUTH || !TUS_FILE || !TUS_URL_STORAGE || !TUS_CHUNK_BYTES) {
  process.stderr.write('tus-js-client-process.ts: TUS_ENDPOINT, TUS_AUTH, TUS_FILE, TUS_URL_STORAGE and TUS_CHUNK_BYTES are needed\n');
  process.exit(2);
}

// FileUrlStorage is exported by the Node build but missing from the package's typings.
const { FileUrlStorage } = tus as unknown as { FileUrlStorage: new (file: string) => (typeof tus.defaultOptions)['urlStorage'] };
const say = (line: string): void => void process.stdout.write(`${line}\n`);

const upload = new tus.Upload(createReadStream(TUS_FILE), {
  endpoint: TUS_ENDPOINT,
  ...(TUS_UPLOAD_URL ? { uploadUrl: TUS_UPLOAD_URL } : {}),
  chunkSize: Number(TUS_CHUNK_BYTES),
  headers: { authorization: TUS_AUTH },
  metadata: { filename: path.basename(TUS_FILE), filetype: 'application/octet-stream' },
  urlStorage: new FileUrlStorage(TUS_URL_STORAGE),
  storeFingerprintForResuming: true,
  removeFingerprintOnSuccess: true,
  // A refusal ends the run at once: the suite reads it rather than waiting through retries.
  retryDelays: null,
  onUploadUrlAvailable: () => say(`location ${upload.url ?? ''}`),
  onAfterResponse: (req, res) => {
    if (req.getMethod() === 'HEAD') say(`head ${res.getHeader('Upload-Offset') ?? ''}`);
  },
  onChunkComplete: (chunkBytes) => say(`patched ${chunkBytes}`),
  onSuccess: () => {
    say('done');
    process.exit(0);
  },
  onError: (err) => {
    say(`error ${err.message.replace(/\s+/g, ' ')}`);
    process.exit(1);
  },
});

const previous = await upload.findPreviousUploads();
if (previous[0] && !TUS_UPLOAD_URL) upload.resumeFromPreviousUpload(previous[0]);
upload.start();
