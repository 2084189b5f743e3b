/**
 * Trash (issue 24, item 4), `/trash`: the caller's trash and the trash of every group drive they
 * may list (`trash:<group>`, read through GET /api/groups and myaccess: a member with `read` sees
 * it, `write` restores, `delete` deletes for good, as the store checks again). Each entry says
 * where it came from and when it was deleted (the store's `trashed` in a trash listing,
 * docs/extensions.md "Trash and revisions from a client"); restore puts it back there (POST
 * /api/nodes/{id}/restore), delete for good is DELETE inside trash, and emptying the trash is
 * that for every entry, one by one with progress (the API has no single call for it). Both ask
 * first.
 */
import { useEffect, useState } from 'preact/hooks';
import { errorText } from '../api/client.js';
import { accessOf, listFolder, myGroups, remove, restoreFromTrash, type Access, type Entry } from '../api/item.js';
import { FormError } from '../components/field.js';
import { ItemConfirm } from '../components/item-confirm.js';
import { Page } from '../components/page.js';
import { usageChanged } from '../components/usage.js';
import { Link } from '../router.js';
import { t } from '../strings/index.js';
import { folderHref, when } from './item.js';

interface Bin {
  id: string;
  title: string;
  /** The group's name, for a group drive's trash: its paths start with it. */
  group?: string;
  access: Access;
}

function pathInWords(fromPath: string, owner: string | undefined): string {
  const [top = '', ...rest] = fromPath.split('/');
  const label = t.item.topLevel[top] ?? top;
  return [owner ? `${owner}: ${label}` : label, ...rest].join('/');
}

function TrashBin({ bin }: { bin: Bin }) {
  const [entries, setEntries] = useState<Entry[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [status, setStatus] = useState<{ text: string; href?: string; where?: string }>({ text: '' });
  const [asking, setAsking] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const { group } = bin;
  const mayRestore = bin.access.includes('write');
  const mayDelete = bin.access.includes('delete');
  const load = () => listFolder(bin.id).then(setEntries, (err: unknown) => setError(errorText(err)));
  useEffect(() => void load(), [bin.id]);

  const act = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
      usageChanged();
      await load();
    }
  };
  const restore = (entry: Entry) =>
    act(async () => {
      const answer = await restoreFromTrash(entry.uuid);
      const where = pathInWords(answer.parent_path, group);
      setStatus({ text: t.item.trash.restored(answer.name, where), href: folderHref(answer.parent), where });
    });
  const purge = (entry: Entry) =>
    act(async () => {
      await remove(entry.uuid);
      setAsking(undefined);
      setStatus({ text: t.item.trash.deleted(entry.name) });
    });
  const empty = (all: Entry[]) =>
    act(async () => {
      setAsking(undefined);
      for (const [index, entry] of all.entries()) {
        setStatus({ text: t.item.trash.emptying(index + 1, all.length) });
        await remove(entry.uuid);
      }
      setStatus({ text: t.item.trash.emptied });
    });

  const headingId = `trash-${bin.id.replace(/[^A-Za-z0-9-]/g, '-')}`;
  return (
    <section aria-labelledby={headingId}>
      <h2 id={headingId}>{bin.title}</h2>
      <p role="status">
        {status.text}
        {status.href && status.where && (
          <>
            {' '}
            <Link href={status.href}>{t.item.trash.openRestored(status.where)}</Link>
          </>
        )}
      </p>
      <FormError text={error} />
      {entries === undefined && !error && <p>{t.loading}</p>}
      {entries?.length === 0 && <p>{t.item.trash.empty}</p>}
      {entries && entries.length > 0 && (
        <>
          <ul class="item-list">
            {entries.map((entry) => (
              <li key={entry.uuid}>
                <p class="item-name">{entry.trashed?.name ?? entry.name}</p>
                <p class="item-meta">
                  {entry.type === 'Dir' ? t.item.folder : t.item.bytes(entry.size)}
                  {' · '}
                  {entry.trashed?.from_path ? t.item.trash.from(pathInWords(entry.trashed.from_path, group)) : t.item.trash.fromGone}
                  {' · '}
                  {entry.trashed?.at ? t.item.trash.deletedAt(when(entry.trashed.at)) : t.item.trash.deletedUnknown}
                </p>
                <div class="actions">
                  {mayRestore && (
                    <button type="button" aria-label={t.item.trash.restoreNamed(entry.name)} disabled={busy} onClick={() => void restore(entry)}>
                      {t.item.trash.restore}
                    </button>
                  )}
                  {mayDelete && asking !== entry.uuid && (
                    <button type="button" class="secondary" id={`trash-delete-${entry.uuid}`} aria-label={t.item.trash.deleteForGoodNamed(entry.name)} disabled={busy} onClick={() => setAsking(entry.uuid)}>
                      {t.item.trash.deleteForGood}
                    </button>
                  )}
                </div>
                {asking === entry.uuid && (
                  <ItemConfirm label={t.item.trash.deleteForGoodNamed(entry.name)} text={t.item.trash.confirmDelete(entry.name)} yes={t.item.trash.confirmDeleteYes(entry.name)} danger busy={busy} opener={`trash-delete-${entry.uuid}`} onYes={() => void purge(entry)} onCancel={() => setAsking(undefined)} />
                )}
              </li>
            ))}
          </ul>
          {mayDelete && asking !== 'all' && (
            <button type="button" class="secondary" id={`${headingId}-empty`} aria-label={t.item.trash.emptyTrashOf(bin.title)} disabled={busy} onClick={() => setAsking('all')}>
              {t.item.trash.emptyTrash}
            </button>
          )}
          {asking === 'all' && (
            <ItemConfirm label={t.item.trash.emptyTrashOf(bin.title)} text={t.item.trash.confirmEmpty(entries.length)} yes={t.item.trash.confirmEmptyYes} danger busy={busy} opener={`${headingId}-empty`} onYes={() => void empty(entries)} onCancel={() => setAsking(undefined)} />
          )}
        </>
      )}
    </section>
  );
}

export function Trash() {
  const [bins, setBins] = useState<Bin[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    void (async () => {
      try {
        const [mine, groups] = await Promise.all([accessOf('trash'), myGroups().catch(() => [])]);
        // A group's trash is shown to whoever may list it; the store says who (myaccess).
        const theirs = await Promise.all(
          groups.map(async (g) => ({ id: `trash:${g.group_uuid}`, title: t.item.trash.ofGroup(g.group_name), group: g.group_name, access: await accessOf(`trash:${g.group_uuid}`).catch((): Access => []) })),
        );
        setBins([{ id: 'trash', title: t.item.trash.mine, access: mine }, ...theirs.filter((b) => b.access.includes('read'))]);
      } catch (err) {
        setError(errorText(err));
      }
    })();
  }, []);
  return (
    <Page title={t.item.trash.title}>
      <p>{t.item.trash.intro}</p>
      <FormError text={error} />
      {!bins && !error && <p>{t.loading}</p>}
      {bins?.map((bin) => <TrashBin key={bin.id} bin={bin} />)}
    </Page>
  );
}
