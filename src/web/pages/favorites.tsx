/**
 * Favorites (issue 24, item 4), `/favorites`: what the caller starred, from their own
 * `favorites` listing and each group drive's (`favorites:<group>`: the store lists the caller's
 * stars among that owner's nodes, docs/store-semantics.md "Nodes"); folders link to the file
 * browser, files to their details; unstar is POST {starred: false}.
 */
import { useState } from 'preact/hooks';
import { errorText } from '../api/client.js';
import { listFolder, myGroups, setStar, type Entry } from '../api/item.js';
import { useResource } from '../api/use-resource.js';
import { FormError } from '../components/field.js';
import { Page } from '../components/page.js';
import { Link } from '../router.js';
import { t } from '../strings/index.js';
import { folderHref } from './item.js';

interface Shelf {
  id: string;
  title: string;
  entries: Entry[];
}

async function loadShelves(): Promise<Shelf[]> {
  const [mine, groups] = await Promise.all([listFolder('favorites'), myGroups().catch(() => [])]);
  const theirs = await Promise.all(
    groups.map(async (g) => ({ id: `favorites:${g.group_uuid}`, title: t.item.favorites.ofGroup(g.group_name), entries: await listFolder(`favorites:${g.group_uuid}`).catch(() => [] as Entry[]) })),
  );
  return [{ id: 'favorites', title: t.item.favorites.mine, entries: mine }, ...theirs.filter((s) => s.entries.length > 0)];
}

export function Favorites() {
  const { data: shelves, error: loadError, refresh } = useResource(loadShelves, []);
  const [actionError, setError] = useState<string | undefined>();
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  const error = actionError ?? loadError;
  const unstar = async (entry: Entry) => {
    setBusy(true);
    setError(undefined);
    try {
      await setStar(entry.uuid, false);
      setStatus(t.item.unstarred(entry.name));
      await refresh();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const none = shelves !== undefined && shelves.every((s) => s.entries.length === 0);
  return (
    <Page title={t.item.favorites.title}>
      <p>{t.item.favorites.intro}</p>
      <p role="status">{status}</p>
      <FormError text={error} />
      {!shelves && !error && <p>{t.loading}</p>}
      {none && <p>{t.item.favorites.none}</p>}
      {!none &&
        shelves?.map((shelf) => (
          <section key={shelf.id} aria-labelledby={`fav-${shelf.id.replace(/[^A-Za-z0-9-]/g, '-')}`}>
            <h2 id={`fav-${shelf.id.replace(/[^A-Za-z0-9-]/g, '-')}`}>{shelf.title}</h2>
            <ul class="item-list">
              {shelf.entries.map((entry) => (
                <li key={entry.uuid}>
                  <p class="item-name">
                    <Link href={entry.type === 'Dir' ? folderHref(entry.uuid) : `/item/${entry.uuid}`}>{entry.name}</Link>
                  </p>
                  <p class="item-meta">{entry.type === 'Dir' ? t.item.folder : t.item.bytes(entry.size)}</p>
                  <div class="actions">
                    {entry.type === 'Dir' && (
                      <Link href={`/item/${entry.uuid}`} aria-label={t.item.favorites.detailsOf(entry.name)}>
                        {t.item.favorites.details}
                      </Link>
                    )}
                    <button type="button" class="secondary" aria-label={t.item.favorites.unstarNamed(entry.name)} disabled={busy} onClick={() => void unstar(entry)}>
                      {t.item.favorites.unstar}
                    </button>
                  </div>
                </li>
              ))}
            </ul>
          </section>
        ))}
    </Page>
  );
}
