/**
 * Trash (issue 24, item 4), `/trash`: the caller's trash and the trash of every group drive they
 * may list (`trash:<group>`, read through GET /api/groups and myaccess: a member with `read` sees
 * it, `write` restores, `delete` deletes for good, as the store checks again). Each entry says
 * where it came from and when it was deleted (the store's `trashed` in a trash listing,
 * docs/extensions.md "Trash and revisions from a client"); restore puts it back there (POST
 * /api/nodes/{id}/restore), delete for good is DELETE inside trash, and emptying the trash is
 * that for every entry, one by one with progress (the API has no single call for it). Both ask
 * first. Several entries may be ticked and restored in one action (issue 31 item 8; requests as
 * api/bulk.ts runs them), which then says what came back and what did not.
 */
import { useState } from 'preact/hooks';
import { eachLimited } from '../api/bulk.js';
import { errorText } from '../api/client.js';
import { useResource } from '../api/use-resource.js';
import { accessOf, listFolder, myGroups, remove, restoreFromTrash, type Access, type Entry } from '../api/item.js';
import { FormError } from '../components/field.js';
import { ItemConfirm } from '../components/item-confirm.js';
import { Page } from '../components/page.js';
import { usageChanged } from '../components/usage.js';
import { BulkFailures, type BulkFailure } from '../components/bulk-failures.js';
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
  const listing = useResource(() => listFolder(bin.id), [bin.id]);
  const entries = listing.data;
  const [actionError, setError] = useState<string | undefined>();
  const error = actionError ?? listing.error;
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set());
  const [failures, setFailures] = useState<BulkFailure[]>([]);
  const [status, setStatus] = useState<{ text: string; href?: string; where?: string }>({ text: '' });
  const [asking, setAsking] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const { group } = bin;
  const mayRestore = bin.access.includes('write');
  const mayDelete = bin.access.includes('delete');
  const load = () => listing.refresh();

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
  const restoreChosen = (all: readonly Entry[]) =>
    act(async () => {
      const picked = all.filter((e) => chosen.has(e.uuid));
      setFailures([]);
      const outcome = await eachLimited(picked, (e) => restoreFromTrash(e.uuid), (done) => setStatus({ text: t.bulk.working(done, picked.length) }));
      setStatus({ text: t.bulk.summary('restored', outcome.ok.length, outcome.failed.length) });
      setFailures(outcome.failed.map((f) => ({ name: f.item.trashed?.name ?? f.item.name, why: f.why })));
      setChosen(new Set(outcome.failed.map((f) => f.item.uuid)));
    });
  const toggle = (uuid: string) => {
    const next = new Set(chosen);
    if (next.has(uuid)) next.delete(uuid);
    else next.add(uuid);
    setChosen(next);
  };
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
      <BulkFailures failures={failures} />
      {entries === undefined && !error && <p>{t.loading}</p>}
      {entries?.length === 0 && <p>{t.item.trash.empty}</p>}
      {entries && entries.length > 0 && (
        <>
          {mayRestore && (
            <div class="actions">
              <label class="trash-select">
                <input type="checkbox" checked={entries.every((e) => chosen.has(e.uuid))} onClick={() => setChosen(entries.every((e) => chosen.has(e.uuid)) ? new Set() : new Set(entries.map((e) => e.uuid)))} />
                {t.bulk.selectAll}
              </label>
              {entries.some((e) => chosen.has(e.uuid)) && (
                <button type="button" disabled={busy} onClick={() => void restoreChosen(entries)}>
                  {t.bulk.restoreSelected(entries.filter((e) => chosen.has(e.uuid)).length)}
                </button>
              )}
            </div>
          )}
          <ul class="item-list">
            {entries.map((entry) => (
              <li key={entry.uuid}>
                {mayRestore ? (
                  <label class="trash-select item-name">
                    <input type="checkbox" checked={chosen.has(entry.uuid)} onClick={() => toggle(entry.uuid)} aria-label={t.bulk.selectTrash(entry.trashed?.name ?? entry.name)} />
                    {entry.trashed?.name ?? entry.name}
                  </label>
                ) : (
                  <p class="item-name">{entry.trashed?.name ?? entry.name}</p>
                )}
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

async function loadBins(): Promise<Bin[]> {
  const [mine, groups] = await Promise.all([accessOf('trash'), myGroups().catch(() => [])]);
  // A group's trash is shown to whoever may list it; the store says who (myaccess).
  const theirs = await Promise.all(
    groups.map(async (g) => ({ id: `trash:${g.group_uuid}`, title: t.item.trash.ofGroup(g.group_name), group: g.group_name, access: await accessOf(`trash:${g.group_uuid}`).catch((): Access => []) })),
  );
  return [{ id: 'trash', title: t.item.trash.mine, access: mine }, ...theirs.filter((b) => b.access.includes('read'))];
}

export function Trash() {
  const { data: bins, error } = useResource(loadBins, []);
  return (
    <Page title={t.item.trash.title}>
      <p>{t.item.trash.intro}</p>
      <FormError text={error} />
      {!bins && !error && <p>{t.loading}</p>}
      {bins?.map((bin) => <TrashBin key={bin.id} bin={bin} />)}
    </Page>
  );
}
