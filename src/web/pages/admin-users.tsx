/**
 * /admin/users (issue 24 item 7): the organization's users (GET /api/admin/users), searched by
 * name or email as one types; create one; per user: reset the password, disable or enable,
 * set the quota, turn 2FA off. The built-in admin may pick another organization (org_id) and is
 * the only one who may change the built-in admin's own record: other administrators see that
 * row without controls, with the note.
 */
import { useState } from 'preact/hooks';
import { ApiError, errorText } from '../api/client.js';
import { adminApi, quotaErrorText, type About, type AdminUser } from '../api/admin.js';
import { useResource } from '../api/use-resource.js';
import { BuiltinOnly, OrganizationPicker } from '../components/builtin-admin.js';
import { Field, FormError } from '../components/field.js';
import { currentSession } from '../session.js';
import { t } from '../strings/index.js';
import { bytesToMebibytes, mebibytesToBytes, sizeText } from '../strings/units.js';

const s = () => t.admin.users;

function quotaText(user: AdminUser): string {
  return user.disk_quota > 0 ? s().usedOf(sizeText(user.disk_used), sizeText(user.disk_quota)) : s().usedUnlimited(sizeText(user.disk_used));
}

function UserRow({ user, about, onChanged }: { user: AdminUser; about: About; onChanged: () => void }) {
  const [password, setPassword] = useState('');
  const [quota, setQuota] = useState(user.disk_quota > 0 ? bytesToMebibytes(user.disk_quota) : '0');
  const [problems, setProblems] = useState<{ password?: string | undefined; quota?: string | undefined; form?: string | undefined }>({});
  const [done, setDone] = useState('');
  const [busy, setBusy] = useState(false);
  const isBuiltin = user.email === 'admin' || (about.builtin_admin && user.uuid === currentSession()?.uuid);
  const locked = isBuiltin && !about.builtin_admin;
  const run = async (work: () => Promise<unknown>, message: string, field: 'password' | 'quota' | 'form' = 'form') => {
    setBusy(true);
    setProblems({});
    setDone('');
    try {
      await work();
      setDone(message);
      onChanged();
    } catch (err) {
      setProblems({ [err instanceof ApiError && err.status === 400 ? field : 'form']: field === 'quota' ? quotaErrorText(err) : errorText(err) });
    } finally {
      setBusy(false);
    }
  };
  const setQuotaNow = (event: Event) => {
    event.preventDefault();
    const bytes = mebibytesToBytes(quota);
    if (Number.isNaN(bytes)) return setProblems({ quota: s().quotaInvalid });
    void run(() => adminApi.updateUser(user.uuid, { disk_quota: bytes }), s().quotaSaved, 'quota');
  };
  const reset = (event: Event) => {
    event.preventDefault();
    if (password === '') return setProblems({ password: t.signIn.passwordMissing });
    void run(() => adminApi.updateUser(user.uuid, { password }).then(() => setPassword('')), s().passwordReset, 'password');
  };
  const id = user.uuid;
  return (
    <li>
      <details>
        <summary>
          {user.fullname} <span class="muted">{user.email}</span>{' '}
          <span class="muted">
            {[user.is_admin ? s().administrator : '', user.is_active ? '' : s().disabled, user.twofa ? s().twofaOn : ''].filter(Boolean).join(', ')}
          </span>
        </summary>
        <p>
          {quotaText(user)}
          {user.groups.length > 0 && (
            <>
              <br />
              {s().groups(user.groups.map((g) => g.group_name).join(', '))}
            </>
          )}
        </p>
        {locked ? (
          <BuiltinOnly>{s().builtinRecord}</BuiltinOnly>
        ) : (
          <>
            {isBuiltin && <BuiltinOnly>{s().builtinRecord}</BuiltinOnly>}
            <form onSubmit={setQuotaNow} noValidate>
              <Field id={`quota-${id}`} label={s().quotaOf(user.fullname)} hint={s().quotaHint} inputMode="decimal" value={quota} onValue={setQuota} error={problems.quota} />
              <button type="submit" disabled={busy}>
                {s().setQuota}
              </button>
            </form>
            <form onSubmit={reset} noValidate>
              <Field id={`password-${id}`} label={s().newPasswordOf(user.fullname)} hint={t.signIn.passwordRule} type="password" autoComplete="new-password" value={password} onValue={setPassword} error={problems.password} />
              <button type="submit" disabled={busy}>
                {s().resetPassword}
              </button>
            </form>
            <div class="actions">
              {!isBuiltin && (
                <button type="button" class="secondary" disabled={busy} onClick={() => void run(() => adminApi.updateUser(user.uuid, { is_active: !user.is_active }), user.is_active ? s().disabledDone : s().enabledDone)}>
                  {user.is_active ? s().disable(user.fullname) : s().enable(user.fullname)}
                </button>
              )}
              {user.twofa && (
                <button type="button" class="secondary" disabled={busy} onClick={() => void run(() => adminApi.updateUser(user.uuid, { twofa: false }), s().twofaOffDone)}>
                  {s().twofaOff(user.fullname)}
                </button>
              )}
            </div>
          </>
        )}
        <FormError text={problems.form} />
        <p role="status">{done}</p>
      </details>
    </li>
  );
}

