/**
 * Account (issue 24, item 3), the profile and password part: the person's name and email as the
 * store holds them (GET /api/user), the name changed through PUT /api/user `{fullname}`, and a
 * new password through PUT /api/user `{password}` with the store's password rule shown before
 * and its refusal in words next to the field. Inputs stay as typed when the store refuses.
 * Two-factor (POST /api/user/2fa): the store turns it on at once and answers the secret once;
 * the otpauth address is drawn as a QR code here (components/qr-code.tsx, nothing fetched), beside
 * the secret and the address with Copy buttons. The check with a code signs in once more (POST /auth with the code) and
 * ends that extra session at once: the store has no endpoint that only checks a code.
 * App passwords (GET/POST/DELETE /api/user/app_passwords): made with a name and shown once with a
 * Copy button, listed with their last use, revoked; the list is read again after a password
 * change or 2FA turned on, which delete them all in the store. Login history
 * (GET /api/user/login_history): the newest entries as a list (a table would not fit 360 px).
 * Notification settings (GET/PUT /api/user/notifications): eight check boxes, saved together.
 * WebDrive endpoint (GET/POST/DELETE /api/user/webdrive): made, renamed (POST replaces) or deleted.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, errorText, postAuth } from '../api/client.js';
import { CopyValue } from '../components/copy-button.js';
import { Field, FormError } from '../components/field.js';
import { QrCode } from '../components/qr-code.js';
import { Page } from '../components/page.js';
import { currentSession } from '../session.js';
import { t } from '../strings/index.js';

interface Profile {
  fullname: string;
  email: string;
  twofa: boolean;
}

function ProfileForm({ profile, onSaved }: { profile: Profile; onSaved: (profile: Profile) => void }) {
  const [fullname, setFullname] = useState(profile.fullname);
  const [error, setError] = useState<string | undefined>();
  const [formError, setFormError] = useState<string | undefined>();
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    setFormError(undefined);
    setSaved(false);
    try {
      onSaved(await api<Profile>('PUT', '/api/user', { fullname }));
      setSaved(true);
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) setError(errorText(err));
      else setFormError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="profile-heading">
      <h2 id="profile-heading">{t.account.profile}</h2>
      <form class="panel" onSubmit={save} noValidate>
        <p>{t.account.email(profile.email)}</p>
        <Field id="fullname" label={t.account.fullname} hint={t.account.fullnameHint} autoComplete="name" required value={fullname} onValue={setFullname} error={error} />
        <FormError text={formError} />
        <button type="submit" disabled={busy}>
          {t.account.saveProfile}
        </button>
        <p role="status">{saved ? t.account.profileSaved : ''}</p>
      </form>
    </section>
  );
}

function PasswordForm({ onChanged }: { onChanged: () => void }) {
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [problems, setProblems] = useState<{ password?: string | undefined; repeat?: string | undefined; form?: string | undefined }>({});
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const change = async (event: Event) => {
    event.preventDefault();
    setSaved(false);
    if (password === '') return setProblems({ password: t.signIn.passwordMissing });
    if (password !== repeat) return setProblems({ repeat: t.signIn.passwordsDiffer });
    setBusy(true);
    setProblems({});
    try {
      await api('PUT', '/api/user', { password });
      setPassword('');
      setRepeat('');
      setSaved(true);
      onChanged();
    } catch (err) {
      setProblems(err instanceof ApiError && err.status === 400 ? { password: errorText(err) } : { form: errorText(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="password-heading">
      <h2 id="password-heading">{t.account.password}</h2>
      <form class="panel" onSubmit={change} noValidate>
        <p>{t.account.passwordIntro}</p>
        <Field id="new-password" label={t.signIn.newPassword} hint={t.signIn.passwordRule} type="password" autoComplete="new-password" required value={password} onValue={setPassword} error={problems.password} />
        <Field id="repeat-password" label={t.signIn.repeatPassword} type="password" autoComplete="new-password" required value={repeat} onValue={setRepeat} error={problems.repeat} />
        <FormError text={problems.form} />
        <button type="submit" disabled={busy}>
          {t.account.changePassword}
        </button>
        <p role="status">{saved ? t.account.passwordChanged : ''}</p>
      </form>
    </section>
  );
}

interface Enabled {
  secret_twofa: string;
  otpauth_uri: string;
}

function TwoFactor({ on, onChange }: { on: boolean; onChange: (on: boolean) => void }) {
  const [enabled, setEnabled] = useState<Enabled | undefined>();
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [problems, setProblems] = useState<{ password?: string | undefined; code?: string | undefined; form?: string | undefined }>({});
  const [verified, setVerified] = useState(false);
  const [busy, setBusy] = useState(false);
  const turn = async (twofa: boolean) => {
    setBusy(true);
    setProblems({});
    try {
      const answer = await api<Enabled>('POST', '/api/user/2fa', { twofa });
      setEnabled(twofa ? answer : undefined);
      setVerified(false);
      onChange(twofa);
    } catch (err) {
      setProblems({ form: errorText(err) });
    } finally {
      setBusy(false);
    }
  };
  const check = async (event: Event) => {
    event.preventDefault();
    const session = currentSession();
    if (!session) return;
    if (password === '' || code.trim() === '') return setProblems({ password: password === '' ? t.signIn.passwordMissing : undefined, code: code.trim() === '' ? t.signIn.codeMissing : undefined });
    setBusy(true);
    setProblems({});
    try {
      const body = await postAuth({ username: session.username, password, code: code.trim() });
      // The check's own session is not wanted: end it at once.
      await api('GET', '/api/user/logout', undefined, String(body.token ?? '')).catch(() => undefined);
      setVerified(true);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'twofa_invalid') setProblems({ code: t.signIn.codeWrong });
      else if (err instanceof ApiError && err.code === 'unauthenticated') setProblems({ password: t.account.twofaWrongPassword });
      else setProblems({ form: errorText(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="twofa-heading">
      <h2 id="twofa-heading">{t.account.twofa}</h2>
      <div class="panel">
        <p>{on ? t.account.twofaOn : t.account.twofaOff}</p>
        {enabled && (
          <>
            <p>{t.account.twofaScan}</p>
            <QrCode text={enabled.otpauth_uri} label={t.account.twofaQr} />
            <p>{t.account.twofaSecret}</p>
            <CopyValue text={enabled.secret_twofa} label={t.account.copySecret} />
            <p>{t.account.twofaUri}</p>
            <CopyValue text={enabled.otpauth_uri} label={t.account.copyUri} />
            <form onSubmit={check} noValidate>
              <p>{t.account.twofaCheckIntro}</p>
              <Field id="check-password" label={t.account.currentPassword} type="password" autoComplete="current-password" required value={password} onValue={setPassword} error={problems.password} />
              <Field id="check-code" label={t.signIn.code} inputMode="numeric" autoComplete="one-time-code" maxLength={10} required value={code} onValue={setCode} error={problems.code} />
              <button type="submit" disabled={busy}>
                {t.account.twofaCheck}
              </button>
              <p role="status">{verified ? t.account.twofaVerified : ''}</p>
            </form>
          </>
        )}
        <FormError text={problems.form} />
        <p>{on ? t.account.twofaOffWarning : t.account.twofaOnWarning}</p>
        <button type="button" class={on ? 'secondary' : undefined} disabled={busy} onClick={() => void turn(!on)}>
          {on ? t.account.twofaTurnOff : t.account.twofaTurnOn}
        </button>
      </div>
    </section>
  );
}

interface AppPassword {
  uuid: string;
  name: string;
  created: number;
  last_used: number | null;
}

function when(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

function AppPasswords() {
  const [list, setList] = useState<AppPassword[] | undefined>();
  const [name, setName] = useState('');
  const [made, setMade] = useState<{ name: string; password: string } | undefined>();
  const [problems, setProblems] = useState<{ name?: string | undefined; form?: string | undefined; list?: string | undefined }>({});
  const [busy, setBusy] = useState(false);
  const load = () =>
    api<AppPassword[]>('GET', '/api/user/app_passwords').then(
      (items) => setList(items),
      (err: unknown) => setProblems({ list: errorText(err) }),
    );
  useEffect(() => void load(), []);
  const create = async (event: Event) => {
    event.preventDefault();
    if (name.trim() === '') return setProblems({ name: t.account.appNameMissing });
    setBusy(true);
    setProblems({});
    try {
      const answer = await api<AppPassword & { password: string }>('POST', '/api/user/app_passwords', { name: name.trim() });
      setMade({ name: answer.name, password: answer.password });
      setName('');
      await load();
    } catch (err) {
      setProblems(err instanceof ApiError && err.status === 400 ? { name: errorText(err) } : { form: errorText(err) });
    } finally {
      setBusy(false);
    }
  };
  const revoke = async (item: AppPassword) => {
    setBusy(true);
    setProblems({});
    try {
      await api('DELETE', `/api/user/app_passwords/${encodeURIComponent(item.uuid)}`);
      if (made?.name === item.name) setMade(undefined);
      await load();
    } catch (err) {
      setProblems({ list: errorText(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="apppasswords-heading">
      <h2 id="apppasswords-heading">{t.account.appPasswords}</h2>
      <div class="panel">
        <p>{t.account.appPasswordsIntro}</p>
        <form onSubmit={create} noValidate>
          <Field id="app-name" label={t.account.appName} hint={t.account.appNameHint} maxLength={100} required value={name} onValue={setName} error={problems.name} />
          <FormError text={problems.form} />
          <button type="submit" disabled={busy}>
            {t.account.appCreate}
          </button>
        </form>
        {made && (
          <div class="notice">
            <p>{t.account.appShownOnce(made.name)}</p>
            <CopyValue text={made.password} label={t.account.appCopy(made.name)} />
          </div>
        )}
        <FormError text={problems.list} />
        {list === undefined ? (
          <p>{t.loading}</p>
        ) : list.length === 0 ? (
          <p>{t.account.appNone}</p>
        ) : (
          <ul class="app-passwords">
            {list.map((item) => (
              <li key={item.uuid}>
                <strong>{item.name}</strong> <span>{t.account.appCreated(when(item.created))}</span> <span>{item.last_used === null ? t.account.appNeverUsed : t.account.appLastUsed(when(item.last_used))}</span>{' '}
                <button type="button" class="secondary" disabled={busy} aria-label={t.account.appRevoke(item.name)} onClick={() => void revoke(item)}>
                  {t.account.appRevokeShort}
                </button>
              </li>
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}

interface HistoryEntry {
  action: string;
  action_args: string;
  error_details?: string;
  ip_address: string;
  status: string;
  timestamp: number;
}

const HISTORY_SHOWN = 50;

function LoginHistory() {
  const [entries, setEntries] = useState<HistoryEntry[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    api<HistoryEntry[]>('GET', '/api/user/login_history').then(setEntries, (err: unknown) => setError(errorText(err)));
  }, []);
  return (
    <section aria-labelledby="history-heading">
      <h2 id="history-heading">{t.account.history}</h2>
      <div class="panel">
        <FormError text={error} />
        {entries === undefined ? (
          !error && <p>{t.loading}</p>
        ) : entries.length === 0 ? (
          <p>{t.account.historyNone}</p>
        ) : (
          <>
            {entries.length > HISTORY_SHOWN && <p>{t.account.historyNewest(HISTORY_SHOWN, entries.length)}</p>}
            <ul class="history">
              {entries.slice(0, HISTORY_SHOWN).map((entry, index) => (
                <li key={`${entry.timestamp}-${index}`}>
                  <strong>{t.account.historyWhat(entry.action === 'logout', entry.status === 'success')}</strong> {when(entry.timestamp)}
                  {entry.error_details ? ` (${entry.error_details})` : ''}
                  <br />
                  {t.account.historyFrom(entry.ip_address)}; {entry.action_args}
                </li>
              ))}
            </ul>
          </>
        )}
      </div>
    </section>
  );
}

type Notifications = Record<string, boolean>;

const SUBJECTS = ['owned', 'group_owned', 'shared_with_me', 'shared_with_my_groups'] as const;

function NotificationSettings() {
  const [settings, setSettings] = useState<Notifications | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    api<Notifications>('GET', '/api/user/notifications').then(setSettings, (err: unknown) => setError(errorText(err)));
  }, []);
  const save = async (event: Event) => {
    event.preventDefault();
    if (!settings) return;
    setBusy(true);
    setError(undefined);
    setSaved(false);
    try {
      setSettings(await api<Notifications>('PUT', '/api/user/notifications', settings));
      setSaved(true);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="notifications-heading">
      <h2 id="notifications-heading">{t.account.notifications}</h2>
      <form class="panel" onSubmit={save} noValidate>
        {settings === undefined ? (
          !error && <p>{t.loading}</p>
        ) : (
          (['email', 'realtime'] as const).map((kind) => (
            <fieldset key={kind}>
              <legend>{kind === 'email' ? t.account.notifyEmail : t.account.notifyRealtime}</legend>
              {SUBJECTS.map((subject) => {
                const key = `${kind}_alert_${subject}`;
                return (
                  <div key={key} class="check">
                    <input
                      type="checkbox"
                      id={key}
                      checked={settings[key] === true}
                      onChange={(event) => setSettings({ ...settings, [key]: (event.currentTarget as HTMLInputElement).checked })}
                    />
                    <label for={key}>{t.account.notifySubject[subject]}</label>
                  </div>
                );
              })}
            </fieldset>
          ))
        )}
        <FormError text={error} />
        {settings && (
          <button type="submit" disabled={busy}>
            {t.account.notifySave}
          </button>
        )}
        <p role="status">{saved ? t.account.notifySaved : ''}</p>
      </form>
    </section>
  );
}

interface Webdrive {
  endpoint: string | null;
  url: string | null;
}

function WebdriveEndpoint() {
  const [current, setCurrent] = useState<Webdrive | undefined>();
  const [name, setName] = useState('');
  const [problems, setProblems] = useState<{ field?: string | undefined; form?: string | undefined }>({});
  const [busy, setBusy] = useState(false);
  const load = () =>
    api<Webdrive>('GET', '/api/user/webdrive').then(
      (answer) => {
        setCurrent(answer);
        setName(answer.endpoint ?? '');
      },
      (err: unknown) => setProblems({ form: errorText(err) }),
    );
  useEffect(() => void load(), []);
  const run = async (call: () => Promise<unknown>) => {
    setBusy(true);
    setProblems({});
    try {
      await call();
      await load();
    } catch (err) {
      if (err instanceof ApiError && err.code === 'endpoint_taken') setProblems({ field: t.connect.endpointTaken });
      else if (err instanceof ApiError && err.status === 400) setProblems({ field: errorText(err) });
      else setProblems({ form: errorText(err) });
    } finally {
      setBusy(false);
    }
  };
  const save = (event: Event) => {
    event.preventDefault();
    void run(() => api('POST', '/api/user/webdrive', { endpoint: name.trim() }));
  };
  return (
    <section aria-labelledby="webdrive-heading">
      <h2 id="webdrive-heading">{t.account.webdrive}</h2>
      <form class="panel" onSubmit={save} noValidate>
        {current?.url ? <CopyValue text={current.url} label={t.connect.copyWebdrive} /> : current && <p>{t.account.webdriveNone}</p>}
        <Field id="webdrive-name" label={t.connect.endpointLabel} hint={t.connect.endpointHint} autoCapitalize="none" spellcheck={false} required value={name} onValue={setName} error={problems.field} />
        <FormError text={problems.form} />
        <div class="actions">
          <button type="submit" disabled={busy || !current}>
            {current?.endpoint ? t.account.webdriveRename : t.connect.endpointSave}
          </button>
          {current?.endpoint && (
            <button type="button" class="secondary" disabled={busy} onClick={() => void run(() => api('DELETE', '/api/user/webdrive'))}>
              {t.account.webdriveDelete}
            </button>
          )}
        </div>
      </form>
    </section>
  );
}

export function Account() {
  const [profile, setProfile] = useState<Profile | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  const [attempt, setAttempt] = useState(0);
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    setLoadError(undefined);
    api<Profile>('GET', '/api/user').then(setProfile, (err: unknown) => setLoadError(errorText(err)));
  }, [attempt]);
  return (
    <Page title={t.account.title}>
      {loadError ? (
        <div role="alert">
          <p>{loadError}</p>
          <button type="button" onClick={() => setAttempt(attempt + 1)}>
            {t.retry}
          </button>
        </div>
      ) : !profile ? (
        <p>{t.loading}</p>
      ) : (
        <>
          <ProfileForm profile={profile} onSaved={setProfile} />
          <PasswordForm onChanged={() => setGeneration(generation + 1)} />
          <TwoFactor
            on={profile.twofa}
            onChange={(twofa) => {
              setProfile({ ...profile, twofa });
              setGeneration(generation + 1);
            }}
          />
          <AppPasswords key={generation} />
          <WebdriveEndpoint />
          <NotificationSettings />
          <LoginHistory />
        </>
      )}
    </Page>
  );
}
