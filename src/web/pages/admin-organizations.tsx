/**
 * /admin/organizations (issue 24 item 7; docs/extensions.md "Organizations"): the built-in admin
 * lists, creates and deletes organizations; another administrator sees their own organization
 * and the note that only the built-in admin manages them.
 */
import { useState } from 'preact/hooks';
import { ApiError, errorText } from '../api/client.js';
import { adminApi, type About } from '../api/admin.js';
import { useResource } from '../api/use-resource.js';
import { BuiltinOnly } from '../components/builtin-admin.js';
import { Field, FormError } from '../components/field.js';
import { t } from '../strings/index.js';

const s = () => t.admin.organizations;

export function AdminOrganizations({ about }: { about: About }) {
  const { data: list, error: loadError, refresh: load } = useResource(
    () => (about.builtin_admin ? adminApi.organizations() : adminApi.organization(about.org_id).then((one) => [one])),
    [about.builtin_admin, about.org_id],
  );
  const [form, setForm] = useState({ id: '', name: '', unlimited: false });
  const [actionError, setError] = useState<string | undefined>();
  const error = actionError ?? loadError;
  const [formError, setFormError] = useState<string | undefined>();
  // A refusal the store names a field of (`id: ...`, `name: ...`) is said at that field.
  const [fieldError, setFieldError] = useState<{ id?: string; name?: string }>({});
  const create = async (event: Event) => {
    event.preventDefault();
    setFormError(undefined);
    setFieldError({});
    try {
      await adminApi.createOrganization({ id: form.id.trim(), name: form.name.trim(), allow_unlimited_quota: form.unlimited });
      setForm({ id: '', name: '', unlimited: false });
      await load();
    } catch (err) {
      const field = err instanceof ApiError ? err.field() : undefined;
      if (field === 'id' || field === 'name') setFieldError({ [field]: errorText(err) });
      else setFormError(errorText(err));
    }
  };
  const remove = async (id: string) => {
    setError(undefined);
    try {
      await adminApi.deleteOrganization(id);
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <>
      <BuiltinOnly>{s().intro}</BuiltinOnly>
      <FormError text={error} />
      {list === undefined ? (
        !error && <p>{t.loading}</p>
      ) : (
        <ul class="admin-list">
          {list.map((org) => (
            <li key={org.id}>
              <strong>{org.name}</strong> <span class="muted">({org.id})</span> {s().counts(org.user_count, org.group_count)}
              {org.allow_unlimited_quota ? ` ${s().unlimitedAllowed}` : ''}{' '}
              {about.builtin_admin && org.id !== 'default' && (
                <button type="button" class="secondary" aria-label={s().deleteOf(org.name)} onClick={() => void remove(org.id)}>
                  {s().delete}
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {about.builtin_admin && (
        <form class="panel" onSubmit={create} noValidate>
          <h2>{s().create}</h2>
          <Field id="org-id" label={s().id} hint={s().idHint} value={form.id} onValue={(id) => setForm({ ...form, id })} maxLength={64} error={fieldError.id} />
          <Field id="org-name" label={s().name} value={form.name} onValue={(name) => setForm({ ...form, name })} maxLength={100} error={fieldError.name} />
          <div class="check">
            <input type="checkbox" id="org-unlimited" checked={form.unlimited} onChange={(e) => setForm({ ...form, unlimited: (e.currentTarget as HTMLInputElement).checked })} />
            <label for="org-unlimited">{s().unlimited}</label>
          </div>
          <FormError text={formError} />
          <button type="submit">{s().create}</button>
        </form>
      )}
    </>
  );
}
