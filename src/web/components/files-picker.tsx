/**
 * The folder picker of Move and Copy: a drive (Home or a group drive the caller may write to),
 * then folders opened one by one from its root; "Move here" / "Copy here" acts on the folder
 * open now. The nodes being moved are not offered as folders to open (the store refuses moving
 * a folder into itself anyway, said in words under the button).
 */
import { useEffect, useState } from 'preact/hooks';
import { filesErrorText, listFolder, type Entry, type GroupEntry } from '../api/files.js';
import { t } from '../strings/index.js';
import { FilesDialog } from './files-dialog.js';

interface Place {
  id: string;
  name: string;
}

export function FilesPicker(props: {
  title: string;
  action: string;
  /** What is moved or copied: one entry, or several (bulk work). */
  moving: Entry | readonly Entry[];
  startDrive: string;
  groups: readonly GroupEntry[];
  onPick: (folder: string, where: string) => Promise<void>;
  onClose: () => void;
}) {
  const { title, action, groups, onPick, onClose } = props;
  const drives: Place[] = [{ id: 'home', name: t.files.home }, ...groups.filter((g) => g.node_permissions.includes('write')).map((g) => ({ id: `home:${g.group_uuid}`, name: g.group_name }))];
  const first = drives.find((d) => d.id === props.startDrive) ?? drives[0] ?? { id: 'home', name: t.files.home };
  const [trail, setTrail] = useState<Place[]>([first]);
  const [folders, setFolders] = useState<Entry[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const here = trail[trail.length - 1] ?? first;
  const away = (Array.isArray(props.moving) ? (props.moving as readonly Entry[]) : [props.moving as Entry]).map((e) => e.uuid).join(' ');
  const where = trail.map((p) => p.name).join(' / ');

  useEffect(() => {
    let live = true;
    setFolders(undefined);
    listFolder(here.id).then(
      (entries) => live && setFolders(entries.filter((e) => e.type === 'Dir' && !away.split(' ').includes(e.uuid))),
      (err: unknown) => live && setError(filesErrorText(err)),
    );
    return () => void (live = false);
  }, [here.id, away]);

  const pick = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await onPick(here.id, where);
    } catch (err) {
      setError(filesErrorText(err));
      setBusy(false);
    }
  };

  return (
    <FilesDialog title={title} onClose={onClose}>
      <p>{t.files.pickerIntro}</p>
      <div class="field">
        <label for="files-picker-drive">{t.files.pickerDrive}</label>
        <select
          id="files-picker-drive"
          value={trail[0]?.id}
          onChange={(event) => {
            const drive = drives.find((d) => d.id === (event.currentTarget as HTMLSelectElement).value);
            if (drive) setTrail([drive]);
          }}
        >
          {drives.map((d) => (
            <option key={d.id} value={d.id}>
              {d.name}
            </option>
          ))}
        </select>
      </div>
      <p class="files-picker-where" aria-live="polite">
        {t.files.pickerIn(where)}
      </p>
      {trail.length > 1 && (
        <button type="button" class="secondary" onClick={() => setTrail(trail.slice(0, -1))}>
          {t.files.pickerUp}
        </button>
      )}
      {folders === undefined && !error ? (
        <p>{t.loading}</p>
      ) : folders && folders.length === 0 ? (
        <p>{t.files.pickerNoFolders}</p>
      ) : (
        <ul class="files-picker-list">
          {folders?.map((f) => (
            <li key={f.uuid}>
              <button type="button" class="secondary" aria-label={t.files.pickerOpen(f.name)} onClick={() => setTrail([...trail, { id: f.uuid, name: f.name }])}>
                {f.name}
              </button>
            </li>
          ))}
        </ul>
      )}
      <div class="actions">
        <button type="button" disabled={busy} onClick={() => void pick()} aria-describedby={error ? 'files-picker-error' : undefined}>
          {action}
        </button>
        <button type="button" class="secondary" onClick={onClose}>
          {t.files.cancel}
        </button>
      </div>
      {error && (
        <p class="error" id="files-picker-error" role="alert">
          {error}
        </p>
      )}
    </FilesDialog>
  );
}
