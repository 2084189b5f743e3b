/**
 * Sharing one node (issue 24, item 5): `/share/<uuid>`. Its links (download or upload, with an
 * optional password and expiry: POST/GET /api/nodes/{uuid}/shares, DELETE /api/shares/{uuid}),
 * a copy sent to people and groups (`share_copy_with`), and its private shares. The token of a
 * new link is shown once, with a Copy button (the store keeps only its hash). Where the drive has
 * an approver the store answers 202: the page says a request was made and links to /requests.
 * A node the caller may not see is "not found", whatever the store's reason, and shows nothing.
 * People are chosen once, in one form, for either a copy of their own or a private share of this
 * one; a note for the approver is asked only for the kinds of share the drive has an approver for
 * (GET /api/nodes/{uuid}/approvals).
 */
import { useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { approvalsOf, makeShare, nodeDetails, nodeShares, refusedField, removeShare, shareCopy, sharingErrorText, type Made, type NodeDetails, type Share } from '../api/sharing.js';
import { useResource } from '../api/use-resource.js';
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

function LinkForm({ node, approvals, onMade }: { node: NodeDetails; approvals: readonly string[]; onMade: () => void }) {
  const [kind, setKind] = useState<'public' | 'upload'>('public');
  const [password, setPassword] = useState('');
  const [expires, setExpires] = useState('');
  const [comment, setComment] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [made, setMade] = useState<Made | undefined>();
  const [busy, setBusy] = useState(false);
  const asksNote = approvals.includes(kind);
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
      if (asksNote && comment.trim()) body.comment = comment.trim();
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
      {asksNote && <Field id="sharing-link-comment" label={s.comment} hint={s.commentHint} value={comment} onValue={setComment} error={errors.comment} />}
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

/**
 * People and groups, chosen once, for either kind of share: a copy of their own (`share_copy_with`)
 * or this one, privately (a private share; only where the caller manages its shares).
 */
function PeopleForm(props: { node: NodeDetails; mayShare: boolean; approvals: readonly string[]; choices: Choices | undefined; loadError: string | undefined; onMade: () => void }) {
  const { node, mayShare, approvals, choices, loadError, onMade } = props;
  const id = 'sharing-people';
  const [kind, setKind] = useState<'copy' | 'private'>('copy');
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [writable, setWritable] = useState(false);
  const [comment, setComment] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [done, setDone] = useState<{ pending: boolean; text?: string } | undefined>();
  const [busy, setBusy] = useState(false);
  const asksNote = approvals.includes(kind === 'copy' ? 'share_copy' : 'private');
  const submit = async (event: Event) => {
    event.preventDefault();
    setDone(undefined);
    if (chosen.size === 0) return setErrors({ recipients: s.nobodyChosen });
    setErrors({});
    setBusy(true);
    const note = asksNote ? comment.trim() : '';
    try {
      const recipients = [...chosen];
      if (kind === 'copy') {
        const pending = await shareCopy(node.uuid, recipients, note);
        setDone(pending ? { pending: true } : { pending: false, text: s.copySent(recipients.length) });
      } else {
        const body: Record<string, unknown> = { type: 'private', recipients, writable };
        if (note) body.comment = note;
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
      <h3 id={`${id}-title`}>{s.peopleFormTitle}</h3>
      {mayShare ? (
        <fieldset>
          <legend>{s.peopleGet}</legend>
          <label class="sharing-choice">
            <input type="radio" name={`${id}-kind`} value="copy" checked={kind === 'copy'} onChange={() => setKind('copy')} />
            {s.getCopy}
          </label>
          <label class="sharing-choice">
            <input type="radio" name={`${id}-kind`} value="private" checked={kind === 'private'} onChange={() => setKind('private')} />
            {s.getPrivate}
          </label>
        </fieldset>
      ) : (
        <p class="hint">{s.copyIntro}</p>
      )}
      <SharingRecipients id={`${id}-recipients`} choices={choices} loadError={loadError} chosen={chosen} onChange={setChosen} error={errors.recipients} />
      {kind === 'private' && (
        <label class="sharing-choice">
          <input type="checkbox" checked={writable} onChange={(event) => setWritable((event.currentTarget as HTMLInputElement).checked)} />
          {s.writable}
        </label>
      )}
      {asksNote && <Field id={`${id}-comment`} label={s.comment} hint={s.commentHint} value={comment} onValue={setComment} error={errors.comment} />}
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

type Loaded = { missing: true } | { missing: false; node: NodeDetails; shares: Share[] | null; approvals: string[] };

async function loadSharing(id: string): Promise<Loaded> {
  try {
    // Someone a node is shared with privately sees it but not its shares (403): they may still send a copy.
    const sharesOf = nodeShares(id).catch((err: unknown) => {
      if (err instanceof ApiError && err.status === 403) return null;
      throw err;
    });
    const [node, shares, approvals] = await Promise.all([nodeDetails(id), sharesOf, approvalsOf(id)]);
    return { missing: false, node, shares, approvals };
  } catch (err) {
    if (err instanceof ApiError && (err.status === 404 || err.status === 403 || err.status === 400)) return { missing: true };
    throw err;
  }
}

export function ShareNode() {
  const { path } = useLocation();
  const id = pathRest(path, '/share/');
  const resource = useResource(async () => ({ id, result: await loadSharing(id) }), [id]);
  const { error, refresh } = resource;
  // What was loaded for another node (kept while this one loads) is not shown.
  const data = resource.data?.id === id ? resource.data.result : undefined;
  const reload = () => void refresh();
  const loaded = data && !data.missing ? data : undefined;
  const ownerGroup = loaded?.node.owner_type === 'Group' ? loaded.node.owner_uuid : undefined;
  const { choices, error: choicesError } = useChoices(loaded !== undefined, ownerGroup);

  if (data?.missing || (error && !loaded))
    return (
      <Page title={s.titleLoading}>
        <p class={data?.missing ? undefined : 'error'} role="alert">
          {data?.missing ? s.notFound : error}
        </p>
        {data?.missing ? (
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
  if (!loaded)
    return (
      <Page title={s.titleLoading}>
        <p>{t.loading}</p>
      </Page>
    );
  const { node, shares, approvals } = loaded;
  const links = shares?.filter((x) => x.type !== 'private') ?? [];
  const privates = shares?.filter((x) => x.type === 'private') ?? [];
  const people = <PeopleForm node={node} mayShare={shares !== null} approvals={approvals} choices={choices} loadError={choicesError} onMade={reload} />;
  if (shares === null)
    return (
      <Page title={s.title(node.name)}>
        <p>
          {s.ownedBy(node.owner_fullname)} {s.ownerManages} <Link href={`/item/${node.uuid}`}>{s.details}</Link>
        </p>
        <section aria-labelledby="sharing-copy">
          <h2 id="sharing-copy">{s.copyTitle}</h2>
          {people}
        </section>
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
        <LinkForm node={node} approvals={approvals} onMade={reload} />
      </section>
      <section aria-labelledby="sharing-people-section">
        <h2 id="sharing-people-section">{s.peopleTitle}</h2>
        <p class="hint">{s.peopleIntro}</p>
        {privates.length === 0 ? (
          <p>{s.noPrivate}</p>
        ) : (
          <ul class="sharing-list">
            {privates.map((x) => (
              <ShareRow key={x.share_uuid} share={x} onRemoved={reload} />
            ))}
          </ul>
        )}
        {people}
      </section>
    </Page>
  );
}
