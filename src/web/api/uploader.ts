/**
 * The one uploader interface of the app (issue 31, "a data layer"): a batch asks once, through
 * chooseUploader, how its files go — by tus to the WebDAV bridge when the bridge offers it to this
 * page (resumable), else by SPEC's two-step upload — and every file of the batch goes the same
 * way, whatever happens to one of them. A refusal (4xx, 507) is final and answered at once; a
 * lost connection or a server away waits for the server (polled with backoff) and goes on by
 * itself: tus from the offset the bridge holds, the two-step upload by sending the file again
 * whole, which the caller is told of (onWaiting's `resend`).
 */
import type { DetailedError, Upload } from 'tus-js-client';
import { api, ApiError, bridgeAuthorization } from './client.js';
import { bridgeFolderUrl, offersTus, ownerOf, uploadTwoStep, webdrive, type GroupEntry, type PathEntry } from './files.js';
import { currentSession } from '../session.js';

/** One file to send: its bytes, the name it gets, and its folder (uuid for the store, path below the batch's folder for the bridge). */
export interface UploadJob {
  file: File;
  name: string;
  dirs: readonly string[];
  folder: string;
}

export interface UploadEvents {
  progress(sent: number): void;
  /** The server could not be reached: waiting for it (true) or going on (false); `resend`: the file is sent again whole. */
  waiting(on: boolean, resend: boolean): void;
}

export interface Uploader {
  /** tus (resumable) or the two-step upload. */
  readonly resumable: boolean;
  /** Small files (up to BULK_FILE_MAX) the page may hand to send() at once: they go in bulk requests (bulkUploader). */
  readonly smallAtOnce?: number;
  /** Sends one file; rejects with an ApiError (code `cancelled` when `signal` aborted it). */
  send(job: UploadJob, events: UploadEvents, signal: AbortSignal): Promise<void>;
}

/** Where a batch goes: the folder open now, its breadcrumb (for the bridge path) and the caller's groups. */
export interface Target {
  folder: string;
  crumbs: readonly PathEntry[];
  groups: readonly GroupEntry[];
}

export const cancelled = () => new ApiError(0, 'cancelled', 'cancelled');
const isNetwork = (err: unknown) => err instanceof ApiError && err.status === 0 && err.code === 'network';

/** Resolves after `ms`, or rejects `cancelled` when the signal aborts first. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(cancelled());
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(cancelled());
    };
    signal.addEventListener('abort', stop, { once: true });
  });
}

/** Backoff of the polls while the server is away: 1 s, doubling, at most 8 s. */
export const WAIT_STEPS_MS = [1000, 2000, 4000, 8000];

/** Polls `url` until any HTTP answer comes (the server is there again); one poller per URL, shared by the files waiting on it. */
const polls = new Map<string, Promise<void>>();
function serverBack(url: string, init: () => Promise<RequestInit>, signal: AbortSignal): Promise<void> {
  let poll = polls.get(url);
  if (!poll) {
    poll = (async () => {
      const never = new AbortController().signal;
      for (let attempt = 0; ; attempt += 1) {
        await pause(WAIT_STEPS_MS[Math.min(attempt, WAIT_STEPS_MS.length - 1)] as number, never);
        try {
          await fetch(url, { ...(await init()), cache: 'no-store', credentials: 'omit' });
          return;
        } catch {
          // Still away.
        }
      }
    })().finally(() => polls.delete(url));
    polls.set(url, poll);
  }
  return Promise.race([poll, new Promise<void>((_resolve, reject) => signal.addEventListener('abort', () => reject(cancelled()), { once: true }))]);
}

/** Files up to this size go in the tus creation request itself (one request each); their URLs are not kept for resuming after a reload. */
export const SMALL_FILE = 1024 * 1024;

function tusFailure(err: Error | DetailedError): ApiError {
  const status = (err as DetailedError).originalResponse?.getStatus() ?? 0;
  if (status === 507) return new ApiError(507, 'quota_exceeded', 'disk quota exceeded');
  if (status === 0) return new ApiError(0, 'network', '');
  const body = (err as DetailedError).originalResponse?.getBody() ?? '';
  return new ApiError(status, status >= 500 ? 'internal' : 'invalid_request', /<s:message>([^<]*)</.exec(body)?.[1] ?? '');
}

/** tus-js-client retries only what may pass: no answer, 5xx but 507, 409 (offset), 423 (a lock), 429 (too many open). */
export function tusRetries(status: number): boolean {
  return status === 0 || status === 409 || status === 423 || status === 429 || (status >= 500 && status !== 507);
}