function CreateUser({ orgId, onCreated }: { orgId: string | undefined; onCreated: () => void }) {
  const [form, setForm] = useState({ fullname: '', email: '', password: '', quota: '0', admin: false });
  const [problems, setProblems] = useState<Record<string, string | undefined>>({});
  const [done, setDone] = useState('');
  const [busy, setBusy] = useState(false);
  const set = (key: keyof typeof form) => (value: string) => setForm({ ...form, [key]: value });
  const create = async (event: Event) => {
    event.preventDefault();
    setDone('');
    const disk_quota = mebibytesToBytes(form.quota);
    if (Number.isNaN(disk_quota)) return setProblems({ quota: s().quotaInvalid });
    setBusy(true);
    setProblems({});
    try {
      await adminApi.createUser({ fullname: form.fullname.trim(), email: form.email.trim(), password: form.password, disk_quota, is_active: true, is_admin: form.admin }, orgId);
      setDone(s().created(form.fullname.trim()));
      setForm({ fullname: '', email: '', password: '', quota: form.quota, admin: false });
      onCreated();
    } catch (err) {
      const field = err instanceof ApiError ? (err.code === 'invalid_password' ? 'password' : err.code === 'email_taken' ? 'email' : err.field()) : undefined;
      const key = field === 'disk_quota' ? 'quota' : field;
      setProblems(key && ['fullname', 'email', 'password', 'quota'].includes(key) ? { [key]: errorText(err) } : { form: errorText(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel" onSubmit={create} noValidate>
      <h2>{s().create}</h2>
      <Field id="new-fullname" label={s().fullname} hint={s().fullnameHint} value={form.fullname} onValue={set('fullname')} error={problems.fullname} autoComplete="off" />
      <Field id="new-email" label={s().email} type="email" value={form.email} onValue={set('email')} error={problems.email} autoComplete="off" />
      <Field id="new-password" label={s().password} hint={t.signIn.passwordRule} type="password" autoComplete="new-password" value={form.password} onValue={set('password')} error={problems.password} />
      <Field id="new-quota" label={s().quota} hint={s().quotaHint} inputMode="decimal" value={form.quota} onValue={set('quota')} error={problems.quota} />
      <div class="check">
        <input type="checkbox" id="new-admin" checked={form.admin} onChange={(e) => setForm({ ...form, admin: (e.currentTarget as HTMLInputElement).checked })} />
        <label for="new-admin">{s().makeAdmin}</label>
      </div>
      <FormError text={problems.form} />
      <button type="submit" disabled={busy}>
        {s().create}
      </button>
      <p role="status">{done}</p>
    </form>
  );
}

export function AdminUsers({ about }: { about: About }) {
  const [orgId, setOrgId] = useState<string | undefined>();
  const { data: users, error, refresh } = useResource(() => adminApi.users(orgId), [orgId]);
  const load = refresh;
  const [query, setQuery] = useState('');
  const q = query.trim().toLowerCase();
  const shown = users?.filter((user) => q === '' || user.fullname.toLowerCase().includes(q) || user.email.toLowerCase().includes(q));
  return (
    <>
      {about.builtin_admin && <OrganizationPicker value={orgId} onValue={setOrgId} />}
      <CreateUser orgId={orgId} onCreated={() => void load()} />
      <h2>{s().list}</h2>
      <Field id="user-search" label={s().search} type="search" value={query} onValue={setQuery} />
      <FormError text={error} />
      {shown === undefined ? (
        !error && <p>{t.loading}</p>
      ) : shown.length === 0 ? (
        <p>{s().noneFound}</p>
      ) : (
        <ul class="admin-list">
          {shown.map((user) => (
            <UserRow key={user.uuid} user={user} about={about} onChanged={() => void load()} />
          ))}
        </ul>
      )}
    </>
  );
}
