/**
 * Choosing people and groups to share with: a search field over the users and groups the store
 * lets the caller name (api/sharing.ts people()), matches as Add buttons, the chosen ones as a
 * list with Remove buttons, and the store's refusal next to it (tied to the field).
 */
import { useState } from 'preact/hooks';
import type { Person } from '../api/sharing.js';
import { t } from '../strings.js';

const SHOWN = 8;

export function RecipientPicker(props: { id: string; everyone: Person[]; chosen: Person[]; onChange: (chosen: Person[]) => void; error?: string | undefined }) {
  const { id, everyone, chosen, onChange, error } = props;
  const [query, setQuery] = useState('');
  const q = query.trim().toLowerCase();
  const matches = q === '' ? [] : everyone.filter((p) => !chosen.some((c) => c.uuid === p.uuid) && `${p.name} ${p.detail}`.toLowerCase().includes(q)).slice(0, SHOWN);
  const label = (p: Person) => (p.group ? `${p.name} (${t.sharing.group})` : `${p.name} (${p.detail})`);
  return (
    <fieldset class="recipients">
      <legend>{t.sharing.recipients}</legend>
      {chosen.length === 0 ? (
        <p>{t.sharing.recipientsNone}</p>
      ) : (
        <ul class="chosen">
          {chosen.map((p) => (
            <li key={p.uuid}>
              {label(p)}{' '}
              <button type="button" class="secondary" aria-label={t.sharing.remove(p.name)} onClick={() => onChange(chosen.filter((c) => c.uuid !== p.uuid))}>
                {t.sharing.removeShort}
              </button>
            </li>
          ))}
        </ul>
      )}
      <div class="field">
        <label for={id}>{t.sharing.recipientsFind}</label>
        <input
          id={id}
          type="search"
          autoComplete="off"
          value={query}
          onInput={(event) => setQuery((event.currentTarget as HTMLInputElement).value)}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? `${id}-error` : undefined}
        />
        {error && (
          <p class="error" id={`${id}-error`}>
            {error}
          </p>
        )}
      </div>
      {q !== '' && (
        <ul class="matches">
          {matches.length === 0 && <li>{t.sharing.recipientsNoMatch}</li>}
          {matches.map((p) => (
            <li key={p.uuid}>
              <button
                type="button"
                class="secondary"
                onClick={() => {
                  onChange([...chosen, p]);
                  setQuery('');
                }}
              >
                {t.sharing.add(label(p))}
              </button>
            </li>
          ))}
        </ul>
      )}
    </fieldset>
  );
}
