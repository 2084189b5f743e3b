/**
 * A link's page (/public/{token}[/{names...}]): what the person a link was sent to sees, with no
 * account. The store serves this page to a browser opening the link (routes/public.ts) and the
 * page asks the link's JSON itself (api/link.ts): a file's name, size, a preview where safe (as
 * Details shows one: the store decides what is inline, under its sandbox) and Download; a
 * folder's tree, navigable, with Download per file and "Download all" as a zip; an upload link's
 * drop zone and picker, listing only what this page sent; a password asked in the page (the
 * answer is an HttpOnly cookie for this link only); a gone link said in words.
 */
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { sizeText } from '../strings/units.js';
import { ApiError, errorText, waitText } from '../api/client.js';
import { downloadUrl, linkInfo, linkPath, linkPreviewKind, placeOf, previewUrl, sendToLink, unlockLink, zipUrl, type LinkInfo, type LinkPlace } from '../api/link.js';
import { useResource } from '../api/use-resource.js';
import { Field, FormError } from '../components/field.js';
import { Page } from '../components/page.js';
import { Link, useLocation } from '../router.js';
import { t } from '../strings/index.js';

const s = () => t.link;

export const isLinkPath = (path: string): boolean => path.startsWith('/public/');

type Loaded = { state: 'open'; info: LinkInfo } | { state: 'password' } | { state: 'gone'; expired: boolean } | { state: 'missing' };

/** The link's JSON, its refusals turned into states of the page (a password to ask, a link gone). */
async function load(place: LinkPlace): Promise<Loaded> {
  try {
    return { state: 'open', info: await linkInfo(place) };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    if (err.status === 401) return { state: 'password' };
    if (err.status === 410) return { state: 'gone', expired: true };
    // Below a folder: the link works, the name does not (any more).
    if (err.status === 404 && place.path.length > 0 && err.message !== 'no such link') return { state: 'missing' };
    if (err.status === 404) return { state: 'gone', expired: false };
    throw err;
  }
}

export function LinkPage() {
  const { path } = useLocation();
  const place = placeOf(path);
  const link = useResource(() => load(place), [path]);
  const data = link.data;
  if (link.error) {
    return (
      <Page title={s().goneTitle}>
        <p role="alert" class="form-error">
          {link.error}
        </p>
        <button type="button" onClick={() => void link.refresh()}>
          {t.retry}
        </button>
      </Page>
    );
  }
  if (!data) {
    return (
      <Page title={s().loadingTitle}>
        <p>{t.loading}</p>
      </Page>
    );
  }
  if (data.state === 'password') return <PasswordForm token={place.token} onOpened={() => void link.refresh()} />;
  if (data.state === 'gone') {
    return (
      <Page title={s().goneTitle}>
        <p>{data.expired ? s().expired : s().unknown}</p>
      </Page>
    );
  }
  if (data.state === 'missing') {
    return (
      <Page title={s().goneTitle}>
        <p>{s().nothingHere}</p>
        <p>
          <Link href={linkPath({ token: place.token, path: [] })}>{s().backToTop}</Link>
        </p>
      </Page>
    );
  }
  const { info } = data;
  if (info.type === 'Upload') return <UploadLink token={place.token} expires={info.expires} />;
  if (info.type === 'File') return <FileLink place={place} info={info} />;
  return <FolderLink place={place} info={info} />;
}

function Expiry({ expires, shared = true }: { expires: number | null; shared?: boolean }) {
  if (!shared && expires === null) return null;
  return (
    <p class="hint">
      {shared && s().sharedWithYou}
      {shared && expires !== null && ' '}
      {expires !== null && s().expiresOn(expires)}
    </p>
  );
}

function PasswordForm({ token, onOpened }: { token: string; onOpened: () => void }) {
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (password === '') return setError(s().passwordEmpty);
    setBusy(true);
    setError(undefined);
    try {
      await unlockLink(token, password);
      onOpened();
    } catch (err) {
      setBusy(false);
      if (err instanceof ApiError && err.status === 401) setError(s().wrongPassword);
      else if (err instanceof ApiError && err.status === 429) setError(s().tooManyTries(waitText(err.retryAfterSec ?? 60)));
      else setError(errorText(err));
    }
  };
  return (
    <Page title={s().passwordTitle}>
      <form class="panel" onSubmit={submit} noValidate>
        <Field id="link-password" type="password" label={s().password} hint={s().passwordIntro} value={password} onValue={setPassword} error={error} autocomplete="off" required />
        <button type="submit" disabled={busy}>
          {busy ? s().opening : s().open}
        </button>
      </form>
    </Page>
  );
}

