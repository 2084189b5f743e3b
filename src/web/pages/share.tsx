/**
 * Sharing one node (issue 24, item 5): `/share/<uuid>`. Its links (download or upload, with an
 * optional password and expiry: POST/GET /api/nodes/{uuid}/shares, DELETE /api/shares/{uuid}),
 * a copy sent to people and groups (`share_copy_with`), and its private shares. The token of a
 * new link is shown once, with a Copy button (the store keeps only its hash). Where the drive has
 * an approver the store answers 202: the page says a request was made and links to /requests.
 * A node the caller may not see is "not found", whatever the store's reason, and shows nothing.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { makeShare, nodeDetails, nodeShares, refusedField, removeShare, shareCopy, sharingErrorText, type Made, type NodeDetails, type Share } from '../api/sharing.js';
import { CopyValue } from '../components/copy-button.js';
import { Field, FormError } from '../components/field.js';
import { Page } from '../components/page.js';
import { SharingRecipients, useChoices, type Choices } from '../components/sharing-recipients.js';
import { Link, pathRest, useLocation } from '../router.js';
import { t } from '../strings/index.js';

const s = t.sharing;
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
export const when = (ms: number) => dateFormat.format(ms);

export function isSharePath(path: string): boolean {
  return path.startsWith('/share/') && path.length > '/share/'.length;
}

/** The end of the chosen day (local time), as epoch ms: a link "expiring on" a day works all that day. */
function endOfDay(value: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return undefined;
  return new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + 1).getTime();
}

function Requested() {
  return (
    <p class="notice" role="status">
      {s.requested} <Link href="/requests">{s.seeRequests}</Link>
    </p>
  );
}

/** The new link's address: in the answer that made it, or in the request's while it awaits approval. */
const url = (made: Made): string | undefined => ('share' in made ? made.share.url : made.url);

function LinkForm({ node, onMade }: { node: NodeDetails; onMade: () => void }) {
  const [kind, setKind] = useState<'public' | 'upload'>('public');
  const [password, setPassword] = useState('');
  const [expires, setExpires] = useState('');
  const [comment, setComment] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [made, setMade] = useState<Made | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setMade(undefined);
    const end = expires ? endOfDay(expires) : undefined;
    if (expires && (end === undefined || end <= Date.now())) return setErrors({ expires: s.expiresInPast });
    setErrors({});
    setBusy(true);
    try {
      const body: Record<string, unknown> = { type: kind };
      if (password) body.password = password;
      if (end !== undefined) body.expires = end;
      if (comment.trim()) body.comment = comment.trim();
      const answer = await makeShare(node.uuid, body);
      setMade(answer);
      // The link is made: its form starts afresh (its token is shown once, below).
      setPassword('');
      setExpires('');
      setComment('');
      onMade();
    } catch (err) {
      const field = refusedField(err);
      const text = sharingErrorText(err);
      setErrors(field === 'password' || field === 'expires' || field === 'comment' ? { [field]: text } : field === 'type' || (err instanceof ApiError && err.code === 'not_a_folder') ? { type: text } : { form: text });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel sharing-form" onSubmit={submit} noValidate aria-labelledby="sharing-new-link">
      <h3 id="sharing-new-link">{s.newLink}</h3>
      <fieldset aria-describedby={errors.type ? 'sharing-kind-error' : undefined}>
        <legend>{s.linkKind}</legend>
        <label class="sharing-choice">
          <input type="radio" name="sharing-kind" value="public" checked={kind === 'public'} onChange={() => setKind('public')} />
          {s.kindPublic}
        </label>
        <label class="sharing-choice">
          <input type="radio" name="sharing-kind" value="upload" checked={kind === 'upload'} disabled={node.type !== 'Dir'} onChange={() => setKind('upload')} />
          {s.kindUpload}
        </label>
        {node.type !== 'Dir' && <p class="hint">{s.kindUploadFileOnly}</p>}
        {errors.type && (
          <p class="error" id="sharing-kind-error">
            {errors.type}
          </p>
        )}
      </fieldset>
      <Field id="sharing-password" label={s.password} hint={s.passwordHint} type="password" autoComplete="new-password" value={password} onValue={setPassword} error={errors.password} />
      <Field id="sharing-expires" label={s.expires} hint={s.expiresHint} type="date" value={expires} onValue={setExpires} error={errors.expires} />
      <Field id="sharing-link-comment" label={s.comment} hint={s.commentHint} value={comment} onValue={setComment} error={errors.comment} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {s.makeLink}
        </button>
      </div>
      <FormError text={errors.form} />
      {made && 'pending' in made && <Requested />}
      {made && (url(made) ?? '') !== '' && (
        <div class="notice" role="status">
          <p>{'pending' in made ? s.linkMadePending : s.linkMade}</p>
          <p class="sharing-label">{s.newLinkUrl}</p>
          <CopyValue text={new URL(url(made) ?? '', window.location.origin).href} label={s.copyLink} />
        </div>
      )}
    </form>
  );
}

