/**
 * Sharing one node (issue 24, item 5), `/share/<uuid>`: its links (download or upload, with an
 * optional password and expiry; the address shown once with a Copy button; delete), its private
 * shares with people and groups, and sending a copy (share_copy_with). Each refusal of the store
 * is said next to the field it names, else next to the button; a share that waits for approval
 * says so and points to /requests. A node the caller may not see is "not found", as the store
 * answers it (nothing about it is shown).
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, errorText } from '../api.js';
import { createShare, nodeDetails, nodeShares, people, removeShare, shareCopy, type NodeDetails, type Person, type ShareRecord } from '../api/sharing.js';
import { CopyValue } from '../components/copy-button.js';
import { Field, FormError } from '../components/field.js';
import { Page } from '../components/page.js';
import { RecipientPicker } from '../components/sharing-recipients.js';
import { Link } from '../router.js';
import { currentSession } from '../session.js';
import { t } from '../strings.js';

const s = t.sharing;

/** The store's refusal: next to the field it names (when one of `fields`), else for the form. */
function placed(err: unknown, fields: string[]): { field?: string; text: string } {
  const field = err instanceof ApiError ? err.field()?.split('.')[0] : undefined;
  return field && fields.includes(field) ? { field, text: errorText(err) } : { text: errorText(err) };
}

function AwaitsApproval() {
  return (
    <p class="notice" role="status">
      {s.awaitsApproval} <Link href="/requests">{s.requestsPage}</Link>.
    </p>
  );
}

function shareSummary(share: ShareRecord): string {
  if (share.type === 'private') return [s.with((share.recipients ?? []).map((r) => r.name).join(', ')), share.writable ? s.canChange : s.readOnly, s.created(s.time(share.created))].join('; ');
  return [share.password_protected ? s.passwordProtected : s.noPassword, share.expires === null ? s.neverExpires : s.expires(s.time(share.expires)), s.created(s.time(share.created))].join('; ');
}

