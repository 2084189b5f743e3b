/**
 * Files (issue 24, item 4): `/files` is the caller's home, `/files/<id>` any folder they may list
 * (a node UUID, or a top-level id such as `home:<group>` for a group drive or `shared_with_you`).
 * A drive switcher (Home, each group drive the caller may read: GET /api/groups, "Shared with
 * me", the copies accepted from others in Incoming), the breadcrumb (GET .../path), the listing (GET .../dirlist) sorted by name, size or
 * modification time with folders first, drawn as a windowed table (components/files-window.tsx).
 * What may be done follows GET .../myaccess of the folder open: a read-only group member gets no
 * upload, new folder, rename, move or delete (the store would refuse them anyway), and Share only
 * with a share permission of the group (GET /api/groups); in the derived listings (favorites,
 * shared with me, ...) nothing is written into the folder itself.
 * Details, revisions and previews live on `/item/<uuid>`, sharing on `/share/<uuid>`, the trash
 * on `/trash`: this page links there.
 * Bulk work (issue 31 item 8): a checkbox per row (Shift+click selects a range, the header's box
 * all rows shown), and from the keyboard Space toggles, Shift+Up/Down extend, Ctrl/Cmd+A selects
 * all (focus in the list), Escape clears; the selection's toolbar moves, copies, trashes (one
 * action, api/bulk.ts runs its requests, then says what worked and what failed) or downloads
 * it as one zip. A filter box narrows the rows shown by name, and below them lists the matches in
 * all the caller's drives (the store's search extension, the query SEARCH answers from).
 */
import type { JSX } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { eachLimited, zipUrl, ZIP_MAX_NODES } from '../api/bulk.js';
import { ApiError } from '../api/client.js';
import { useResource } from '../api/use-resource.js';
import { copyTo, downloadUrl, filesErrorText, folderPath, listFolder, moveTo, myAccess, myGroups, newFolder, ownerOf, rename, searchDrives, setStar, toTrash, type Access, type Entry, type GroupEntry, type PathEntry, type SearchHit } from '../api/files.js';
import { Field } from '../components/field.js';
import { FilesDialog } from '../components/files-dialog.js';
import { FilesPicker } from '../components/files-picker.js';
import { fromDrop, fromInput, UploadList, useUploads } from '../components/files-upload.js';
import { FilesWindow, WINDOW_PAST } from '../components/files-window.js';
import { usageChanged } from '../components/usage.js';
import { FileThumb } from '../components/file-thumb.js';
import { Page } from '../components/page.js';
import { BulkFailures, type BulkFailure } from '../components/bulk-failures.js';
import { Link, pathRest, useLocation } from '../router.js';
import { t } from '../strings/index.js';

const DERIVED = new Set(['favorites', 'public_shares', 'private_shares', 'shared_with_you']);

type SortKey = 'name' | 'size' | 'updated';

interface Loaded {
  entries: Entry[];
  crumbs: PathEntry[];
  access: Access;
}

/** A folder's listing, path and access; `missing` for one that is not there or not the caller's to see. */
async function loadFolder(folder: string): Promise<Loaded | { missing: true }> {
  try {
    const [entries, crumbs, access] = await Promise.all([listFolder(folder), folderPath(folder), myAccess(folder).catch(() => ['read'] as Access)]);
    return { entries, crumbs, access };
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 403 || err.code === 'not_a_folder')) return { missing: true };
    throw err;
  }
}

/** What bulk work the selection toolbar started: a verb for the summary. */
type BulkVerb = 'moved' | 'copied' | 'trashed';

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

function sorted(entries: readonly Entry[], key: SortKey, ascending: boolean): Entry[] {
  const sign = ascending ? 1 : -1;
  return [...entries].sort((a, b) => {
    if (a.type !== b.type) return a.type === 'Dir' ? -1 : 1;
    const by = key === 'name' ? collator.compare(a.name, b.name) : key === 'size' ? a.size - b.size : a.updated - b.updated;
    return sign * (by || collator.compare(a.name, b.name));
  });
}