function RecipientsForm(props: { node: NodeDetails; kind: 'copy' | 'private'; choices: Choices | undefined; loadError: string | undefined; onMade: () => void }) {
  const { node, kind, choices, loadError, onMade } = props;
  const id = `sharing-${kind}`;
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [writable, setWritable] = useState(false);
  const [comment, setComment] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [done, setDone] = useState<{ pending: boolean; text?: string } | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setDone(undefined);
    if (chosen.size === 0) return setErrors({ recipients: s.nobodyChosen });
    setErrors({});
    setBusy(true);
    try {
      const recipients = [...chosen];
      if (kind === 'copy') {
        const pending = await shareCopy(node.uuid, recipients, comment.trim());
        setDone(pending ? { pending: true } : { pending: false, text: s.copySent(recipients.length) });
      } else {
        const body: Record<string, unknown> = { type: 'private', recipients, writable };
        if (comment.trim()) body.comment = comment.trim();
        const made = await makeShare(node.uuid, body);
        setDone('pending' in made ? { pending: true } : { pending: false, text: s.privateMade });
      }
      setChosen(new Set());
      setWritable(false);
      setComment('');
      onMade();
    } catch (err) {
      const field = refusedField(err);
      const text = sharingErrorText(err);
      setErrors(field === 'share_copy_with' || field === 'recipients' ? { recipients: text } : field === 'comment' ? { comment: text } : { form: text });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel sharing-form" onSubmit={submit} noValidate aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>{kind === 'copy' ? s.copyFormTitle : s.privateFormTitle}</h3>
      <p class="hint">{kind === 'copy' ? s.copyIntro : s.privateIntro}</p>
      <SharingRecipients id={`${id}-recipients`} choices={choices} loadError={loadError} chosen={chosen} onChange={setChosen} error={errors.recipients} />
      {kind === 'private' && (
        <label class="sharing-choice">
          <input type="checkbox" checked={writable} onChange={(event) => setWritable((event.currentTarget as HTMLInputElement).checked)} />
          {s.writable}
        </label>
      )}
      <Field id={`${id}-comment`} label={s.comment} hint={s.commentHint} value={comment} onValue={setComment} error={errors.comment} />
      <div class="actions">
        <button type="submit" disabled={busy}>
          {kind === 'copy' ? s.sendCopy : s.makePrivate}
        </button>
      </div>
      <FormError text={errors.form} />
      {done?.pending && <Requested />}
      {done && !done.pending && (
        <p class="notice" role="status">
          {done.text}
        </p>
      )}
    </form>
  );
}

function ShareRow({ share, onRemoved }: { share: Share; onRemoved: () => void }) {
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const kind = s.linkKindName[share.type] ?? share.type;
  const names = (share.recipients ?? []).map((r) => r.name).join(', ');
  const remove = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await removeShare(share.share_uuid);
      onRemoved();
    } catch (err) {
      setError(sharingErrorText(err));
      setBusy(false);
    }
  };
  const facts =
    share.type === 'private'
      ? [names, share.writable ? s.mayChange : s.readOnly, s.createdOn(when(share.created))]
      : [kind, share.password_protected ? s.withPassword : s.noPassword, share.expires ? s.expiresOn(when(share.expires)) : s.neverExpires, s.createdOn(when(share.created))];
  return (
    <li class="sharing-row">
      <span>{facts.join(' · ')}</span>
      <button type="button" class="secondary" disabled={busy} aria-label={share.type === 'private' ? s.removePrivate(names) : s.removeLink(kind, when(share.created))} onClick={() => void remove()}>
        {s.remove}
      </button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </li>
  );
}

