/**
 * The people and groups a copy or a private share may go to, as checkboxes in a fieldset with
 * its error beside it: the organization's active users but the caller (GET /api/users), and the
 * groups the store lets the caller see (GET /api/groups, all of them where show=all is allowed)
 * but the group owning the node (the store refuses those anyway).
 */
import { useEffect, useState } from 'preact/hooks';
import { people as listPeople, shareableGroups, sharingErrorText, type Group, type Person } from '../api/sharing.js';
import { currentSession } from '../session.js';
import { t } from '../strings/index.js';

export interface Choices {
  people: Person[];
  groups: Group[];
}

/** Loads the choices once for the page; an error in words if they cannot be loaded. */
export function useChoices(ready: boolean, ownerGroup: string | undefined): { choices: Choices | undefined; error: string | undefined } {
  const [choices, setChoices] = useState<Choices | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    if (!ready) return;
    const me = currentSession()?.uuid;
    Promise.all([listPeople(), shareableGroups()]).then(
      ([users, groups]) => setChoices({ people: users.filter((p) => p.uuid !== me), groups: groups.filter((g) => g.group_uuid !== ownerGroup) }),
      (err: unknown) => setError(sharingErrorText(err)),
    );
  }, [ready, ownerGroup]);
  return { choices, error };
}

export function SharingRecipients(props: { id: string; choices: Choices | undefined; loadError: string | undefined; chosen: ReadonlySet<string>; onChange: (chosen: Set<string>) => void; error: string | undefined }) {
  const { id, choices, loadError, chosen, onChange, error } = props;
  // An organization may have thousands of people: a filter by name or email, the chosen always kept in view.
  const [find, setFind] = useState('');
  const needle = find.trim().toLowerCase();
  const shown = (uuid: string, ...words: string[]) => needle === '' || chosen.has(uuid) || words.some((w) => w.toLowerCase().includes(needle));
  const people = choices?.people.filter((p) => shown(p.uuid, p.fullname, p.email)) ?? [];
  const groups = choices?.groups.filter((g) => shown(g.group_uuid, g.group_name)) ?? [];
  const toggle = (uuid: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(uuid);
    else next.delete(uuid);
    onChange(next);
  };
  const box = (uuid: string, label: string, detail?: string) => (
    <li key={uuid}>
      <label>
        <input type="checkbox" checked={chosen.has(uuid)} onChange={(event) => toggle(uuid, (event.currentTarget as HTMLInputElement).checked)} />
        {label}
        {detail && <span class="hint"> {detail}</span>}
      </label>
    </li>
  );
  return (
    <fieldset class="sharing-recipients" aria-describedby={error ? `${id}-error` : undefined} aria-invalid={error ? 'true' : undefined}>
      <legend>{t.sharing.recipients}</legend>
      {loadError && <p class="error">{loadError}</p>}
      {!choices && !loadError && <p>{t.loading}</p>}
      {choices && choices.people.length === 0 && choices.groups.length === 0 && <p>{t.sharing.nobodyToChoose}</p>}
      {choices && choices.people.length + choices.groups.length > 0 && (
        <div class="field">
          <label for={`${id}-find`}>{t.sharing.find}</label>
          <input id={`${id}-find`} type="search" value={find} onInput={(event) => setFind((event.currentTarget as HTMLInputElement).value)} />
        </div>
      )}
      {choices && needle !== '' && people.length + groups.length === 0 && <p>{t.sharing.nobodyFound(find.trim())}</p>}
      {people.length > 0 && (
        <>
          <p class="sharing-recipients-head" id={`${id}-people`}>{t.sharing.people}</p>
          <ul aria-labelledby={`${id}-people`}>{people.map((p) => box(p.uuid, p.fullname, p.email))}</ul>
        </>
      )}
      {groups.length > 0 && (
        <>
          <p class="sharing-recipients-head" id={`${id}-groups`}>{t.sharing.groups}</p>
          <ul aria-labelledby={`${id}-groups`}>{groups.map((g) => box(g.group_uuid, g.group_name))}</ul>
        </>
      )}
      {error && (
        <p class="error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </fieldset>
  );
}
