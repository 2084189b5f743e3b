/**
 * Details of a file or folder (issue 24, item 4), `/item/<uuid>`: where it is (its path, linked
 * back to the file browser), size, times, owner, checksums when the store has them (node details:
 * docs/extensions.md "Checksums"), star, download, the revisions with download and restore (GET
 * and POST /api/nodes/{file}/revisions), and a preview of images and plain text. The preview is
 * an `<iframe sandbox="">` on SPEC's view path: no script, an opaque origin, and the store's own
 * sandboxing CSP and nosniff on the bytes (docs/content-security.md); what the store would send
 * as an attachment (HTML, SVG, ...) gets no frame at all. Size and the caller's star come from
 * the parent folder's listing: node details carry neither.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, errorText } from '../api/client.js';
import { accessOf, details, fileUrl, listFolder, pathOf, restoreRevision, revisionsOf, setStar, thumbnailUrl, type Access, type Details, type Entry, type PathEntry, type Revision } from '../api/item.js';
import { useResource } from '../api/use-resource.js';
import { FilePreview } from '../components/file-preview.js';
import { FormError } from '../components/field.js';
import { ItemConfirm } from '../components/item-confirm.js';
import { FileThumb } from '../components/file-thumb.js';
import { Page } from '../components/page.js';
import { Link, pathRest, useLocation } from '../router.js';
import { t } from '../strings/index.js';

export const isItemPath = (path: string): boolean => path.startsWith('/item/') && path.length > '/item/'.length;

export function when(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** A path entry in words: top-level folders by their name here, a group's prefixed with the group. */
export function crumbName(entry: PathEntry, owner?: { type: string; name: string }): string {
  const top = entry.uuid.split(':')[0] ?? entry.uuid;
  const label = entry.uuid === entry.name || entry.uuid.startsWith(`${entry.name}:`) ? t.item.topLevel[top] : undefined;
  if (!label) return entry.name;
  return entry.uuid.includes(':') && owner?.type === 'Group' ? `${owner.name}: ${label}` : label;
}

/** The file browser's address of a folder (its route treats `/files` as home). */
export function folderHref(uuid: string): string {
  return uuid === 'home' ? '/files' : `/files/${encodeURIComponent(uuid)}`;
}

interface Loaded {
  node: Details;
  path: PathEntry[];
  access: Access;
  entry: Entry | undefined;
  revisions: Revision[];
}

async function load(id: string): Promise<Loaded> {
  const [node, path, access] = await Promise.all([details(id), pathOf(id), accessOf(id)]);
  const parent = path.length >= 2 ? path[path.length - 2] : undefined;
  const [entries, revisions] = await Promise.all([
    parent ? listFolder(parent.uuid).catch(() => [] as Entry[]) : Promise.resolve([] as Entry[]),
    node.type === 'File' ? revisionsOf(id) : Promise.resolve([] as Revision[]),
  ]);
  return { node, path, access, entry: entries.find((e) => e.uuid === node.uuid), revisions };
}

/** Loaded, or why not in the page's words: not found (404, 400) or not allowed (403) are states, not failures. */
async function loadItem(id: string): Promise<Loaded | { refused: string }> {
  try {
    return await load(id);
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 400)) return { refused: t.item.notFound };
    if (err instanceof ApiError && err.status === 403) return { refused: t.item.forbidden };
    throw err;
  }
}