function tusUploader(base: string): Uploader {
  return {
    resumable: true,
    async send(job, events, signal) {
      const { Upload } = await import('tus-js-client');
      const small = job.file.size <= SMALL_FILE;
      const url = base + job.dirs.map((d) => `${encodeURIComponent(d)}/`).join('');
      let fail: (err: ApiError) => void = () => undefined;
      let done: () => void = () => undefined;
      const upload: Upload = new Upload(job.file, {
        endpoint: url,
        // Asked at every request: a long upload outlives one bridge token (bridgeAuthorization).
        onBeforeRequest: async (request) => request.setHeader('Authorization', await bridgeAuthorization()),
        metadata: { filename: job.name, mtime: String(Math.floor(job.file.lastModified / 1000)) },
        // creation-with-upload: a small file is one POST; a large one's first chunk rides on it.
        uploadDataDuringCreation: true,
        chunkSize: 16 * 1024 * 1024,
        retryDelays: [0, 1000],
        onShouldRetry: (err) => tusRetries(err.originalResponse?.getStatus() ?? 0),
        storeFingerprintForResuming: !small,
        removeFingerprintOnSuccess: true,
        onProgress: (sent) => events.progress(sent),
        onSuccess: () => done(),
        onError: (err) => fail(tusFailure(err)),
      });
      const attempt = () =>
        new Promise<void>((resolve, reject) => {
          done = resolve;
          fail = reject;
          upload.start();
        });
      const stop = () => void upload.abort(true).catch(() => undefined);
      signal.addEventListener('abort', stop, { once: true });
      try {
        if (!small) {
          const previous = await upload.findPreviousUploads();
          if (previous[0]) upload.resumeFromPreviousUpload(previous[0]);
        }
        for (;;) {
          if (signal.aborted) throw cancelled();
          try {
            await Promise.race([attempt(), new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(cancelled()), { once: true }))]);
            return;
          } catch (err) {
            if (!isNetwork(err)) throw err;
            // The bridge is away: wait for it, then start again, which resumes from its offset (HEAD).
            events.waiting(true, false);
            await serverBack(url, async () => ({ method: 'OPTIONS', headers: { authorization: await bridgeAuthorization() } }), signal);
            events.waiting(false, false);
          }
        }
      } finally {
        signal.removeEventListener('abort', stop);
      }
    },
  };
}

const twoStepUploader: Uploader = {
  resumable: false,
  async send(job, events, signal) {
    for (;;) {
      try {
        await uploadTwoStep(job.folder, job.file, (sent) => events.progress(sent), signal, job.name);
        return;
      } catch (err) {
        if (signal.aborted) throw cancelled();
        if (!isNetwork(err)) throw err;
        // Not resumable: when the store answers again the file goes again from its first byte, as the list says.
        events.waiting(true, true);
        events.progress(0);
        await serverBack('/api/user', async () => ({ headers: { accept: 'application/json' } }), signal);
        events.waiting(false, true);
      }
    }
  },
};

/** Files up to this size may go by bulk upload; larger ones by tus. */
export const BULK_FILE_MAX = 256 * 1024;
/** One bulk request carries at most this many files... */
const BULK_FILES = 100;
/** ...and this many bytes. */
const BULK_BYTES = 8 * 1024 * 1024;
/** Files of a bulk uploader's batch sent by tus at once (the large ones, and small ones a bulk request could not send). */
const TUS_AT_ONCE = 3;
/** How long a bulk request waits for more files before it goes. */
const BULK_GATHER_MS = 15;

interface Pending {
  job: UploadJob;
  path: string;
  events: UploadEvents;
  signal: AbortSignal;
  resolve(): void;
  reject(err: unknown): void;
}

