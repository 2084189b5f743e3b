/**
 * Uploads of the file browser: what a picker or a drop gives (files, and folders with their
 * trees: webkitRelativePath of a folder picker, DataTransferItem.webkitGetAsEntry of a drop)
 * becomes a list of files with their folder path. A batch first asks what the drive's quota
 * leaves (a file that cannot fit is refused before any byte moves, saying how much room is
 * left), makes its folders (new_dir, or the one already there), asks what to do with a name
 * already in its folder (replace, keep both, skip; "apply to all"), then sends its files by the
 * one uploader chosen for the batch (api/uploader.ts: tus when the bridge offers it, else the
 * two-step upload), several at a time (more for small files). Each file can be cancelled and,
 * once failed or cancelled, retried; while the server is away the files wait for it and go on by
 * themselves. The list shows one line of counts and one bar; the per-file rows are folded for a
 * large batch.
 */
import { memo } from 'preact/compat';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { filesErrorText, listFolder, newFolder } from '../api/files.js';
import { chooseUploader, roomAt, SMALL_FILE, type Room, type Target, type Uploader, type UploadJob } from '../api/uploader.js';
import { t } from '../strings/index.js';
import { FilesDialog } from './files-dialog.js';
import { usageChanged } from './usage.js';

export type { Target } from '../api/uploader.js';

export interface Picked {
  file: File;
  /** The folders it lies in, below the folder uploaded into. */
  dirs: string[];
}

export interface PickedBatch {
  files: Picked[];
  /** Every folder of the batch, empty ones too, as paths below the folder uploaded into. */
  folders: string[][];
}

/** A folder picker's files: each with webkitRelativePath `top/sub/name`. */
export function fromInput(list: FileList): PickedBatch {
  const files = [...list].map((file) => ({ file, dirs: (file.webkitRelativePath || file.name).split('/').slice(0, -1) }));
  return { files, folders: foldersOf(files) };
}

function foldersOf(files: readonly Picked[]): string[][] {
  const seen = new Map<string, string[]>();
  for (const { dirs } of files) for (let n = 1; n <= dirs.length; n += 1) seen.set(dirs.slice(0, n).join('/'), dirs.slice(0, n));
  return [...seen.values()];
}

function readAll(reader: FileSystemDirectoryReader): Promise<FileSystemEntry[]> {
  // readEntries answers in batches (100 in Chromium) until an empty one.
  return new Promise((resolve, reject) => {
    const all: FileSystemEntry[] = [];
    const next = () =>
      reader.readEntries((batch) => {
        if (batch.length === 0) resolve(all);
        else {
          all.push(...batch);
          next();
        }
      }, reject);
    next();
  });
}

async function walk(entry: FileSystemEntry, dirs: string[], batch: PickedBatch): Promise<void> {
  if (entry.isFile) {
    const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
    batch.files.push({ file, dirs });
  } else if (entry.isDirectory) {
    const path = [...dirs, entry.name];
    batch.folders.push(path);
    for (const child of await readAll((entry as FileSystemDirectoryEntry).createReader())) await walk(child, path, batch);
  }
}

/** A drop's files and folders; the entries must be taken during the drop event, so this is called there. */
export function fromDrop(transfer: DataTransfer): Promise<PickedBatch> {
  const entries = [...transfer.items].filter((item) => item.kind === 'file').map((item) => item.webkitGetAsEntry?.() ?? null);
  if (entries.length === 0 || entries.some((e) => e === null)) {
    const files = [...transfer.files].map((file) => ({ file, dirs: [] }));
    return Promise.resolve({ files, folders: [] });
  }
  const batch: PickedBatch = { files: [], folders: [] };
  return entries.reduce((done: Promise<void>, entry) => done.then(() => walk(entry as FileSystemEntry, [], batch)), Promise.resolve()).then(() => batch);
}

export type TaskState = 'queued' | 'uploading' | 'waiting-server' | 'done' | 'failed' | 'cancelled' | 'skipped';

export interface Task {
  id: number;
  label: string;
  size: number;
  sent: number;
  state: TaskState;
  /** The batch it came in (the summary line is a batch's). */
  batch: number;
  error?: string;
  /** Sent again from its start when the server answers (the two-step upload cannot resume). */
  resend?: boolean;
  tus?: boolean;
}