function topLevelName(crumb: PathEntry, groups: readonly GroupEntry[]): string {
  const [top] = crumb.uuid.split(':', 1);
  const owner = ownerOf(crumb.uuid);
  const group = owner ? groups.find((g) => g.group_uuid === owner) : undefined;
  const label = t.files.topLevel[top ?? ''] ?? crumb.name;
  return group ? (top === 'home' ? group.group_name : `${group.group_name}: ${label}`) : label;
}

// One formatter for every row: toLocaleString would build one per call, per row drawn while scrolling.
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
const when = (ms: number) => dateFormat.format(ms);

type Dialog = { kind: 'actions' | 'rename' | 'move' | 'copy'; entry: Entry } | { kind: 'bulk-move' | 'bulk-copy'; entries: Entry[] } | undefined;

function RenameForm({ entry, onDone, onClose }: { entry: Entry; onDone: (name: string) => void; onClose: () => void }) {
  const [name, setName] = useState(entry.name);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const save = async (event: Event) => {
    event.preventDefault();
    if (name.trim() === '') return setError(t.files.nameMissing);
    setBusy(true);
    setError(undefined);
    try {
      await rename(entry.uuid, name);
      onDone(name);
    } catch (err) {
      setError(err instanceof ApiError && err.code === 'name_conflict' ? t.files.conflict(name) : filesErrorText(err));
      setBusy(false);
    }
  };
  return (
    <FilesDialog title={t.files.renameTitle(entry.name)} onClose={onClose}>
      <form onSubmit={save} noValidate>
        <Field id="files-rename" label={t.files.newName} value={name} onValue={setName} error={error} required />
        <div class="actions">
          <button type="submit" disabled={busy}>
            {t.files.rename}
          </button>
          <button type="button" class="secondary" onClick={onClose}>
            {t.files.cancel}
          </button>
        </div>
      </form>
    </FilesDialog>
  );
}

