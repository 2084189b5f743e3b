/**
 * Shares (issue 24, item 5): `/shares`. What others share with the caller privately (the
 * `shared_with_you` listing), copies offered to the caller and to the groups whose incoming
 * shares they may answer (a group admin, or any member where the group's `accept_incoming` is
 * `members`) to accept or decline, and the caller's own links and private shares to revoke.
 */
import { useState } from 'preact/hooks';
import { useResource } from '../api/use-resource.js';
import { listFolder, type Entry } from '../api/files.js';
import { answerIncoming, groupProfile, incoming, myGroups, myShares, removeShare, sharingErrorText, type Incoming, type Share } from '../api/sharing.js';
import { Page } from '../components/page.js';
import { Link } from '../router.js';
import { t } from '../strings/index.js';
import { when } from './share.js';

const s = t.sharing;

interface Inbox {
  /** undefined: the caller's own. */
  group?: { uuid: string; name: string };
  items: Incoming[];
}

function IncomingRow({ item, group, onAnswered }: { item: Incoming; group: Inbox['group']; onAnswered: (text: string) => void }) {
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const answer = async (action: 'accept' | 'reject') => {
    setBusy(true);
    setError(undefined);
    try {
      await answerIncoming(item.uuid, action, group?.uuid);
      onAnswered(action === 'reject' ? s.declined(item.name) : group ? s.acceptedGroup(item.name, group.name) : s.accepted(item.name));
    } catch (err) {
      setError(sharingErrorText(err));
      setBusy(false);
    }
  };
  return (
    <li class="sharing-row">
      <span>
        <strong>{item.name}</strong> ({item.type === 'Dir' ? t.files.folderKind : t.files.bytes(item.size)}) {s.fromWhom(item.sharer_uuid ? item.sharer_fullname : s.sharerGone, when(item.shared_at))}
      </span>
      <span class="actions">
        <button type="button" disabled={busy} aria-label={s.acceptNamed(item.name)} onClick={() => void answer('accept')}>
          {s.accept}
        </button>
        <button type="button" class="secondary" disabled={busy} aria-label={s.declineNamed(item.name)} onClick={() => void answer('reject')}>
          {s.decline}
        </button>
      </span>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </li>
  );
}

function MyShareRow({ share, onRevoked }: { share: Share; onRevoked: (text: string) => void }) {
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const kind = s.linkKindName[share.type] ?? share.type;
  const revoke = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await removeShare(share.share_uuid);
      onRevoked(s.revoked(kind, share.node_name));
    } catch (err) {
      setError(sharingErrorText(err));
      setBusy(false);
    }
  };
  const extra = share.type === 'private' ? (share.recipients ?? []).map((r) => r.name).join(', ') : `${s.anyone}, ${share.password_protected ? s.withPassword : s.noPassword}`;
  return (
    <li class="sharing-row">
      <span>
        <Link href={`/share/${share.node_uuid}`}>{share.node_name}</Link> · {kind} · {extra} · {share.expires ? s.expiresOn(when(share.expires)) : s.neverExpires}
      </span>
      <button type="button" class="secondary" disabled={busy} aria-label={s.revokeNamed(kind, share.node_name)} onClick={() => void revoke()}>
        {s.revoke}
      </button>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </li>
  );
}

async function groupInboxes(): Promise<Inbox[]> {
  const groups = await myGroups();
  // Only the groups whose incoming shares the caller may answer (the store refuses the others).
  const answerable = await Promise.all(groups.map(async (g) => (g.is_admin || (await groupProfile(g.group_uuid)).accept_incoming === 'members' ? g : undefined)));
  return Promise.all(answerable.filter((g) => g !== undefined).map(async (g) => ({ group: { uuid: g.group_uuid, name: g.group_name }, items: await incoming(g.group_uuid) })));
}

async function loadShares(): Promise<{ shared: Entry[]; inboxes: Inbox[]; mine: Share[] }> {
  const [shared, own, groups, mine] = await Promise.all([listFolder('shared_with_you'), incoming(), groupInboxes(), myShares()]);
  return { shared, inboxes: [{ items: own }, ...groups], mine };
}

export function Shares() {
  const { data, error, refresh } = useResource(loadShares, []);
  const { shared, inboxes, mine } = data ?? {};
  const [message, setMessage] = useState<string | undefined>();
  const done = (text: string) => {
    setMessage(text);
    void refresh();
  };

  return (
    <Page title={s.sharesTitle}>
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
      {!error && !inboxes && <p>{t.loading}</p>}
      {inboxes?.map((box) => (
        <section key={box.group?.uuid ?? 'me'} aria-labelledby={`sharing-in-${box.group?.uuid ?? 'me'}`}>
          <h2 id={`sharing-in-${box.group?.uuid ?? 'me'}`}>{box.group ? s.incomingGroupTitle(box.group.name) : s.incomingTitle}</h2>
          {box.items.length === 0 ? (
            <p>{s.noIncoming}</p>
          ) : (
            <ul class="sharing-list">
              {box.items.map((item) => (
                <IncomingRow key={item.uuid} item={item} group={box.group} onAnswered={done} />
              ))}
            </ul>
          )}
          <p>
            <Link href={box.group ? `/files/incoming:${box.group.uuid}` : '/files/incoming'}>{s.openIncoming}</Link>
          </p>
        </section>
      ))}
      {shared && (
        <section aria-labelledby="sharing-with-me">
          <h2 id="sharing-with-me">{s.sharedWithMeTitle}</h2>
          {shared.length === 0 ? (
            <p>{s.noSharedWithMe}</p>
          ) : (
            <ul class="sharing-list">
              {shared.map((e) => (
                <li key={e.uuid}>
                  <Link href={e.type === 'Dir' ? `/files/${e.uuid}` : `/item/${e.uuid}`}>{e.name}</Link>
                </li>
              ))}
            </ul>
          )}
          <p>
            <Link href="/files/shared_with_you">{s.openSharedWithMe}</Link>
          </p>
        </section>
      )}
      {mine && (
        <section aria-labelledby="sharing-mine">
          <h2 id="sharing-mine">{s.mySharesTitle}</h2>
          {mine.length === 0 ? (
            <p>{s.noMyShares}</p>
          ) : (
            <ul class="sharing-list">
              {mine.map((x) => (
                <MyShareRow key={x.share_uuid} share={x} onRevoked={done} />
              ))}
            </ul>
          )}
        </section>
      )}
    </Page>
  );
}