/** Files in flight at once: small files are mostly round trips, so more of them (a browser opens six connections a host). */
const PARALLEL_LARGE = 3;
const PARALLEL_SMALL = 6;
/** Batches up to this many files show their rows unfolded. */
const UNFOLDED = 20;
/** How often the list is drawn again while files move (a 2,000-file batch would otherwise draw on every progress event). */
const DRAW_MS = 150;

export type ConflictAnswer = 'replace' | 'keep-both' | 'skip';
export interface Question {
  name: string;
  other: string;
  answer(choice: ConflictAnswer, all: boolean): void;
}

/** `name (1).ext`, `name (2).ext`...: the first not in `taken`. */
export function keepBothName(name: string, taken: ReadonlySet<string>): string {
  const dot = name.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  for (let n = 1; ; n += 1) {
    const candidate = `${stem} (${n})${ext}`;
    if (!taken.has(candidate)) return candidate;
  }
}

interface Live {
  job: UploadJob;
  uploader: Uploader;
  controller: AbortController;
  target: Target;
}

export function useUploads(onFinished: () => void) {
  const [tasks, setTasks] = useState<Task[]>([]);
  const [summary, setSummary] = useState<string | undefined>();
  const [question, setQuestion] = useState<Question | undefined>();
  const nextId = useRef(0);
  const all = useRef<Task[]>([]);
  const lives = useRef(new Map<number, Live>());
  const drawTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(drawTimer.current), []);

  const draw = (now = false) => {
    if (now) {
      clearTimeout(drawTimer.current);
      drawTimer.current = undefined;
      setTasks([...all.current]);
    } else if (drawTimer.current === undefined) {
      drawTimer.current = setTimeout(() => {
        drawTimer.current = undefined;
        setTasks([...all.current]);
      }, DRAW_MS);
    }
  };
  const update = (id: number, change: Partial<Task>, now = false) => {
    all.current = all.current.map((task) => (task.id === id ? { ...task, ...change } : task));
    draw(now || change.state !== undefined);
  };
  const stateOf = (id: number) => all.current.find((task) => task.id === id)?.state;

  /** The folder uuid for each path of the batch, made where missing (an existing one is used), and which were made now (empty). */
  const makeFolders = async (root: string, folders: string[][]): Promise<{ ids: Map<string, string>; made: Set<string> }> => {
    const ids = new Map<string, string>([['', root]]);
    const made = new Set<string>();
    const listings = new Map<string, Map<string, string>>();
    const childId = async (parent: string, name: string): Promise<string | undefined> => {
      let listing = listings.get(parent);
      if (!listing) {
        listing = new Map((await listFolder(parent)).filter((e) => e.type === 'Dir').map((e) => [e.name, e.uuid]));
        listings.set(parent, listing);
      }
      return listing.get(name);
    };
    for (const path of [...folders].sort((a, b) => a.length - b.length)) {
      const parent = ids.get(path.slice(0, -1).join('/'));
      const name = path[path.length - 1];
      if (parent === undefined || name === undefined) continue;
      // In a folder made now, nothing is there yet to look for.
      let id = made.has(parent) ? undefined : await childId(parent, name);
      if (!id) {
        let fresh = true;
        try {
          await newFolder(parent, name);
        } catch (err) {
          if (!(err instanceof ApiError && err.code === 'name_conflict')) throw err;
          fresh = false;
        }
        listings.delete(parent);
        id = await childId(parent, name);
        if (id && fresh) made.add(id);
      }
      if (id) ids.set(path.join('/'), id);
    }
    return { ids, made };
  };

  const ask = (name: string, other: string) =>
    new Promise<{ choice: ConflictAnswer; all: boolean }>((resolve) =>
      setQuestion({
        name,
        other,
        answer: (choice, applyAll) => {
          setQuestion(undefined);
          resolve({ choice, all: applyAll });
        },
      }),
    );

  /** How often a file refused for room it has once the others end (see run) is sent again. */
  const ROOM_RETRIES = 4;

  /** A 507 or a file that cannot fit, in words: what it needs and what the drive has left. */
  const roomText = (size: number, room: Room | undefined, left = room?.room ?? 0) => (room && room.quota > 0 ? t.uploads.noRoom(size, left, room.quota) : t.files.quotaExceeded);

  /** Sends one file by its batch's uploader; the outcome goes into its task. */
  const run = async (id: number): Promise<boolean> => {
    const live = lives.current.get(id);
    if (!live || stateOf(id) !== 'queued') return false;
    update(id, { state: 'uploading', sent: 0, error: undefined, tus: live.uploader.resumable });
    for (let refusals = 0; ; refusals += 1) {
      try {
        await live.uploader.send(
          live.job,
          {
            progress: (sent) => update(id, { sent }),
            waiting: (on, resend) => update(id, on ? { state: 'waiting-server', resend } : { state: 'uploading', resend: undefined }),
          },
          live.controller.signal,
        );
        update(id, { state: 'done', sent: live.job.file.size });
        return true;
      } catch (err) {
        if (live.controller.signal.aborted || (err instanceof ApiError && err.code === 'cancelled')) update(id, { state: 'cancelled', sent: 0, resend: undefined });
        else if (err instanceof ApiError && err.code === 'quota_exceeded') {
          const room = await roomAt(live.target).catch(() => undefined);
          // The store counts the bytes of uploads still under way (its reservations): near the
          // quota, a file this page sends beside others may be refused while the drive has room
          // for it once they end. Sent again after they had time to, a few times; then final.
          if (room && room.room >= live.job.file.size && refusals < ROOM_RETRIES && !live.controller.signal.aborted) {
            await new Promise((resolve) => setTimeout(resolve, 300 * (refusals + 1)));
            update(id, { state: 'uploading', sent: 0 });
            continue;
          }
          update(id, { state: 'failed', sent: 0, error: roomText(live.job.file.size, room) });
        } else update(id, { state: 'failed', error: filesErrorText(err), resend: undefined });
        return false;
      }
    }
  };

  const finish = (batch: number) => {
    const counts = { ok: 0, failed: 0, other: 0, open: 0 };
    for (const task of all.current) {
      if (task.batch !== batch) continue;
      if (task.state === 'done') counts.ok += 1;
      else if (task.state === 'failed') counts.failed += 1;
      else if (task.state === 'skipped' || task.state === 'cancelled') counts.other += 1;
      else counts.open += 1;
    }
    draw(true);
    if (counts.open === 0) setSummary(t.uploads.finished(counts.ok, counts.failed, counts.other));
    usageChanged();
    onFinished();
  };

  const start = async (batch: PickedBatch, target: Target) => {
    if (batch.files.length === 0 && batch.folders.length === 0) return;
    setSummary(undefined);
    const mine = batch.files.map((picked) => ({ picked, id: (nextId.current += 1) }));
    const number = mine[0]?.id ?? 0;
    all.current = [...all.current, ...mine.map(({ picked, id }) => ({ id, batch: number, label: [...picked.dirs, picked.file.name].join('/'), size: picked.file.size, sent: 0, state: 'queued' as const }))];
    draw(true);
    const fail = (ids: readonly number[], error: string) => {
      for (const id of ids) update(id, { state: 'failed', error });
    };
    try {
      // The quota first, before any byte moves: files that cannot fit are refused now (they can be retried later).
      const room = await roomAt(target).catch(() => undefined);
      let left = room?.room ?? Infinity;
      const refused = new Set<number>();
      for (const { picked, id } of mine) {
        if (picked.file.size > left) {
          refused.add(id);
          update(id, { state: 'failed', error: roomText(picked.file.size, room, left) }, true);
        } else left -= picked.file.size;
      }
      let folders: Awaited<ReturnType<typeof makeFolders>>;
      let uploader: Uploader;
      try {
        [folders, uploader] = await Promise.all([makeFolders(target.folder, batch.folders), chooseUploader(target)]);
      } catch (err) {
        fail(
          mine.filter((m) => !refused.has(m.id)).map((m) => m.id),
          filesErrorText(err),
        );
        return;
      }
      // Names already in each folder (none in a folder made now), and the question where one is taken.
      const names = new Map<string, Set<string>>();
      const namesIn = async (folder: string) => {
        let set = names.get(folder);
        if (!set) {
          set = folders.made.has(folder) ? new Set() : new Set((await listFolder(folder)).map((e) => e.name));
          names.set(folder, set);
        }
        return set;
      };
      let always: ConflictAnswer | undefined;
      const queue: number[] = [];
      for (const { picked, id } of mine) {
        const folder = folders.ids.get(picked.dirs.join('/'));
        if (folder === undefined) {
          fail([id], t.files.notFound);
          continue;
        }
        let name = picked.file.name;
        const live = (): Live => ({ job: { file: picked.file, name, dirs: picked.dirs, folder }, uploader, controller: new AbortController(), target });
        if (refused.has(id)) {
          lives.current.set(id, live());
          continue;
        }
        let taken: Set<string>;
        try {
          taken = await namesIn(folder);
        } catch (err) {
          fail([id], filesErrorText(err));
          continue;
        }
        if (taken.has(name)) {
          const other = keepBothName(name, taken);
          const choice = always ?? (await ask(name, other).then((a) => ((always = a.all ? a.choice : undefined), a.choice)));
          if (choice === 'skip') {
            update(id, { state: 'skipped' }, true);
            continue;
          }
          if (choice === 'keep-both') {
            name = other;
            update(id, { label: [...picked.dirs, name].join('/') });
          }
        }
        taken.add(name);
        lives.current.set(id, live());
        queue.push(id);
      }
      const small = queue.filter((id) => (lives.current.get(id)?.job.file.size ?? 0) <= SMALL_FILE).length;
      // Small files by bulk upload (api/uploader.ts bulkUploader): many handed over at once, sent together.
      const parallel = small * 2 > queue.length ? (uploader.smallAtOnce ?? PARALLEL_SMALL) : PARALLEL_LARGE;
      const worker = async () => {
        for (let id = queue.shift(); id !== undefined; id = queue.shift()) await run(id);
      };
      await Promise.all(Array.from({ length: Math.min(parallel, Math.max(1, queue.length)) }, worker));
    } finally {
      finish(number);
    }
  };

  const cancel = (id: number) => {
    const live = lives.current.get(id);
    if (!live) return;
    if (stateOf(id) === 'queued') update(id, { state: 'cancelled' });
    live.controller.abort();
  };

  const retry = async (id: number) => {
    const live = lives.current.get(id);
    const state = stateOf(id);
    if (state !== 'failed' && state !== 'cancelled') return;
    if (!live) return;
    setSummary(undefined);
    live.controller = new AbortController();
    update(id, { state: 'queued', error: undefined, sent: 0 });
    await run(id);
    finish(all.current.find((task) => task.id === id)?.batch ?? 0);
  };

  const retryFailed = () => {
    for (const task of all.current) if (task.state === 'failed' && lives.current.has(task.id)) void retry(task.id);
  };

  const clear = () => {
    all.current = all.current.filter((task) => task.state !== 'done' && task.state !== 'skipped' && task.state !== 'cancelled');
    for (const id of [...lives.current.keys()]) if (!all.current.some((task) => task.id === id)) lives.current.delete(id);
    draw(true);
  };
  return { tasks, summary, question, start, clear, cancel, retry, retryFailed };
}

