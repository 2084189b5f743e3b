/**
 * `/requests` (issue 24, item 5), the approval workflow: for approvers, the pending requests
 * they may decide (who asks, for what kind of share of which node, to whom), each approved or
 * rejected with an optional comment; for requesters, their own requests with their state, a
 * pending one withdrawn. A refusal (the node gone, the link's expiry passed...) is said next to
 * that request's buttons.
 */
import { useEffect, useState } from 'preact/hooks';
import { errorText } from '../api.js';
import { decide, myRequests, pendingToDecide, withdraw, type ShareRequest } from '../api/sharing.js';
import { FormError } from '../components/field.js';
import { Page } from '../components/page.js';
import { t } from '../strings.js';

const s = t.sharing;

function details(request: ShareRequest): string {
  const info = request.share_info;
  const parts: string[] = [];
  if (info.recipients && info.recipients.length > 0) parts.push(s.recipientsList(info.recipients.map((r) => r.name).join(', ')));
  if (info.password_protected !== undefined) parts.push(info.password_protected ? s.passwordProtected : s.noPassword);
  if (info.expires !== undefined) parts.push(info.expires === null ? s.neverExpires : s.expires(s.time(info.expires)));
  return parts.join(' ');
}

function ToDecide({ request, onDecided }: { request: ShareRequest; onDecided: () => void }) {
  const [comment, setComment] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const name = request.share_info.node_name;
  const id = `decide-${request.pending_uuid}`;
  const go = async (status: 'approved' | 'rejected') => {
    setBusy(true);
    setError(undefined);
    try {
      await decide(request.pending_uuid, status, comment);
      onDecided();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <li class="panel request">
      <p>
        <strong>{s.asks(request.requester_fullname, s.kind[request.share_type] ?? request.share_type, name, request.workspace_name)}</strong>
      </p>
      <p>
        {details(request)} {s.requestedAt(s.time(request.requested_at))}
      </p>
      {request.comment && <p>{s.theirComment(request.comment)}</p>}
      <div class="field">
        <label for={id}>{s.decisionComment(name)}</label>
        <input id={id} value={comment} onInput={(event) => setComment((event.currentTarget as HTMLInputElement).value)} />
      </div>
      <FormError text={error} />
      <div class="actions">
        <button type="button" disabled={busy} aria-label={s.approve(name)} onClick={() => void go('approved')}>
          {s.approveShort}
        </button>
        <button type="button" class="secondary" disabled={busy} aria-label={s.reject(name)} onClick={() => void go('rejected')}>
          {s.rejectShort}
        </button>
      </div>
    </li>
  );
}

export function Requests() {
  const [toDecide, setToDecide] = useState<ShareRequest[] | undefined>();
  const [mine, setMine] = useState<ShareRequest[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [said, setSaid] = useState('');
  const load = () =>
    Promise.all([pendingToDecide(), myRequests()]).then(
      ([a, b]) => {
        setToDecide(a);
        setMine(b);
      },
      (err: unknown) => setError(errorText(err)),
    );
  useEffect(() => void load(), []);
  const takeBack = async (request: ShareRequest) => {
    setError(undefined);
    setSaid('');
    try {
      const answer = await withdraw(request.pending_uuid);
      setSaid(s.decided(s.state[answer.state] ?? answer.state));
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <Page title={s.requestsTitle}>
      <FormError text={error} />
      <p role="status">{said}</p>
      <section aria-labelledby="decide-heading">
        <h2 id="decide-heading">{s.toDecide}</h2>
        {toDecide &&
          (toDecide.length === 0 ? (
            <p>{s.toDecideNone}</p>
          ) : (
            <ul class="requests">
              {toDecide.map((request) => (
                <ToDecide key={request.pending_uuid} request={request} onDecided={() => void load()} />
              ))}
            </ul>
          ))}
      </section>
      <section aria-labelledby="yours-heading">
        <h2 id="yours-heading">{s.yours}</h2>
        {mine &&
          (mine.length === 0 ? (
            <p>{s.yoursNone}</p>
          ) : (
            <ul class="share-list">
              {mine.map((request) => {
                const name = request.share_info.node_name;
                return (
                  <li key={request.pending_uuid}>
                    <strong>{s.yourRequest(s.kind[request.share_type] ?? request.share_type, name)}</strong> <span>{s.status(s.state[request.state] ?? request.state)}</span>{' '}
                    <span>{details(request)}</span>
                    {request.approval_comment && <span> {s.approverSaid(request.approval_comment)}</span>}{' '}
                    {request.state === 'pending' && (
                      <button type="button" class="secondary" aria-label={s.withdraw(name)} onClick={() => void takeBack(request)}>
                        {s.withdrawShort}
                      </button>
                    )}
                  </li>
                );
              })}
            </ul>
          ))}
      </section>
    </Page>
  );
}