export function ShareNode() {
  const { path } = useLocation();
  const id = pathRest(path, '/share/');
  const [node, setNode] = useState<NodeDetails | undefined>();
  /** null: the caller may not see the node's shares (not its owner, nor a member of its group). */
  const [shares, setShares] = useState<Share[] | null | undefined>();
  const [failure, setFailure] = useState<{ notFound: boolean; text: string } | undefined>();
  const [reloads, setReloads] = useState(0);
  const reload = () => setReloads((n) => n + 1);
  const ownerGroup = node?.owner_type === 'Group' ? node.owner_uuid : undefined;
  const { choices, error: choicesError } = useChoices(node !== undefined, ownerGroup);

  useEffect(() => {
    let live = true;
    // Someone a node is shared with privately sees it but not its shares (403): they may still send a copy.
    const sharesOf = nodeShares(id).catch((err: unknown) => {
      if (err instanceof ApiError && err.status === 403) return null;
      throw err;
    });
    Promise.all([nodeDetails(id), sharesOf]).then(
      ([details, list]) => {
        if (!live) return;
        setNode(details);
        setShares(list);
        setFailure(undefined);
      },
      (err: unknown) => {
        if (!live) return;
        const notFound = err instanceof ApiError && (err.status === 404 || err.status === 403 || err.status === 400);
        setFailure({ notFound, text: notFound ? s.notFound : sharingErrorText(err) });
      },
    );
    return () => void (live = false);
  }, [id, reloads]);

  if (failure)
    return (
      <Page title={s.titleLoading}>
        <p class={failure.notFound ? undefined : 'error'} role="alert">
          {failure.text}
        </p>
        {failure.notFound ? (
          <p>
            <Link href="/files">{s.backToFiles}</Link>
          </p>
        ) : (
          <button type="button" onClick={reload}>
            {t.retry}
          </button>
        )}
      </Page>
    );
  if (!node || shares === undefined)
    return (
      <Page title={s.titleLoading}>
        <p>{t.loading}</p>
      </Page>
    );
  const links = shares?.filter((x) => x.type !== 'private') ?? [];
  const privates = shares?.filter((x) => x.type === 'private') ?? [];
  const copy = (
    <section aria-labelledby="sharing-copy">
      <h2 id="sharing-copy">{s.copyTitle}</h2>
      <RecipientsForm node={node} kind="copy" choices={choices} loadError={choicesError} onMade={() => undefined} />
    </section>
  );
  if (shares === null)
    return (
      <Page title={s.title(node.name)}>
        <p>
          {s.ownedBy(node.owner_fullname)} {s.ownerManages} <Link href={`/item/${node.uuid}`}>{s.details}</Link>
        </p>
        {copy}
      </Page>
    );
  return (
    <Page title={s.title(node.name)}>
      <p>
        {s.ownedBy(node.owner_fullname)} <Link href={`/item/${node.uuid}`}>{s.details}</Link>
      </p>
      <section aria-labelledby="sharing-links">
        <h2 id="sharing-links">{s.linksTitle}</h2>
        <p class="hint">{s.linksIntro}</p>
        {links.length === 0 ? (
          <p>{s.noLinks}</p>
        ) : (
          <ul class="sharing-list">
            {links.map((x) => (
              <ShareRow key={x.share_uuid} share={x} onRemoved={reload} />
            ))}
          </ul>
        )}
        <LinkForm node={node} onMade={reload} />
      </section>
      <section aria-labelledby="sharing-private">
        <h2 id="sharing-private">{s.privateTitle}</h2>
        {privates.length === 0 ? (
          <p>{s.noPrivate}</p>
        ) : (
          <ul class="sharing-list">
            {privates.map((x) => (
              <ShareRow key={x.share_uuid} share={x} onRemoved={reload} />
            ))}
          </ul>
        )}
        <RecipientsForm node={node} kind="private" choices={choices} loadError={choicesError} onMade={reload} />
      </section>
      {copy}
    </Page>
  );
}