export type Uploads = ReturnType<typeof useUploads>;

const stateText = (task: Task): string => {
  switch (task.state) {
    case 'done':
      return t.files.uploadDone;
    case 'failed':
      return t.files.uploadFailed(task.error ?? '');
    case 'uploading':
      return t.files.uploading;
    case 'waiting-server':
      return task.resend ? t.uploads.waitingServerResend : t.uploads.waitingServer;
    case 'cancelled':
      return t.uploads.cancelled;
    case 'skipped':
      return t.uploads.skipped;
    default:
      return t.files.uploadWaiting;
  }
};

const Row = memo(function Row({ task, onCancel, onRetry }: { task: Task; onCancel: (id: number) => void; onRetry: (id: number) => void }) {
  const bad = task.state === 'failed';
  const open = task.state === 'queued' || task.state === 'uploading' || task.state === 'waiting-server';
  return (
    <li class={bad ? 'files-upload-failed' : undefined}>
      <span class="files-upload-name">{task.label}</span>
      <progress aria-label={t.files.fileProgress(task.label)} max={Math.max(task.size, 1)} value={task.state === 'done' ? Math.max(task.size, 1) : Math.min(task.sent, task.size)} />
      <span class={bad ? 'error' : task.state === 'waiting-server' ? 'files-upload-waiting' : 'files-upload-state'}>
        {stateText(task)}
        {task.tus && task.state !== 'failed' ? ` (${t.files.resumable})` : ''}
      </span>
      {open && (
        <button type="button" class="secondary files-upload-action" aria-label={t.uploads.cancel(task.label)} onClick={() => onCancel(task.id)}>
          {t.uploads.cancelLabel}
        </button>
      )}
      {(bad || task.state === 'cancelled') && (
        <button type="button" class="secondary files-upload-action" aria-label={t.uploads.retry(task.label)} onClick={() => onRetry(task.id)}>
          {t.uploads.retryLabel}
        </button>
      )}
    </li>
  );
});