function FileLink({ place, info }: { place: LinkPlace; info: Extract<LinkInfo, { type: 'File' }> }) {
  return (
    <Page title={info.name}>
      <Expiry expires={info.expires} />
      <Crumbs place={place} />
      <dl class="settings">
        <dt>{s().size}</dt>
        <dd>{t.item.bytes(info.size)}</dd>
        <dt>{s().modified}</dt>
        <dd>{s().date(info.updated)}</dd>
      </dl>
      <p class="actions">
        <a class="button-link" href={downloadUrl(place)} download={info.name}>
          {s().download}
        </a>
      </p>
      <section aria-labelledby="link-preview-heading">
        <h2 id="link-preview-heading">{s().preview}</h2>
        <Preview place={place} name={info.name} />
      </section>
    </Page>
  );
}

function Preview({ place, name }: { place: LinkPlace; name: string }) {
  const url = previewUrl(place);
  const [kind, setKind] = useState<'image' | 'text' | 'none' | undefined>();
  useEffect(() => {
    setKind(undefined);
    void linkPreviewKind(place).then((found) => setKind(found ?? 'none'));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [url]);
  if (kind === undefined) return <p>{s().previewLoading}</p>;
  if (kind === 'none') return <p>{s().noPreview}</p>;
  // sandbox="" (no allow-token): no script, no same-origin, no form, no popup, no download.
  return <iframe class={`item-preview item-preview-${kind}`} sandbox="" src={url} title={s().previewOf(name)} referrerpolicy="no-referrer" />;
}

/** Where in a folder link the page is: the shared folder, then each name below it. */
function Crumbs({ place }: { place: LinkPlace }) {
  if (place.path.length === 0) return null;
  const top = { token: place.token, path: [] as string[] };
  return (
    <nav aria-label={s().where} class="link-crumbs">
      <ol>
        <li>
          <Link href={linkPath(top)}>{s().backToTop}</Link>
        </li>
        {place.path.map((name, i) => {
          const here = i === place.path.length - 1;
          return (
            <li key={i}>
              {here ? <span aria-current="page">{name}</span> : <Link href={linkPath({ token: place.token, path: place.path.slice(0, i + 1) })}>{name}</Link>}
            </li>
          );
        })}
      </ol>
    </nav>
  );
}

function FolderLink({ place, info }: { place: LinkPlace; info: Extract<LinkInfo, { type: 'Dir' }> }) {
  const at = (name: string) => ({ token: place.token, path: [...place.path, name] });
  return (
    <Page title={info.name}>
      <Expiry expires={info.expires} />
      <Crumbs place={place} />
      <p class="actions">
        <a class="button-link" href={zipUrl(place)} download={`${info.name}.zip`} aria-label={s().downloadAllOf(info.name)}>
          {s().downloadAll}
        </a>
      </p>
      {info.entries.length === 0 ? (
        <p>{s().empty}</p>
      ) : (
        <>
          <p class="hint">{s().count(info.entries.length)}</p>
          <table class="link-table">
            <thead>
              <tr>
                <th scope="col">{s().name}</th>
                <th scope="col">{s().size}</th>
                <th scope="col">{s().modified}</th>
                <th scope="col">
                  <span class="offscreen">{s().download}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {info.entries.map((entry) => (
                <tr key={entry.name}>
                  <th scope="row">
                    <Link href={linkPath(at(entry.name))} aria-label={entry.type === 'Dir' ? s().openFolder(entry.name) : undefined}>
                      {entry.name}
                      {entry.type === 'Dir' ? '/' : ''}
                    </Link>
                  </th>
                  <td>{entry.type === 'Dir' ? s().folder : sizeText(entry.size)}</td>
                  <td>{s().date(entry.updated)}</td>
                  <td>
                    {entry.type === 'File' && (
                      <a href={downloadUrl(at(entry.name))} download={entry.name} aria-label={s().downloadNamed(entry.name)}>
                        {s().download}
                      </a>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </Page>
  );
}

interface Sent {
  id: number;
  file: File;
  sent: number;
  state: 'waiting' | 'sending' | 'done' | 'failed';
  result?: { name: string; size: number };
  error?: string;
}

function UploadLink({ token, expires }: { token: string; expires: number | null }) {
  const [items, setItems] = useState<Sent[]>([]);
  const [dragging, setDragging] = useState(false);
  const queue = useRef<Sent[]>([]);
  const running = useRef(false);
  const nextId = useRef(1);
  const live = useRef(true);
  useEffect(
    () => () => {
      live.current = false;
    },
    [],
  );
  const update = (id: number, change: Partial<Sent>) => {
    if (live.current) setItems((all) => all.map((item) => (item.id === id ? { ...item, ...change } : item)));
  };

  // One file at a time, in the order given: each answer names what the store kept.
  const run = async () => {
    if (running.current) return;
    running.current = true;
    while (queue.current.length > 0 && live.current) {
      const item = queue.current.shift() as Sent;
      update(item.id, { state: 'sending' });
      try {
        const result = await sendToLink(token, item.file, (sent) => update(item.id, { sent })).done;
        update(item.id, { state: 'done', sent: item.file.size, result });
      } catch (err) {
        const why = err instanceof ApiError && err.status === 507 ? s().noRoom : errorText(err);
        update(item.id, { state: 'failed', error: why });
      }
    }
    running.current = false;
  };
  const add = (files: FileList | File[]) => {
    const added = [...files].map((file) => ({ id: nextId.current++, file, sent: 0, state: 'waiting' as const }));
    if (added.length === 0) return;
    queue.current.push(...added);
    setItems((all) => [...all, ...added]);
    void run();
  };

  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    if (event.dataTransfer) add(event.dataTransfer.files);
  };
  const dragProps: JSX.HTMLAttributes<HTMLElement> = {
    onDragOver: (event: DragEvent) => {
      event.preventDefault();
      if (!dragging) setDragging(true);
    },
    onDragLeave: (event: DragEvent) => {
      if (!(event.currentTarget as HTMLElement).contains(event.relatedTarget as Node | null)) setDragging(false);
    },
    onDrop,
  };
  const done = items.filter((item) => item.state === 'done').length;
  return (
    <Page title={s().uploadTitle}>
      <p>{s().uploadIntro}</p>
      <Expiry expires={expires} shared={false} />
      <section class={`link-drop${dragging ? ' link-dragging' : ''}`} aria-label={s().dropZone} {...dragProps}>
        <p>{dragging ? s().dropNow : s().dropZone}</p>
        <button type="button" onClick={() => (document.getElementById('link-pick') as HTMLInputElement | null)?.click()}>
          {s().pick}
        </button>
        <input
          id="link-pick"
          class="offscreen"
          type="file"
          multiple
          tabIndex={-1}
          aria-label={s().pickLabel}
          onChange={(event) => {
            const input = event.currentTarget;
            if (input.files) add(input.files);
            input.value = '';
          }}
        />
      </section>
      <p class="hint">{s().notResumable}</p>
      {items.length > 0 && (
        <section aria-labelledby="link-sent-heading">
          <h2 id="link-sent-heading">{s().sent}</h2>
          <p role="status">{s().sentSummary(done, items.length)}</p>
          <ul class="link-sent">
            {items.map((item) => (
              <li key={item.id}>
                <span class="link-sent-name">{item.file.name}</span>
                <progress aria-label={s().progressOf(item.file.name)} max={Math.max(item.file.size, 1)} value={item.state === 'done' ? Math.max(item.file.size, 1) : Math.min(item.sent, item.file.size)} />
                <span class={item.state === 'failed' ? 'error' : 'hint'}>
                  {item.state === 'waiting' && s().waiting}
                  {item.state === 'sending' && s().sending(item.file.size === 0 ? 0 : Math.floor((100 * Math.min(item.sent, item.file.size)) / item.file.size))}
                  {item.state === 'done' && item.result && s().received(item.result.name === item.file.name ? '' : item.result.name, sizeText(item.result.size))}
                  {item.state === 'failed' && s().failed(item.error ?? '')}
                </span>
              </li>
            ))}
          </ul>
        </section>
      )}
    </Page>
  );
}