/** `SHA1:<hex>` of a file (SubtleCrypto), the checksum the bridge verifies before it stores the part. */
async function sha1Of(file: File): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-1', await file.arrayBuffer()));
  return `SHA1:${Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** The multipart/related body of a bulk upload, as the Nextcloud desktop sends it (docs/client-quirks.md §3c). */
async function bulkBody(files: readonly Pending[], boundary: string): Promise<Blob> {
  const parts: BlobPart[] = [];
  for (const p of files) {
    const head = [
      `--${boundary}`,
      'Content-Type: application/octet-stream',
      `X-File-Path: ${p.path}`,
      `X-File-Mtime: ${Math.floor(p.job.file.lastModified / 1000)}`,
      `OC-Checksum: ${await sha1Of(p.job.file)}`,
      `Content-Length: ${p.job.file.size}`,
      '',
      '',
    ].join('\r\n');
    parts.push(head, p.job.file, '\r\n');
  }
  parts.push(`--${boundary}--\r\n`);
  return new Blob(parts);
}

/** A bulk entry's refusal (`<DAV status>: <reason>`) as the ApiError the page shows. */
function bulkRefusal(message: string): ApiError {
  const status = Number(/^(\d{3}):/.exec(message)?.[1] ?? 0);
  if (status === 507) return new ApiError(507, 'quota_exceeded', 'disk quota exceeded');
  return new ApiError(status || 400, status >= 500 ? 'internal' : 'invalid_request', message.replace(/^\d{3}:\s*/, ''));
}

/**
 * Small files of a batch by the bridge's bulk upload (`POST /remote.php/dav/bulk`): the files the
 * page hands over within BULK_GATHER_MS go together, BULK_FILES or BULK_BYTES at most per
 * request, committed by the bridge with one fsync for the request instead of one per file. A file
 * the bridge refuses is refused alone, as its PUT would be; when a bulk request gets no answer
 * (the bridge away) its files go on by tus, which waits for the server. Larger files go by tus.
 */
function bulkUploader(rootUrl: string, folderPath: string, tus: Uploader): Uploader {
  const url = `${rootUrl.replace(/\/+$/, '')}/remote.php/dav/bulk`;
  let gathering: Pending[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const post = async (batch: Pending[]): Promise<void> => {
    const live = batch.filter((p) => !p.signal.aborted);
    for (const p of batch) if (p.signal.aborted) p.reject(cancelled());
    if (live.length === 0) return;
    const boundary = `driveway-${crypto.randomUUID()}`;
    let answer: Record<string, { error: boolean; message?: string }>;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { authorization: await bridgeAuthorization(), 'content-type': `multipart/related; boundary=${boundary}` },
        body: await bulkBody(live, boundary),
        credentials: 'omit',
        cache: 'no-store',
      });
      if (!response.ok) throw new ApiError(response.status, 'invalid_request', '');
      answer = (await response.json()) as typeof answer;
    } catch {
      // No answer, or the request refused whole: each file goes by tus on its own.
      for (const p of live) byTus(p.job, p.events, p.signal).then(p.resolve, p.reject);
      return;
    }
    for (const p of live) {
      const entry = answer[p.path];
      if (entry && !entry.error) {
        p.events.progress(p.job.file.size);
        p.resolve();
      } else p.reject(bulkRefusal(entry?.message ?? 'no answer for this file'));
    }
  };
  // The page hands over many files at once (smallAtOnce): the large ones among them still go by tus a few at a time.
  let tusRunning = 0;
  const tusWaiting: Array<() => void> = [];
  const byTus = async (job: UploadJob, events: UploadEvents, signal: AbortSignal): Promise<void> => {
    while (tusRunning >= TUS_AT_ONCE) await new Promise<void>((resolve) => tusWaiting.push(resolve));
    tusRunning += 1;
    try {
      await tus.send(job, events, signal);
    } finally {
      tusRunning -= 1;
      tusWaiting.shift()?.();
    }
  };
  const flush = () => {
    timer = undefined;
    const batch = gathering;
    gathering = [];
    void post(batch);
  };
  return {
    resumable: true,
    smallAtOnce: BULK_FILES * 2,
    send(job, events, signal) {
      if (job.file.size > BULK_FILE_MAX) return byTus(job, events, signal);
      const path = [folderPath, ...job.dirs, job.name].join('/');
      return new Promise<void>((resolve, reject) => {
        gathering.push({ job, path, events, signal, resolve, reject });
        const bytes = gathering.reduce((sum, p) => sum + p.job.file.size, 0);
        if (gathering.length >= BULK_FILES || bytes >= BULK_BYTES) {
          if (timer !== undefined) clearTimeout(timer);
          flush();
        } else timer ??= setTimeout(flush, BULK_GATHER_MS);
      });
    },
  };
}

/**
 * The uploader of a batch into `target`, asked once: tus where the bridge offers it to this page
 * (small files then by bulk upload into a drive's `home`), else the two-step upload.
 */
export async function chooseUploader(target: Target): Promise<Uploader> {
  const rootUrl = await webdrive().then((w) => w?.root_url, () => undefined);
  const base = rootUrl ? bridgeFolderUrl(rootUrl, target.crumbs, target.groups) : undefined;
  if (!rootUrl || !base || !(await offersTus(base))) return twoStepUploader;
  const tus = tusUploader(base);
  // The folder's path below the bridge's root, as X-File-Path names it (the client's view: a drive's `home`).
  const segments = base.slice(rootUrl.replace(/\/+$/, '').length).split('/').filter(Boolean).map(decodeURIComponent);
  const home = segments[0] === 'home' || (segments[0] === 'groups' && segments[2] === 'home');
  return home ? bulkUploader(rootUrl, `/${segments.join('/')}`, tus) : tus;
}

/** What a drive's quota leaves: `room` bytes (Infinity without a limit), of `quota`. */
export interface Room {
  used: number;
  quota: number;
  room: number;
}

const roomOf = (used: number, quota: number): Room => ({ used, quota, room: quota > 0 ? Math.max(0, quota - used) : Infinity });

/** The signed-in person's usage and quota (GET /api/user). */
export async function ownRoom(): Promise<Room> {
  const user = await api<{ disk_used: number; disk_quota: number }>('GET', '/api/user');
  return roomOf(user.disk_used, user.disk_quota);
}

/**
 * The room of the drive `target` lies in: a group's (GET /api/groups/<id>) in a group drive, the
 * person's own in theirs; undefined where the page cannot know (another person's folder shared
 * with them: the server decides, and its 507 is final).
 */
export async function roomAt(target: Target): Promise<Room | undefined> {
  const top = target.crumbs[0]?.uuid ?? target.folder;
  const owner = ownerOf(top);
  const topName = top.split(':', 1)[0];
  if (owner && owner !== currentSession()?.uuid) {
    const group = await api<{ disk_used: number; disk_quota: number }>('GET', `/api/groups/${encodeURIComponent(owner)}`);
    return roomOf(group.disk_used, group.disk_quota);
  }
  return topName === 'home' ? ownRoom() : undefined;
}