function NewFolderForm({ parent, onDone }: { parent: string; onDone: (name: string) => void }) {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  if (!open)
    return (
      <button type="button" class="secondary" onClick={() => setOpen(true)}>
        {t.files.newFolder}
      </button>
    );
  const create = async (event: Event) => {
    event.preventDefault();
    if (name.trim() === '') return setError(t.files.nameMissing);
    setBusy(true);
    setError(undefined);
    try {
      await newFolder(parent, name);
      setName('');
      setOpen(false);
      onDone(name);
    } catch (err) {
      setError(err instanceof ApiError && err.code === 'name_conflict' ? t.files.conflict(name) : filesErrorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="files-new-folder" onSubmit={create} noValidate>
      <Field id="files-new-folder" label={t.files.newFolderName} value={name} onValue={setName} error={error} required autoFocus />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {t.files.create}
        </button>
        <button type="button" class="secondary" onClick={() => setOpen(false)}>
          {t.files.cancel}
        </button>
      </div>
    </form>
  );
}

export function Files() {
  const { path } = useLocation();
  const folder = path === '/files' || path === '/files/' ? 'home' : pathRest(path, '/files/');
  const listing = useResource(() => loadFolder(folder), [folder]);
  const groups = useResource(() => myGroups().catch((): GroupEntry[] => []), []).data ?? [];
  const loaded = listing.data && !('missing' in listing.data) ? listing.data : undefined;
  const failure = listing.error ? { notFound: false, text: listing.error } : listing.data && 'missing' in listing.data ? { notFound: true, text: t.files.notFound } : undefined;
  const [sort, setSort] = useState<{ key: SortKey; ascending: boolean }>({ key: 'name', ascending: true });
  const [dialog, setDialog] = useState<Dialog>();
  const [message, setMessage] = useState<{ text: string; trash?: boolean } | undefined>();
  const [rowError, setRowError] = useState<{ name: string; text: string } | undefined>();
  const [deleteError, setDeleteError] = useState<string | undefined>();
  const [dragging, setDragging] = useState(false);
  const reload = () => void listing.refresh();
  const uploads = useUploads(reload);
  const [filter, setFilter] = useState('');
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [anchor, setAnchor] = useState<number | undefined>();
  const [progress, setProgress] = useState<string | undefined>();
  const [failures, setFailures] = useState<BulkFailure[]>([]);

  // Another folder: nothing selected, no filter, no report of the last one's work.
  useEffect(() => {
    setSelected(new Set());
    setAnchor(undefined);
    setFilter('');
    setFailures([]);
  }, [folder]);

  const all = useMemo(() => (loaded ? sorted(loaded.entries, sort.key, sort.ascending) : []), [loaded, sort]);
  const rows = useMemo(() => {
    const needle = filter.trim().toLocaleLowerCase();
    return needle === '' ? all : all.filter((e) => e.name.toLocaleLowerCase().includes(needle));
  }, [all, filter]);
  const elsewhere = useDriveSearch(filter, folder);
  const chosen = rows.filter((e) => selected.has(e.uuid));
  const top = loaded?.crumbs[0]?.uuid ?? folder;
  const topName = top.split(':', 1)[0] ?? '';
  const derived = DERIVED.has(topName) && loaded?.crumbs.length === 1;
  const access = loaded?.access ?? [];
  const canWrite = access.includes('write') && !derived && topName !== 'trash';
  const canDelete = access.includes('delete') && !derived && topName !== 'trash';
  const canDownload = access.includes('download') || derived;
  // In a group drive, sharing is what the membership's share permissions allow (a link or a share).
  const driveGroup = groups.find((g) => g.group_uuid === ownerOf(top));
  const canShare = !derived && (driveGroup ? driveGroup.share_permissions.some((p) => p.endsWith('_create')) : true);
  const here = loaded?.crumbs[loaded.crumbs.length - 1];
  const title = here ? (loaded.crumbs.length === 1 ? topLevelName(here, groups) : here.name) : t.files.title;
  const drive = ownerOf(top) ? top : topName === 'shared_with_you' || topName === 'incoming' ? topName : 'home';

  /** A row's box chosen: toggles it (the anchor of a range), or with Shift selects from the anchor to it. */
  const choose = (index: number, range: boolean) => {
    const entry = rows[index];
    if (!entry) return;
    const next = new Set(selected);
    if (range && anchor !== undefined) {
      for (let i = Math.min(anchor, index); i <= Math.max(anchor, index); i += 1) next.add((rows[i] as Entry).uuid);
    } else {
      if (next.has(entry.uuid)) next.delete(entry.uuid);
      else next.add(entry.uuid);
      setAnchor(index);
    }
    setSelected(next);
  };
  const selectAll = (on: boolean) => setSelected(on ? new Set(rows.map((e) => e.uuid)) : new Set());
  const onListKey = (event: KeyboardEvent) => {
    const target = event.target as HTMLElement;
    const index = Number(target.dataset.index ?? NaN);
    if ((event.key === 'a' || event.key === 'A') && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      selectAll(true);
    } else if (event.key === 'Escape' && selected.size > 0) {
      selectAll(false);
    } else if ((event.key === 'ArrowDown' || event.key === 'ArrowUp') && Number.isInteger(index)) {
      event.preventDefault();
      const to = Math.max(0, Math.min(rows.length - 1, index + (event.key === 'ArrowDown' ? 1 : -1)));
      if (event.shiftKey) {
        const from = anchor ?? index;
        if (anchor === undefined) setAnchor(index);
        const next = new Set(selected);
        for (let i = Math.min(from, to); i <= Math.max(from, to); i += 1) next.add((rows[i] as Entry).uuid);
        setSelected(next);
      }
      document.getElementById(`files-select-${to}`)?.focus();
    }
  };

  /** One action over several entries: their requests (api/bulk.ts), then what worked and what failed, in words. */
  const runBulk = async (entries: readonly Entry[], verb: BulkVerb, work: (entry: Entry) => Promise<unknown>, where?: string) => {
    setFailures([]);
    setMessage(undefined);
    setProgress(t.bulk.working(0, entries.length));
    const outcome = await eachLimited(entries, work, (done) => setProgress(t.bulk.working(done, entries.length)), filesErrorText);
    setProgress(undefined);
    setMessage({ text: t.bulk.summary(verb, outcome.ok.length, outcome.failed.length, where), trash: verb === 'trashed' && outcome.ok.length > 0 });
    setFailures(outcome.failed.map((f) => ({ name: f.item.name, why: f.why })));
    // What failed stays selected, to try again.
    setSelected(new Set(outcome.failed.map((f) => f.item.uuid)));
    setAnchor(undefined);
    reload();
  };

  const star = async (entry: Entry) => {
    setRowError(undefined);
    try {
      await setStar(entry.uuid, !entry.is_starred);
      reload();
    } catch (err) {
      setRowError({ name: entry.name, text: filesErrorText(err) });
    }
  };

  const target = { folder, crumbs: loaded?.crumbs ?? [], groups };
  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    if (!canWrite || !event.dataTransfer) return;
    void fromDrop(event.dataTransfer).then((batch) => uploads.start(batch, target));
  };
  const dragProps: JSX.HTMLAttributes<HTMLElement> = canWrite
    ? {
        onDragOver: (event: DragEvent) => {
          event.preventDefault();
          if (!dragging) setDragging(true);
        },
        onDragLeave: (event: DragEvent) => {
          if (!(event.currentTarget as HTMLElement).contains(event.relatedTarget as Node | null)) setDragging(false);
        },
        onDrop,
      }
    : {};

  const pickFiles = (folderPicker: boolean) => {
    const input = document.getElementById(folderPicker ? 'files-pick-folder' : 'files-pick-files') as HTMLInputElement | null;
    input?.click();
  };
  const onPicked = (event: Event) => {
    const input = event.currentTarget as HTMLInputElement;
    if (input.files) void uploads.start(fromInput(input.files), target);
    input.value = '';
  };

  const everyShown = rows.length > 0 && chosen.length === rows.length;
  const header = (
    <>
      <th scope="col" class="files-col-select">
        <input
          type="checkbox"
          aria-label={t.bulk.selectAll}
          checked={everyShown}
          ref={(box) => {
            if (box) box.indeterminate = chosen.length > 0 && !everyShown;
          }}
          onClick={() => selectAll(!everyShown)}
        />
      </th>
      {(['name', 'size', 'updated'] as const).map((key) => {
        const label = key === 'name' ? t.files.name : key === 'size' ? t.files.size : t.files.modified;
        const active = sort.key === key;
        const direction = active ? (sort.ascending ? 'ascending' : 'descending') : undefined;
        return (
          <th key={key} scope="col" class={`files-col-${key}`} aria-sort={direction ?? 'none'}>
            <button type="button" class="files-sort" aria-label={t.files.sortBy(label, direction)} onClick={() => setSort({ key, ascending: active ? !sort.ascending : true })}>
              {label}
              <span aria-hidden="true">{active ? (sort.ascending ? ' ▲' : ' ▼') : ''}</span>
            </button>
          </th>
        );
      })}
      <th scope="col" class="files-col-actions">
        {t.files.actionsColumn}
      </th>
    </>
  );

  const renderRow = (entry: Entry, index: number) => (
    <>
      <td class="files-col-select">
        <input type="checkbox" id={`files-select-${index}`} data-index={index} aria-label={t.bulk.selectNamed(entry.name)} checked={selected.has(entry.uuid)} onClick={(event) => choose(index, event.shiftKey)} />
      </td>
      <th scope="row" class="files-col-name">
        <Link href={entry.type === 'Dir' ? `/files/${encodeURIComponent(entry.uuid)}` : `/item/${entry.uuid}`} class={entry.type === 'Dir' ? 'files-name files-dir' : 'files-name files-file'}>
          <FileThumb node={entry} px={64} size={32} />
          <span class="files-name-text">{entry.name}</span>
        </Link>
      </th>
      <td class="files-col-size">{entry.type === 'Dir' ? t.files.folderKind : t.files.bytes(entry.size)}</td>
      <td class="files-col-updated">{when(entry.updated)}</td>
      <td class="files-col-actions">
        <div class="files-row-actions">
          <button type="button" class="files-star secondary" aria-pressed={entry.is_starred} aria-label={entry.is_starred ? t.files.unstar(entry.name) : t.files.star(entry.name)} onClick={() => void star(entry)}>
            <span aria-hidden="true">{entry.is_starred ? '★' : '☆'}</span>
          </button>
          <button type="button" class="secondary files-actions" aria-label={t.files.actionsFor(entry.name)} onClick={() => setDialog({ kind: 'actions', entry })}>
            <span class="files-actions-word">{t.files.actions}</span>
            <span class="files-actions-dots" aria-hidden="true">
              ⋯
            </span>
          </button>
        </div>
      </td>
    </>
  );

  const actionsDialog = (entry: Entry) => {
    const url = entry.type === 'File' && canDownload ? downloadUrl(entry) : undefined;
    const zip = entry.type === 'Dir' && canDownload ? zipUrl([entry.uuid], entry.name) : undefined;
    const close = () => {
      setDeleteError(undefined);
      setDialog(undefined);
    };
    return (
      <FilesDialog title={t.files.actionsFor(entry.name)} onClose={close}>
        <ul class="files-action-list">
          {url && (
            <li>
              <a href={url} download={entry.name} onClick={close}>
                {t.files.download}
              </a>
            </li>
          )}
          {zip && (
            <li>
              <a href={zip} download={`${entry.name}.zip`} onClick={close}>
                {t.bulk.zipFolder}
              </a>
            </li>
          )}
          <li>
            <Link href={`/item/${entry.uuid}`} aria-label={t.files.detailsOf(entry.name)}>
              {t.files.details}
            </Link>
          </li>
          {canShare && (
            <li>
              <Link href={`/share/${entry.uuid}`} aria-label={t.files.shareOf(entry.name)}>
                {t.files.share}
              </Link>
            </li>
          )}
          {canWrite && (
            <li>
              <button type="button" class="secondary" onClick={() => setDialog({ kind: 'rename', entry })}>
                {t.files.rename}
              </button>
            </li>
          )}
          {canWrite && (
            <li>
              <button type="button" class="secondary" onClick={() => setDialog({ kind: 'move', entry })}>
                {t.files.move}
              </button>
            </li>
          )}
          {canDownload && (
            <li>
              <button type="button" class="secondary" onClick={() => setDialog({ kind: 'copy', entry })}>
                {t.files.copy}
              </button>
            </li>
          )}
          {canDelete && (
            <li>
              <button
                type="button"
                class="secondary"
                aria-describedby={deleteError ? 'files-delete-error' : undefined}
                onClick={() => {
                  setDeleteError(undefined);
                  toTrash(entry.uuid).then(
                    () => {
                      close();
                      setMessage({ text: t.files.deleted(entry.name), trash: true });
                      usageChanged();
                      reload();
                    },
                    (err: unknown) => setDeleteError(filesErrorText(err)),
                  );
                }}
              >
                {t.files.delete}
              </button>
              {deleteError && (
                <p class="error" id="files-delete-error" role="alert">
                  {deleteError}
                </p>
              )}
            </li>
          )}
        </ul>
      </FilesDialog>
    );
  };

  const renderDialog = () => {
    if (!dialog) return null;
    const close = () => setDialog(undefined);
    /** Where to move or copy `what` (one entry or the selection) to. */
    const picker = (moving: boolean, title: string, what: Entry | readonly Entry[], onPick: (to: string, where: string) => Promise<void>) => (
      <FilesPicker title={title} action={moving ? t.files.moveHere : t.files.copyHere} moving={what} startDrive={ownerOf(top) ? top : 'home'} groups={groups} onClose={close} onPick={onPick} />
    );
    if ('entries' in dialog) {
      const { entries } = dialog;
      const moving = dialog.kind === 'bulk-move';
      return picker(moving, moving ? t.bulk.moveTitle(entries.length) : t.bulk.copyTitle(entries.length), entries, async (to, where) => {
        close();
        await runBulk(entries, moving ? 'moved' : 'copied', (e) => (moving ? moveTo(e.uuid, to) : copyTo(e.uuid, to)), where);
      });
    }
    const { entry } = dialog;
    if (dialog.kind === 'actions') return actionsDialog(entry);
    if (dialog.kind === 'rename')
      return (
        <RenameForm
          entry={entry}
          onClose={close}
          onDone={(name) => {
            close();
            setMessage({ text: t.files.renamed(entry.name, name) });
            reload();
          }}
        />
      );
    const moving = dialog.kind === 'move';
    return picker(moving, moving ? t.files.moveTitle(entry.name) : t.files.copyTitle(entry.name), entry, async (to, where) => {
      await (moving ? moveTo(entry.uuid, to) : copyTo(entry.uuid, to));
      close();
      setMessage({ text: moving ? t.files.moved(entry.name, where) : t.files.copied(entry.name, where) });
      reload();
    });
  };

  return (
    <Page title={title}>
      <nav aria-label={t.files.drives} class="files-drives">
        <ul>
          <li>
            <Link href="/files" aria-current={drive === 'home' ? 'page' : undefined}>
              {t.files.home}
            </Link>
          </li>
          {groups
            .filter((g) => g.node_permissions.includes('read'))
            .map((g) => (
              <li key={g.group_uuid}>
                <Link href={`/files/home:${g.group_uuid}`} aria-current={drive === `home:${g.group_uuid}` ? 'page' : undefined}>
                  {g.group_name}
                </Link>
              </li>
            ))}
          <li>
            <Link href="/files/shared_with_you" aria-current={drive === 'shared_with_you' ? 'page' : undefined}>
              {t.files.sharedWithMe}
            </Link>
          </li>
          <li>
            <Link href="/files/incoming" aria-current={drive === 'incoming' ? 'page' : undefined}>
              {t.files.incomingCopies}
            </Link>
          </li>
        </ul>
      </nav>
      {failure ? (
        <div class="files-failure">
          <p class="error" role="alert">
            {failure.text}
          </p>
          <p>
            {failure.notFound ? (
              <Link href="/files">{t.files.backHome}</Link>
            ) : (
              <button type="button" onClick={reload}>
                {t.retry}
              </button>
            )}
          </p>
          {/* The uploads stay in view when the listing cannot load (the server away): they go on. */}
          <UploadList uploads={uploads} />
        </div>
      ) : !loaded ? (
        <p>{t.loading}</p>
      ) : (
        <>
          <nav aria-label={t.files.breadcrumbs} class="files-crumbs">
            <ol>
              {loaded.crumbs.map((crumb, index) => (
                <li key={crumb.uuid}>
                  <Link href={crumb.uuid === 'home' ? '/files' : `/files/${encodeURIComponent(crumb.uuid)}`} aria-current={index === loaded.crumbs.length - 1 ? 'page' : undefined}>
                    {index === 0 ? topLevelName(crumb, groups) : crumb.name}
                  </Link>
                </li>
              ))}
            </ol>
          </nav>
          {canWrite ? (
            <div class="files-toolbar">
              <button type="button" onClick={() => pickFiles(false)}>
                {t.files.uploadFiles}
              </button>
              <button type="button" onClick={() => pickFiles(true)}>
                {t.files.uploadFolder}
              </button>
              <input id="files-pick-files" type="file" multiple hidden onChange={onPicked} />
              <input id="files-pick-folder" type="file" multiple hidden {...{ webkitdirectory: true }} onChange={onPicked} />
              <NewFolderForm
                parent={folder}
                onDone={(name) => {
                  setMessage({ text: t.files.created(name) });
                  reload();
                }}
              />
            </div>
          ) : (
            !derived && <p class="notice">{t.files.readOnly}</p>
          )}
          <p role="status" class="files-message">
            {message?.text ?? ''}
            {message?.trash && (
              <>
                {' '}
                <Link href="/trash">{t.files.goTrash}</Link>
              </>
            )}
          </p>
          {progress && <p class="hint">{progress}</p>}
          <BulkFailures failures={failures} />
          {rowError && (
            <p class="error" role="alert">
              {t.files.rowFailed(rowError.name, rowError.text)}
            </p>
          )}
          <UploadList uploads={uploads} />
          <section class={dragging ? 'files-drop files-dragging' : 'files-drop'} aria-label={canWrite ? t.files.dropZone : t.files.listLabel(title)} {...dragProps}>
            {canWrite && <p class="hint">{dragging ? t.files.dropNow : t.files.dropHint}</p>}
            {all.length > 0 && (
              <div class="field files-filter">
                <label for="files-filter">{t.bulk.filter}</label>
                <input id="files-filter" type="search" value={filter} onInput={(event) => setFilter((event.currentTarget as HTMLInputElement).value)} />
              </div>
            )}
            <p class="files-count" role="status">
              {filter.trim() === '' ? t.files.count(all.length) : t.bulk.filterCount(rows.length, all.length)}
            </p>
            {chosen.length > 0 && (
              <div class="files-selection" role="group" aria-label={t.bulk.selectionBar}>
                <p>{t.bulk.selected(chosen.length)}</p>
                {canDownload &&
                  (chosen.length <= ZIP_MAX_NODES ? (
                    <a class="button-link secondary" href={zipUrl(chosen.map((e) => e.uuid), title)} download={`${title}.zip`}>
                      {t.bulk.zip}
                    </a>
                  ) : (
                    <p class="hint">{t.bulk.zipTooMany(ZIP_MAX_NODES)}</p>
                  ))}
                {canWrite && (
                  <button type="button" class="secondary" disabled={progress !== undefined} onClick={() => setDialog({ kind: 'bulk-move', entries: chosen })}>
                    {t.bulk.move}
                  </button>
                )}
                {canDownload && (
                  <button type="button" class="secondary" disabled={progress !== undefined} onClick={() => setDialog({ kind: 'bulk-copy', entries: chosen })}>
                    {t.bulk.copy}
                  </button>
                )}
                {canDelete && (
                  <button type="button" class="secondary" disabled={progress !== undefined} onClick={() => void runBulk(chosen, 'trashed', (e) => toTrash(e.uuid))}>
                    {t.bulk.trash}
                  </button>
                )}
                <button type="button" class="secondary" onClick={() => selectAll(false)}>
                  {t.bulk.clear}
                </button>
              </div>
            )}
            {rows.length > WINDOW_PAST && <p class="hint">{t.bulk.windowed}</p>}
            {all.length === 0 ? (
              <p>{t.files.empty}</p>
            ) : rows.length === 0 ? (
              <p>{t.bulk.filterNone}</p>
            ) : (
              <div onKeyDown={onListKey}>
                <FilesWindow key={folder} rows={rows} label={t.files.listLabel(title)} header={header} columns={5} rowKey={(e) => e.uuid} renderRow={renderRow} />
              </div>
            )}
            {elsewhere && <DriveMatches found={elsewhere} shown={rows} />}
          </section>
        </>
      )}
      {renderDialog()}
    </Page>
  );
}

const SEARCH_LIMIT = 50;
const SEARCH_DELAY_MS = 250;

/**
 * The filter box searched across every drive of the caller (the store's search extension, the
 * query SEARCH uses), a moment after typing stops; undefined while the box is empty, or when the
 * store has no search (its 404: the filter then narrows this folder only, as before).
 */
function useDriveSearch(filter: string, folder: string): { hits: SearchHit[]; more: boolean } | undefined {
  const [found, setFound] = useState<{ hits: SearchHit[]; more: boolean } | undefined>();
  useEffect(() => {
    const text = filter.trim();
    setFound(undefined);
    if (text === '') return undefined;
    let current = true;
    const timer = setTimeout(() => {
      searchDrives(text, SEARCH_LIMIT).then(
        (answer) => current && setFound(answer),
        () => current && setFound(undefined),
      );
    }, SEARCH_DELAY_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [filter, folder]);
  return found;
}

/** The whole-drive matches below this folder's own rows (those already shown above are left out). */
function DriveMatches({ found, shown }: { found: { hits: SearchHit[]; more: boolean }; shown: readonly Entry[] }) {
  const here = new Set(shown.map((e) => e.uuid));
  const hits = found.hits.filter((h) => !here.has(h.uuid));
  return (
    <section class="files-elsewhere" aria-label={t.files.elsewhere}>
      <h2>{t.files.elsewhere}</h2>
      {hits.length === 0 ? (
        <p>{t.files.elsewhereNone}</p>
      ) : (
        <ul>
          {hits.map((hit) => {
            const parent = hit.path[hit.path.length - 2];
            const where = hit.path
              .slice(0, -1)
              .map((p, i) => (i === 0 ? (t.files.topLevel[p.name] ?? p.name) : p.name))
              .join(' / ');
            const target = hit.type === 'Dir' ? hit.uuid : (parent?.uuid ?? 'home');
            return (
              <li key={hit.uuid}>
                <Link href={`/files/${target}`}>{hit.name}</Link> <span class="hint">{t.files.elsewhereIn(where)}</span>
              </li>
            );
          })}
        </ul>
      )}
      {found.more && <p class="hint">{t.files.elsewhereMore}</p>}
    </section>
  );
}

/** `/files` and `/files/<id>`: the file browser's routes (app.tsx). */
export function isFilesPath(path: string): boolean {
  return path === '/files' || path.startsWith('/files/');
}
