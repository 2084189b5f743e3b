/**
 * What the admin sections share about the built-in admin (pages/admin*.tsx; docs/extensions.md
 * "Organizations"): the note on a control only the built-in admin has, and OrganizationPicker,
 * the built-in admin's choice of organization for the users and groups sections (org_id).
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { adminApi, type Organization } from '../api/admin.js';
import { t } from '../strings/index.js';

/** A note on a control only the built-in admin has. */
export function BuiltinOnly({ children }: { children?: ComponentChildren }) {
  return (
    <p class="builtin-note">
      <strong>{t.admin.builtinOnly}</strong> {children}
    </p>
  );
}

/** The built-in admin's choice of organization for a new user or group; nothing when there is only one. */
export function OrganizationPicker({ value, onValue }: { value: string | undefined; onValue: (id: string | undefined) => void }) {
  const [list, setList] = useState<Organization[]>([]);
  useEffect(() => void adminApi.organizations().then(setList, () => undefined), []);
  if (list.length < 2) return null;
  return (
    <div class="field">
      <label for="org-picker">{t.admin.organizations.pick}</label>
      <select id="org-picker" value={value ?? ''} onChange={(e) => onValue((e.currentTarget as HTMLSelectElement).value || undefined)}>
        <option value="">{t.admin.organizations.yours}</option>
        {list.map((org) => (
          <option key={org.id} value={org.id}>
            {org.name} ({org.id})
          </option>
        ))}
      </select>
      <BuiltinOnly />
    </div>
  );
}