export function UploadList({ uploads }: { uploads: Uploads }) {
  const { tasks, summary, question } = uploads;
  const [unfolded, setUnfolded] = useState<boolean | undefined>();
  const [applyAll, setApplyAll] = useState(false);
  const dialog = question && (
    <FilesDialog title={t.uploads.conflictTitle} onClose={() => question.answer('skip', false)}>
      <p>{t.uploads.conflictText(question.name)}</p>
      <p class="files-conflict-all">
        <label>
          <input type="checkbox" checked={applyAll} onChange={(event) => setApplyAll((event.currentTarget as HTMLInputElement).checked)} /> {t.uploads.applyToAll}
        </label>
      </p>
      <div class="files-conflict-answers">
        <button type="button" onClick={() => question.answer('replace', applyAll)}>
          {t.uploads.replace}
        </button>
        <button type="button" onClick={() => question.answer('keep-both', applyAll)}>
          {t.uploads.keepBoth(question.other)}
        </button>
        <button type="button" class="secondary" onClick={() => question.answer('skip', applyAll)}>
          {t.uploads.skip}
        </button>
      </div>
    </FilesDialog>
  );
  if (tasks.length === 0)
    return (
      <>
        <p role="status">{summary ?? ''}</p>
        {dialog}
      </>
    );
  const counts = { done: 0, failed: 0, waiting: 0, active: 0, queued: 0, skipped: 0, cancelled: 0 };
  let total = 0;
  let sent = 0;
  for (const task of tasks) {
    if (task.state === 'skipped' || task.state === 'cancelled') {
      counts[task.state] += 1;
      continue;
    }
    total += task.size;
    sent += task.state === 'done' ? task.size : task.state === 'failed' ? 0 : task.sent;
    if (task.state === 'done') counts.done += 1;
    else if (task.state === 'failed') counts.failed += 1;
    else if (task.state === 'waiting-server') counts.waiting += 1;
    else if (task.state === 'uploading') counts.active += 1;
    else counts.queued += 1;
  }
  const considered = tasks.length - counts.skipped - counts.cancelled;
  const open = unfolded ?? tasks.length <= UNFOLDED;
  return (
    <section class="files-uploads" aria-labelledby="files-uploads-heading">
      <h2 id="files-uploads-heading">{t.files.uploads}</h2>
      {/* A live line: a screen reader hears each file finish, not only the batch's end. */}
      <p id="files-overall" role="status">
        {t.files.overall(counts.done, considered)}
        {' – '}
        <span class={counts.failed > 0 ? 'error' : undefined}>{t.uploads.counts(counts)}</span>
      </p>
      <progress aria-label={t.files.overallLabel} aria-describedby="files-overall" max={Math.max(total, 1)} value={total === 0 ? (counts.done === considered ? 1 : 0) : sent} />
      {counts.waiting > 0 && (
        <p class="notice files-upload-waiting" role="alert">
          {t.uploads.waitingNotice}
        </p>
      )}
      <details open={open} onToggle={(event) => setUnfolded((event.currentTarget as HTMLDetailsElement).open)}>
        <summary>{t.uploads.eachFile(tasks.length)}</summary>
        {open && (
          <ul>
            {tasks.map((task) => (
              <Row key={task.id} task={task} onCancel={uploads.cancel} onRetry={(id) => void uploads.retry(id)} />
            ))}
          </ul>
        )}
      </details>
      <p role="status">{summary ?? ''}</p>
      <div class="files-upload-actions">
        {counts.failed > 0 && (
          <button type="button" class="secondary" onClick={uploads.retryFailed}>
            {t.uploads.retryFailed}
          </button>
        )}
        <button type="button" class="secondary" onClick={uploads.clear}>
          {t.files.clearUploads}
        </button>
      </div>
      {dialog}
    </section>
  );
}