function ShareList({ shares, empty, onDeleted }: { shares: ShareRecord[]; empty: string; onDeleted: () => void }) {
  const [error, setError] = useState<string | undefined>();
  const remove = async (share: ShareRecord) => {
    setError(undefined);
    try {
      await removeShare(share.share_uuid);
      onDeleted();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <>
      <FormError text={error} />
      {shares.length === 0 ? (
        <p>{empty}</p>
      ) : (
        <ul class="share-list">
          {shares.map((share) => (
            <li key={share.share_uuid}>
              <strong>{s.kind[share.type]}</strong> <span>{shareSummary(share)}</span>{' '}
              <button type="button" class="secondary" aria-label={s.deleteLink(s.kind[share.type] ?? '')} onClick={() => void remove(share)}>
                {s.deleteShort}
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function endOfDay(date: string): number | undefined {
  if (date === '') return undefined;
  return new Date(`${date}T23:59:59.999`).getTime();
}

function LinkForm({ node, onMade }: { node: NodeDetails; onMade: () => void }) {
  const [kind, setKind] = useState<'public' | 'upload'>('public');
  const [password, setPassword] = useState('');
  const [expires, setExpires] = useState('');
  const [comment, setComment] = useState('');
  const [problems, setProblems] = useState<{ field?: string; text?: string }>({});
  const [made, setMade] = useState<{ url?: string; pending: boolean } | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setProblems({});
    setMade(undefined);
    try {
      const expiry = endOfDay(expires);
      const answer = await createShare(node.uuid, { type: kind, ...(password ? { password } : {}), ...(expiry === undefined ? {} : { expires: expiry }), ...(comment ? { comment } : {}) });
      setMade({ ...(answer.url ? { url: new URL(answer.url, window.location.origin).href } : {}), pending: answer.pending_uuid !== undefined });
      setPassword('');
      setExpires('');
      setComment('');
      onMade();
    } catch (err) {
      setProblems(placed(err, ['password', 'expires', 'comment']));
    } finally {
      setBusy(false);
    }
  };
  const err = (field: string) => (problems.field === field ? problems.text : undefined);
  return (
    <form class="panel" onSubmit={submit} noValidate>
      {node.type === 'Dir' && (
        <fieldset>
          <legend>{s.linkKind}</legend>
          {(['public', 'upload'] as const).map((k) => (
            <div class="check" key={k}>
              <input type="radio" name="link-kind" id={`link-kind-${k}`} checked={kind === k} onChange={() => setKind(k)} />
              <label for={`link-kind-${k}`}>{k === 'public' ? s.linkDownload : s.linkUpload}</label>
            </div>
          ))}
        </fieldset>
      )}
      <Field id="link-password" label={s.linkPassword} hint={s.linkPasswordHint} type="password" autoComplete="new-password" value={password} onValue={setPassword} error={err('password')} />
      <Field id="link-expires" label={s.linkExpires} hint={s.linkExpiresHint} type="date" value={expires} onValue={setExpires} error={err('expires')} />
      <Field id="link-comment" label={s.comment} value={comment} onValue={setComment} error={err('comment')} />
      <FormError text={problems.field ? undefined : problems.text} />
      <button type="submit" disabled={busy}>
        {s.createLink}
      </button>
      {made?.url && (
        <div class="notice">
          <p>{s.linkMade}</p>
          <CopyValue text={made.url} label={s.copyLink} />
        </div>
      )}
      {made?.pending && <AwaitsApproval />}
    </form>
  );
}

function RecipientsForm({ node, mode, everyone, onMade }: { node: NodeDetails; mode: 'private' | 'copy'; everyone: Person[]; onMade: () => void }) {
  const [chosen, setChosen] = useState<Person[]>([]);
  const [writable, setWritable] = useState(false);
  const [comment, setComment] = useState('');
  const [problems, setProblems] = useState<{ field?: string; text?: string }>({});
  const [done, setDone] = useState<'made' | 'pending' | undefined>();
  const [busy, setBusy] = useState(false);
  const id = `${mode}-recipients`;
  const submit = async (event: Event) => {
    event.preventDefault();
    setDone(undefined);
    if (chosen.length === 0) return setProblems({ field: 'recipients', text: s.recipientsMissing });
    setBusy(true);
    setProblems({});
    try {
      const uuids = chosen.map((p) => p.uuid);
      const answer = mode === 'private' ? await createShare(node.uuid, { type: 'private', recipients: uuids, writable, ...(comment ? { comment } : {}) }) : await shareCopy(node.uuid, uuids, comment);
      setDone(answer?.pending_uuid ? 'pending' : 'made');
      setChosen([]);
      setComment('');
      onMade();
    } catch (err) {
      const where = placed(err, ['recipients', 'share_copy_with', 'comment']);
      setProblems(where.field === 'share_copy_with' ? { field: 'recipients', text: where.text } : where);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel" onSubmit={submit} noValidate>
      <RecipientPicker id={id} everyone={everyone} chosen={chosen} onChange={setChosen} error={problems.field === 'recipients' ? problems.text : undefined} />
      {mode === 'private' && (
        <div class="check">
          <input type="checkbox" id="private-writable" checked={writable} onChange={(event) => setWritable((event.currentTarget as HTMLInputElement).checked)} />
          <label for="private-writable">{s.writable}</label>
        </div>
      )}
      <Field id={`${mode}-comment`} label={s.comment} value={comment} onValue={setComment} error={problems.field === 'comment' ? problems.text : undefined} />
      <FormError text={problems.field ? undefined : problems.text} />
      <button type="submit" disabled={busy}>
        {mode === 'private' ? s.sharePrivately : s.sendCopy}
      </button>
      {done === 'made' && <p role="status">{mode === 'private' ? s.sharedPrivately : s.copySent}</p>}
      {done === 'pending' && <AwaitsApproval />}
    </form>
  );
}

export function Share({ uuid }: { uuid: string }) {
  const [node, setNode] = useState<NodeDetails | 'missing' | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  const [shares, setShares] = useState<ShareRecord[] | undefined>();
  const [sharesError, setSharesError] = useState<string | undefined>();
  const [everyone, setEveryone] = useState<Person[]>([]);
  const loadShares = () =>
    nodeShares(uuid).then(
      (list) => {
        setShares(list);
        setSharesError(undefined);
      },
      (err: unknown) => setSharesError(errorText(err)),
    );
  useEffect(() => {
    nodeDetails(uuid).then(
      (details) => {
        setNode(details);
        void loadShares();
        people(currentSession()?.uuid ?? '').then(setEveryone, (err: unknown) => setLoadError(errorText(err)));
      },
      (err: unknown) => (err instanceof ApiError && err.status === 404 ? setNode('missing') : setLoadError(errorText(err))),
    );
  }, [uuid]);
  if (node === 'missing')
    return (
      <Page title={s.notFoundTitle}>
        <p>{s.notFoundText}</p>
      </Page>
    );
  if (!node)
    return (
      <Page title={t.loading}>
        <FormError text={loadError} />
      </Page>
    );
  const links = shares?.filter((x) => x.type !== 'private') ?? [];
  const privates = shares?.filter((x) => x.type === 'private') ?? [];
  return (
    <Page title={s.shareTitle(node.name)}>
      <p>
        {s.ownedBy(node.type, node.owner_fullname)} <Link href={node.type === 'Dir' ? `/files/${node.uuid}` : `/item/${node.uuid}`}>{node.type === 'Dir' ? s.openFolder : s.details}</Link>
      </p>
      <FormError text={loadError} />
      <section aria-labelledby="links-heading">
        <h2 id="links-heading">{s.links}</h2>
        <p>{s.linksIntro}</p>
        <FormError text={sharesError} />
        {shares && <ShareList shares={links} empty={s.noLinks} onDeleted={() => void loadShares()} />}
        <LinkForm node={node} onMade={() => void loadShares()} />
      </section>
      <section aria-labelledby="private-heading">
        <h2 id="private-heading">{s.privateShares}</h2>
        <p>{s.privateIntro}</p>
        {shares && <ShareList shares={privates} empty={s.noPrivate} onDeleted={() => void loadShares()} />}
        <RecipientsForm node={node} mode="private" everyone={everyone} onMade={() => void loadShares()} />
      </section>
      <section aria-labelledby="copy-heading">
        <h2 id="copy-heading">{s.copyTitle}</h2>
        <p>{s.copyIntro}</p>
        <RecipientsForm node={node} mode="copy" everyone={everyone} onMade={() => undefined} />
      </section>
    </Page>
  );
}
