/**
 * Share requests (issue 24, item 5): `/requests`. For an approver, the pending requests they may
 * decide (GET /api/pending_shares): what is asked (the node, the kind of share, to whom, a link's
 * password and expiry, a copy's size), by whom and in which drive, with approve or reject and an
 * optional note. For everyone, their own requests with their status (GET /api/my_pending_shares),
 * and withdraw while pending. A refusal (a request decided meanwhile, a node gone or in trash) is
 * said in the store's words beside the request, which tell the approver what to do (not the
 * requester's words of the share page: "restore it first" is not the approver's to do); the
 * request stays as it was. An approver previews the file a request is for (an image or plain
 * text, through the store's approver door: GET /resources/auth/pending/...), so they see what
 * they decide on without being given the file.
 */
import { useState } from 'preact/hooks';
import { errorText } from '../api/client.js';
import { decide, myRequests, pendingFileUrl, pendingRequests, withdraw, type ShareRequest } from '../api/sharing.js';
import { useResource } from '../api/use-resource.js';
import { FilePreview } from '../components/file-preview.js';
import { Page } from '../components/page.js';
import { requestsChanged } from '../components/waiting-count.js';
import { Link } from '../router.js';
import { t } from '../strings/index.js';
import { when } from './share.js';

const s = t.sharing;

/** What the request asks, beyond its node: to whom, or a link's password and expiry, or a copy's size. */
function asked(request: ShareRequest): string[] {
  const info = request.share_info;
  const facts = [s.inWorkspace(request.workspace_name)];
  if (info.recipients) facts.push(s.target(info.recipients.map((r) => r.name).join(', ')) + (info.writable ? ` (${s.writableNote})` : ''));
  if (request.share_type === 'public' || request.share_type === 'upload') facts.push(s.linkNote(info.password_protected === true, info.expires ? when(info.expires) : undefined));
  if (request.comment) facts.push(s.theirComment(request.comment));
  facts.push(s.askedOn(when(request.requested_at)));
  return facts;
}

function ToDecide({ request, onDone }: { request: ShareRequest; onDone: (text: string) => void }) {
  const name = request.share_info.node_name;
  const [note, setNote] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const id = `sharing-note-${request.pending_uuid}`;
  const answer = async (status: 'approved' | 'rejected') => {
    setBusy(true);
    setError(undefined);
    try {
      await decide(request.pending_uuid, status, note.trim());
      onDone(status === 'approved' ? s.approvedDone(name) : s.rejectedDone(name));
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };
  return (
    <li class="panel sharing-request">
      <h3>{s.requestLine(request.requester_fullname, s.requestKind[request.share_type] ?? request.share_type, name)}</h3>
      <ul class="sharing-facts">
        {asked(request).map((fact) => (
          <li key={fact}>{fact}</li>
        ))}
      </ul>
      {request.share_info.node_type === 'File' && (
        <details class="sharing-preview">
          <summary>{s.previewOf(name)}</summary>
          <FilePreview url={pendingFileUrl(request)} name={name} />
        </details>
      )}
      <div class="field">
        <label for={id}>{s.decisionCommentFor(name)}</label>
        <input id={id} value={note} onInput={(event) => setNote((event.currentTarget as HTMLInputElement).value)} />
      </div>
      <div class="actions">
        <button type="button" disabled={busy} aria-label={s.approveNamed(name)} aria-describedby={error ? `${id}-error` : undefined} onClick={() => void answer('approved')}>
          {s.approve}
        </button>
        <button type="button" class="secondary" disabled={busy} aria-label={s.rejectNamed(name)} onClick={() => void answer('rejected')}>
          {s.reject}
        </button>
      </div>
      {error && (
        <p class="error" id={`${id}-error`} role="alert">
          {error}
        </p>
      )}
    </li>
  );
}

function Mine({ request, onDone }: { request: ShareRequest; onDone: (text: string) => void }) {
  const name = request.share_info.node_name;
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const take = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await withdraw(request.pending_uuid);
      onDone(s.withdrawn(name));
    } catch (err) {
      setError(errorText(err));
      setBusy(false);
    }
  };
  const kind = s.requestKind[request.share_type] ?? request.share_type;
  return (
    <li class="panel sharing-request">
      <h3>{s.myRequestLine(kind.charAt(0).toUpperCase() + kind.slice(1), name)}</h3>
      <p>
        {s.status}: <strong>{s.state[request.state] ?? request.state}</strong>
        {request.decided_at ? ` (${s.decidedOn(when(request.decided_at))})` : ''}
      </p>
      <ul class="sharing-facts">
        {asked(request).map((fact) => (
          <li key={fact}>{fact}</li>
        ))}
        {request.approval_comment && <li>{s.approverSaid(request.approval_comment)}</li>}
      </ul>
      <p>
        <Link href={`/share/${request.share_info.node_uuid}`}>{s.sharingOf(name)}</Link>
      </p>
      {request.state === 'pending' && (
        <div class="actions">
          <button type="button" class="secondary" disabled={busy} aria-label={s.withdrawNamed(name)} onClick={() => void take()}>
            {s.withdraw}
          </button>
        </div>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </li>
  );
}

async function loadRequests(): Promise<{ toDecide: ShareRequest[]; mine: ShareRequest[] }> {
  const [toDecide, mine] = await Promise.all([pendingRequests(), myRequests()]);
  return { toDecide, mine };
}

export function Requests() {
  const { data, error, refresh } = useResource(loadRequests, []);
  const [message, setMessage] = useState<string | undefined>();
  const done = (text: string) => {
    setMessage(text);
    requestsChanged();
    void refresh();
  };
  const toDecide = data?.toDecide;
  const mine = data?.mine;

  return (
    <Page title={s.requestsTitle}>
      <p role="status" class="notice sharing-message">
        {message}
      </p>
      {error && (
        <>
          <p class="error" role="alert">
            {error}
          </p>
          <button type="button" onClick={() => void refresh()}>
            {t.retry}
          </button>
        </>
      )}
      {!error && !mine && <p>{t.loading}</p>}
      {toDecide && (
        <section aria-labelledby="sharing-to-decide">
          <h2 id="sharing-to-decide">{s.toDecideTitle}</h2>
          {toDecide.length === 0 ? (
            <p>{s.noneToDecide}</p>
          ) : (
            <ul class="sharing-requests">
              {toDecide.map((r) => (
                <ToDecide key={r.pending_uuid} request={r} onDone={done} />
              ))}
            </ul>
          )}
        </section>
      )}
      {mine && (
        <section aria-labelledby="sharing-my-requests">
          <h2 id="sharing-my-requests">{s.myRequestsTitle}</h2>
          {mine.length === 0 ? (
            <p>{s.noMyRequests}</p>
          ) : (
            <ul class="sharing-requests">
              {mine.map((r) => (
                <Mine key={r.pending_uuid} request={r} onDone={done} />
              ))}
            </ul>
          )}
        </section>
      )}
    </Page>
  );
}
