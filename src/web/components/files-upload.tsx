/**
 * Uploads of the file browser: what a picker or a drop gives (files, and folders with their
 * trees: webkitRelativePath of a folder picker, DataTransferItem.webkitGetAsEntry of a drop)
 * becomes a list of files with their folder path; the folders are made first (new_dir, or the
 * one already there), then the files go three at a time, by tus to the bridge when it offers
 * it (resumable), else by the two-step upload; each file has its progress bar, and one bar
 * shows all of them together.
 */
import { useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { bridgeFolderUrl, filesErrorText, listFolder, newFolder, offersTus, uploadTus, uploadTwoStep, webdrive, type GroupEntry, type PathEntry } from '../api/files.js';
import { t } from '../strings/index.js';

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

export interface Task {
  id: number;
  label: string;
  size: number;
  sent: number;
  state: 'waiting' | 'uploading' | 'done' | 'failed';
  error?: string;
  tus?: boolean;
}

const PARALLEL = 3;

/** Where a batch goes: the folder open now, its breadcrumb (for the bridge path) and the caller's groups. */
export interface Target {
  folder: string;
  crumbs: readonly PathEntry[];
  groups: readonly GroupEntry[];
}

export function useUploads(onFinished: () => void) {
  const [tasks, setTasks] = useState<Task[]>([]);
  const [summary, setSummary] = useState<string | undefined>();
  const nextId = useRef(0);
  const running = useRef(0);

  const update = (id: number, change: Partial<Task>) => setTasks((all) => all.map((task) => (task.id === id ? { ...task, ...change } : task)));

  /** The folder uuid for each path of the batch, made where missing (an existing one is used). */
  const makeFolders = async (root: string, folders: string[][]): Promise<Map<string, string>> => {
    const ids = new Map<string, string>([['', root]]);
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
      let id = await childId(parent, name);
      if (!id) {
        try {
          await newFolder(parent, name);
        } catch (err) {
          if (!(err instanceof ApiError && err.code === 'name_conflict')) throw err;
        }
        listings.delete(parent);
        id = await childId(parent, name);
      }
      if (id) ids.set(path.join('/'), id);
    }
    return ids;
  };

  const start = async (batch: PickedBatch, target: Target) => {
    if (batch.files.length === 0 && batch.folders.length === 0) return;
    setSummary(undefined);
    const mine = batch.files.map((picked) => ({ picked, task: { id: (nextId.current += 1), label: [...picked.dirs, picked.file.name].join('/'), size: picked.file.size, sent: 0, state: 'waiting' as const } }));
    setTasks((all) => [...all, ...mine.map((m) => m.task)]);
    running.current += 1;
    let ok = 0;
    let failed = 0;
    try {
      let ids: Map<string, string>;
      try {
        ids = await makeFolders(target.folder, batch.folders);
      } catch (err) {
        const why = filesErrorText(err);
        for (const { task } of mine) update(task.id, { state: 'failed', error: why });
        failed = mine.length;
        return;
      }
      // tus when the bridge offers it for this folder, asked once per batch.
      const rootUrl = await webdrive().then((w) => w?.root_url, () => undefined);
      const base = rootUrl ? bridgeFolderUrl(rootUrl, target.crumbs, target.groups) : undefined;
      let tus = base ? await offersTus(base) : false;
      const queue = [...mine];
      const worker = async () => {
        for (let item = queue.shift(); item; item = queue.shift()) {
          const { picked, task } = item;
          update(task.id, { state: 'uploading', tus });
          const progress = (sent: number) => update(task.id, { sent });
          try {
            const folder = ids.get(picked.dirs.join('/'));
            if (folder === undefined) throw new ApiError(404, 'not_found', '');
            let viaTus = tus && base !== undefined;
            if (viaTus && base) {
              try {
                await uploadTus(base + picked.dirs.map((d) => `${encodeURIComponent(d)}/`).join(''), picked.file, progress);
              } catch {
                // The bridge advertised tus but refused this page's upload (its credentials,
                // its CORS for this origin): the two-step upload instead, for the rest too.
                tus = false;
                viaTus = false;
                update(task.id, { tus: false, sent: 0 });
              }
            }
            if (!viaTus) await uploadTwoStep(folder, picked.file, progress);
            update(task.id, { state: 'done', sent: task.size });
            ok += 1;
          } catch (err) {
            update(task.id, { state: 'failed', error: filesErrorText(err) });
            failed += 1;
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(PARALLEL, Math.max(1, mine.length)) }, worker));
    } finally {
      running.current -= 1;
      setSummary(t.files.uploadsFinished(ok, failed));
      onFinished();
    }
  };

  const clear = () => setTasks((all) => all.filter((task) => task.state !== 'done'));
  return { tasks, summary, start, clear };
}

export function UploadList({ tasks, summary, onClear }: { tasks: readonly Task[]; summary: string | undefined; onClear: () => void }) {
  if (tasks.length === 0) return <p role="status">{summary ?? ''}</p>;
  const total = tasks.reduce((sum, task) => sum + task.size, 0);
  const sent = tasks.reduce((sum, task) => sum + (task.state === 'done' ? task.size : task.sent), 0);
  const done = tasks.filter((task) => task.state === 'done').length;
  return (
    <section class="files-uploads" aria-labelledby="files-uploads-heading">
      <h2 id="files-uploads-heading">{t.files.uploads}</h2>
      {/* A live line: a screen reader hears each file finish, not only the batch's end. */}
      <p id="files-overall" role="status">
        {t.files.overall(done, tasks.length)}
      </p>
      <progress aria-label={t.files.overallLabel} aria-describedby="files-overall" max={Math.max(total, 1)} value={total === 0 ? (done === tasks.length ? 1 : 0) : sent} />
      <ul>
        {tasks.map((task) => (
          <li key={task.id}>
            <span class="files-upload-name">{task.label}</span>
            <progress aria-label={t.files.fileProgress(task.label)} max={Math.max(task.size, 1)} value={task.state === 'done' ? Math.max(task.size, 1) : Math.min(task.sent, task.size)} />
            <span class={task.state === 'failed' ? 'error' : 'files-upload-state'}>
              {task.state === 'done' ? t.files.uploadDone : task.state === 'failed' ? t.files.uploadFailed(task.error ?? '') : task.state === 'uploading' ? t.files.uploading : t.files.uploadWaiting}
              {task.tus ? ` (${t.files.resumable})` : ''}
            </span>
          </li>
        ))}
      </ul>
      <p role="status">{summary ?? ''}</p>
      <button type="button" class="secondary" onClick={onClear}>
        {t.files.clearUploads}
      </button>
    </section>
  );
}