function Revisions({ node, revisions, mayWrite, mayDownload, onRestored }: { node: Details; revisions: Revision[]; mayWrite: boolean; mayDownload: boolean; onRestored: (from: number, to: number) => Promise<void> }) {
  const [asking, setAsking] = useState<number | undefined>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const latest = revisions[revisions.length - 1]?.revision ?? 0;
  const restore = async (n: number) => {
    setBusy(true);
    setError(undefined);
    try {
      const answer = await restoreRevision(node.uuid, n);
      setAsking(undefined);
      await onRestored(n, answer.revision);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="revisions-heading">
      <h2 id="revisions-heading">{t.item.revisions}</h2>
      <p>{t.item.revisionsIntro}</p>
      <FormError text={error} />
      <ol class="item-revisions" reversed>
        {[...revisions].reverse().map((r) => {
          const download = mayDownload ? fileUrl('download', node, r.revision) : undefined;
          return (
            <li key={r.revision}>
              <p>
                <strong>{t.item.revisionLine(r.revision)}</strong> {r.revision === latest ? t.item.latest : ''}
                <br />
                {t.item.revisionBy(t.item.bytes(r.size), when(r.created), r.uploader_fullname)}
              </p>
              <div class="actions">
                {download && (
                  <a class="button-link secondary" href={download} download={node.name}>
                    {t.item.downloadRevision(r.revision)}
                  </a>
                )}
                {mayWrite && r.revision !== latest && asking !== r.revision && (
                  <button type="button" class="secondary" id={`revision-restore-${r.revision}`} aria-label={t.item.restoreRevision(r.revision)} disabled={busy} onClick={() => setAsking(r.revision)}>
                    {t.item.restoreShort}
                  </button>
                )}
              </div>
              {asking === r.revision && (
                <ItemConfirm label={t.item.restoreRevision(r.revision)} text={t.item.confirmRestore(r.revision, latest + 1)} yes={t.item.confirmRestoreYes(r.revision)} busy={busy} opener={`revision-restore-${r.revision}`} onYes={() => void restore(r.revision)} onCancel={() => setAsking(undefined)} />
              )}
            </li>
          );
        })}
      </ol>
    </section>
  );
}

export function Item() {
  const { path: route } = useLocation();
  const id = pathRest(route, '/item/');
  const resource = useResource(async () => ({ id, result: await loadItem(id) }), [id]);
  const reload = resource.refresh;
  // What was loaded for another item (kept while this one loads) is not shown.
  const data = resource.data?.id === id ? resource.data.result : undefined;
  const loaded = data && 'node' in data ? data : undefined;
  const failure = data && 'refused' in data ? data.refused : loaded ? undefined : resource.error;
  const [status, setStatus] = useState('');
  const [starError, setStarError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  useEffect(() => setStatus(''), [id]);

  if (failure) {
    return (
      <Page title={t.item.title}>
        <p role="alert" class="form-error">
          {failure}
        </p>
        <p>
          <Link href="/files">{t.item.backToFiles}</Link>
        </p>
      </Page>
    );
  }
  if (!loaded) {
    return (
      <Page title={t.item.title}>
        <p>{t.loading}</p>
      </Page>
    );
  }

  const { node, path, access, entry, revisions } = loaded;
  const owner = { type: node.owner_type, name: node.owner_fullname };
  const parent = path.length >= 2 ? path[path.length - 2] : undefined;
  const latest = revisions[revisions.length - 1];
  const isFile = node.type === 'File';
  const mayDownload = access.includes('download');
  const download = isFile && mayDownload ? fileUrl('download', node) : undefined;
  const checksums = latest?.checksums ?? node.checksums;

  const toggleStar = async () => {
    if (!entry) return;
    setBusy(true);
    setStarError(undefined);
    try {
      await setStar(node.uuid, !entry.is_starred);
      setStatus(entry.is_starred ? t.item.unstarred(node.name) : t.item.starred(node.name));
      await reload();
    } catch (err) {
      setStarError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Page title={node.name}>
      <nav aria-label={t.item.whereItIs} class="item-crumbs">
        <ol>
          {path.slice(0, -1).map((crumb) => (
            <li key={crumb.uuid}>
              <Link href={folderHref(crumb.uuid)}>{crumbName(crumb, owner)}</Link>
            </li>
          ))}
          <li>
            <span aria-current="page">{node.name}</span>
          </li>
        </ol>
      </nav>

      <div class="actions item-actions">
        {parent && <Link href={folderHref(parent.uuid)}>{t.item.backToFolder(crumbName(parent, owner))}</Link>}
        {!isFile && <Link href={folderHref(node.uuid)}>{t.item.openFolder}</Link>}
      </div>

      <section aria-labelledby="facts-heading">
        <h2 id="facts-heading">{t.item.facts}</h2>
        <div class="item-summary">
        <div class="item-picture">
          {/* A thumbnail only where the file may be downloaded: it shows the bytes. */}
          <FileThumb node={{ uuid: node.uuid, name: node.name, type: node.type, revision: latest?.revision }} mayRead={mayDownload} px={256} size={160} alt={t.item.thumbnailOf(node.name)} />
        </div>
        <dl class="settings item-facts">
          <dt>{t.item.kind}</dt>
          <dd>{isFile ? t.item.file : t.item.folder}</dd>
          {(latest || entry) && (
            <>
              <dt>{t.item.size}</dt>
              <dd>{t.item.bytes(latest?.size ?? entry?.size ?? 0)}</dd>
            </>
          )}
          <dt>{t.item.created}</dt>
          <dd>{when(node.created)}</dd>
          <dt>{t.item.modified}</dt>
          <dd>{when(latest?.created ?? node.updated)}</dd>
          <dt>{t.item.owner}</dt>
          <dd>{node.owner_fullname}</dd>
          {latest && (
            <>
              <dt>{t.item.revision}</dt>
              <dd>{latest.revision}</dd>
            </>
          )}
          {isFile && checksums && (
            <>
              <dt>{t.item.sha1}</dt>
              <dd>
                <code class="item-hash">{checksums.sha1}</code>
              </dd>
              {checksums.md5 !== undefined && (
                <>
                  <dt>{t.item.md5}</dt>
                  <dd>
                    <code class="item-hash">{checksums.md5}</code>
                  </dd>
                </>
              )}
            </>
          )}
        </dl>
        </div>
        {isFile && !checksums && <p>{t.item.noChecksums}</p>}
        <div class="actions">
          {entry && (
            <button type="button" class="secondary" aria-pressed={entry.is_starred ? 'true' : 'false'} disabled={busy} onClick={() => void toggleStar()}>
              {entry.is_starred ? t.item.unstar : t.item.star}
            </button>
          )}
          {download && (
            <a class="button-link" href={download} download={node.name} aria-label={t.item.downloadNamed(node.name)}>
              {t.item.download}
            </a>
          )}
        </div>
        <FormError text={starError} />
        <p role="status">{status}</p>
      </section>

      {isFile && latest && (
        <section aria-labelledby="preview-heading">
          <h2 id="preview-heading">{t.item.preview}</h2>
          {mayDownload ? <FilePreview url={fileUrl('view', node, latest.revision)} thumbnail={thumbnailUrl(node, 1024, latest.revision)} name={node.name} /> : <p>{t.item.noDownload}</p>}
        </section>
      )}

      {isFile && (
        <Revisions
          node={node}
          revisions={revisions}
          mayWrite={access.includes('write')}
          mayDownload={mayDownload}
          onRestored={async (from, to) => {
            await reload();
            setStatus(t.item.restored(from, to));
          }}
        />
      )}
    </Page>
  );
}
