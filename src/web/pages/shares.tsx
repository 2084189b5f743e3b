/**
 * `/shares` (issue 24, item 5): incoming copies to accept or decline (the caller's, and each of
 * their groups' that has some, with buttons only where the group's accept_incoming lets the
 * caller answer), what is shared with the caller (their shared_with_you), and the links and
 * shares the caller made, each with Revoke.
 */
import { useEffect, useState } from 'preact/hooks';
import { errorText } from '../api.js';
import { answerIncoming, incoming, myShares, removeShare, sharedWithMe, type Entry, type IncomingBox, type IncomingShare, type ShareRecord } from '../api/sharing.js';
import { FormError } from '../components/field.js';
import { Page } from '../components/page.js';
import { Link } from '../router.js';
import { t } from '../strings.js';

const s = t.sharing;
const hrefOf = (uuid: string, type: string) => (type === 'Dir' ? `/files/${uuid}` : `/item/${uuid}`);

function Incoming() {
  const [boxes, setBoxes] = useState<IncomingBox[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [said, setSaid] = useState<{ text: string; href?: string } | undefined>();
  const load = () => incoming().then(setBoxes, (err: unknown) => setError(errorText(err)));
  useEffect(() => void load(), []);
  const answer = async (box: IncomingBox, item: IncomingShare, action: 'accept' | 'reject') => {
    setError(undefined);
    setSaid(undefined);
    try {
      const result = await answerIncoming(box.group?.uuid, item.uuid, action);
      setSaid(action === 'accept' ? { text: s.accepted(item.name), ...(result.node_uuid ? { href: hrefOf(result.node_uuid, item.type) } : {}) } : { text: s.declined(item.name) });
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const pending = boxes?.some((box) => box.items.length > 0);
  return (
    <section aria-labelledby="incoming-heading">
      <h2 id="incoming-heading">{s.incoming}</h2>
      <FormError text={error} />
      <p role="status">
        {said?.text}
        {said?.href && (
          <>
            {' '}
            <Link href={said.href}>{s.openIt}</Link>
          </>
        )}
      </p>
      {boxes === undefined ? (
        !error && <p>{t.loading}</p>
      ) : !pending ? (
        <p>{s.incomingNone}</p>
      ) : (
        boxes
          .filter((box) => box.items.length > 0)
          .map((box) => (
            <div key={box.group?.uuid ?? 'mine'}>
              {box.group && <h3>{s.incomingFor(box.group.name)}</h3>}
              {box.group && !box.group.mayAnswer && <p>{s.onlyAdmins}</p>}
              <ul class="share-list">
                {box.items.map((item) => (
                  <li key={item.uuid}>
                    <strong>{item.name}</strong> <span>{s.incomingFrom(item.sharer_fullname, s.time(item.shared_at))}</span>
                    {(!box.group || box.group.mayAnswer) && (
                      <span class="actions">
                        <button type="button" aria-label={s.accept(item.name)} onClick={() => void answer(box, item, 'accept')}>
                          {s.acceptShort}
                        </button>
                        <button type="button" class="secondary" aria-label={s.decline(item.name)} onClick={() => void answer(box, item, 'reject')}>
                          {s.declineShort}
                        </button>
                      </span>
                    )}
                  </li>
                ))}
              </ul>
            </div>
          ))
      )}
    </section>
  );
}

function SharedWithMe() {
  const [entries, setEntries] = useState<Entry[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => void sharedWithMe().then(setEntries, (err: unknown) => setError(errorText(err))), []);
  return (
    <section aria-labelledby="shared-heading">
      <h2 id="shared-heading">{s.sharedWithMe}</h2>
      <FormError text={error} />
      {entries &&
        (entries.length === 0 ? (
          <p>{s.sharedWithMeNone}</p>
        ) : (
          <ul class="share-list">
            {entries.map((entry) => (
              <li key={entry.uuid}>
                <Link href={hrefOf(entry.uuid, entry.type)}>{entry.name}</Link>
              </li>
            ))}
          </ul>
        ))}
    </section>
  );
}

function Mine() {
  const [shares, setShares] = useState<ShareRecord[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [said, setSaid] = useState('');
  const load = () => myShares().then(setShares, (err: unknown) => setError(errorText(err)));
  useEffect(() => void load(), []);
  const revoke = async (share: ShareRecord) => {
    setError(undefined);
    setSaid('');
    try {
      await removeShare(share.share_uuid);
      setSaid(s.revoked);
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <section aria-labelledby="mine-heading">
      <h2 id="mine-heading">{s.mine}</h2>
      <FormError text={error} />
      <p role="status">{said}</p>
      {shares &&
        (shares.length === 0 ? (
          <p>{s.mineNone}</p>
        ) : (
          <ul class="share-list">
            {shares.map((share) => (
              <li key={share.share_uuid}>
                <Link href={`/share/${share.node_uuid}`}>{share.node_name}</Link> <span>{s.kind[share.type]}</span>
                {share.recipients && <span> {s.with(share.recipients.map((r) => r.name).join(', '))}</span>}{' '}
                <button type="button" class="secondary" aria-label={s.revoke(s.kind[share.type] ?? '', share.node_name)} onClick={() => void revoke(share)}>
                  {s.revokeShort}
                </button>
              </li>
            ))}
          </ul>
        ))}
    </section>
  );
}

export function Shares() {
  return (
    <Page title={s.sharesTitle}>
      <Incoming />
      <SharedWithMe />
      <Mine />
    </Page>
  );
}
