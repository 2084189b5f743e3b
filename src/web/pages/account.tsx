/**
 * Account (issue 24, item 3), the profile and password part: the person's name and email as the
 * store holds them (GET /api/user), the name changed through PUT /api/user `{fullname}`, and a
 * new password through PUT /api/user `{password}` with the store's password rule shown before
 * and its refusal in words next to the field. Inputs stay as typed when the store refuses.
 * Two-factor, set up in two steps (docs/extensions.md "Two-factor set-up and recovery codes"):
 * POST /api/user/2fa/setup answers a pending secret, drawn as a QR code here
 * (components/qr-code.tsx, nothing fetched) beside the secret and the otpauth address with Copy
 * buttons; a code from the app (POST /api/user/2fa/confirm) turns it on, a wrong one leaves it
 * off and says so; then the recovery codes are shown once (copy, download as text). While on:
 * the codes left, new codes and turning off, each with the password asked again in the page
 * (docs/security.md "Asking for the password again").
 * App passwords (GET/POST/DELETE /api/user/app_passwords): made with a name and the password,
 * shown once with a Copy button, listed with their last use, revoked with the password; the list
 * is read again after a password change or 2FA turned on, which delete them all in the store.
 * Every load goes through useResource. Login history
 * (GET /api/user/login_history): the newest entries as a list (a table would not fit 360 px).
 * Notification settings (GET/PUT /api/user/notifications): eight check boxes, saved together.
 * WebDrive endpoint (GET/POST/DELETE /api/user/webdrive): made, renamed (POST replaces) or deleted.
 */
import { useState } from 'preact/hooks';
import { api, ApiError, errorText } from '../api/client.js';
import { useResource } from '../api/use-resource.js';
import { CopyButton, CopyValue } from '../components/copy-button.js';
import { Field, FormError } from '../components/field.js';
import { QrCode } from '../components/qr-code.js';
import { Page } from '../components/page.js';
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

/** GET /api/user/2fa; `recovery_codes_left` while on. */
interface TwofaStatus {
  twofa: boolean;
  recovery_codes_left?: number;
}

interface Setup {
  secret_twofa: string;
  otpauth_uri: string;
}

/** The proof a change that asks again carries (docs/security.md "Asking for the password again"). */
function reauthProblem(err: unknown): { password?: string; form?: string } {
  if (err instanceof ApiError && (err.code === 'reauth_invalid' || err.code === 'reauth_required')) return { password: t.account.twofaWrongPassword };
  return { form: errorText(err) };
}

/** The recovery codes, shown once: as a list, to copy, and to download as a text file. */
function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const text = `${t.account.recoveryFileHeader}\n\n${codes.join('\n')}\n`;
  return (
    <div class="notice recovery-codes">
      <h3 id="recovery-heading">{t.account.recoveryTitle}</h3>
      <p>{t.account.recoveryStore}</p>
      <ul aria-labelledby="recovery-heading">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <div class="actions">
        <CopyButton text={codes.join('\n')} label={t.account.recoveryCopy} />
        <a class="button-link secondary" href={`data:text/plain;charset=utf-8,${encodeURIComponent(text)}`} download="driveway-recovery-codes.txt">
          {t.account.recoveryDownload}
        </a>
      </div>
      <button type="button" onClick={onDone}>
        {t.account.recoveryDone}
      </button>
    </div>
  );
}

/**
 * Two-factor: off, a set-up under way (QR, secret, a code asked; on only with a valid code), the
 * recovery codes shown once, or on (codes left, new codes and turning off with the password).
 */
function TwoFactor({ onChange }: { onChange: (on: boolean) => void }) {
  const status = useResource(() => api<TwofaStatus>('GET', '/api/user/2fa'), []);
  const [setup, setSetup] = useState<Setup | undefined>();
  const [codes, setCodes] = useState<string[] | undefined>();
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const [renewPassword, setRenewPassword] = useState('');
  /** Set once the store asked for the password before a set-up (a session older than its grace). */
  const [onPasswordAsked, setOnPasswordAsked] = useState(false);
  const [onPassword, setOnPassword] = useState('');
  const [problems, setProblems] = useState<{ code?: string | undefined; password?: string | undefined; renew?: string | undefined; form?: string | undefined }>({});
  const [busy, setBusy] = useState(false);
  const on = status.data?.twofa === true;

  const run = async (work: () => Promise<void>, refusal: (err: unknown) => typeof problems) => {
    setBusy(true);
    setProblems({});
    try {
      await work();
    } catch (err) {
      setProblems(refusal(err));
    } finally {
      setBusy(false);
    }
  };
  const start = () => {
    if (onPasswordAsked && onPassword === '') return setProblems({ password: t.account.onPasswordAsked });
    return run(
      async () => {
        setSetup(await api<Setup>('POST', '/api/user/2fa/setup', onPasswordAsked ? { password: onPassword } : {}));
        setCode('');
        setOnPassword('');
        setOnPasswordAsked(false);
      },
      (err) => {
        // Turning on ends every other session and app password: the store asks again on an older session.
        if (err instanceof ApiError && (err.code === 'reauth_required' || err.code === 'reauth_invalid')) {
          setOnPasswordAsked(true);
          return { password: err.code === 'reauth_required' ? t.account.onPasswordAsked : errorText(err) };
        }
        return { form: errorText(err) };
      },
    );
  };
  const confirm = (event: Event) => {
    event.preventDefault();
    if (code.trim() === '') return setProblems({ code: t.signIn.codeMissing });
    return run(
      async () => {
        const answer = await api<{ recovery_codes: string[] }>('POST', '/api/user/2fa/confirm', { code: code.trim() });
        setSetup(undefined);
        setCodes(answer.recovery_codes);
        status.set({ twofa: true, recovery_codes_left: answer.recovery_codes.length });
        onChange(true);
      },
      (err) =>
        err instanceof ApiError && err.code === 'twofa_invalid'
          ? { code: t.account.twofaSetupWrong }
          : err instanceof ApiError && err.code === 'twofa_not_set_up'
            ? (setSetup(undefined), { form: t.account.twofaSetupExpired })
            : { form: errorText(err) },
    );
  };
  const turnOff = (event: Event) => {
    event.preventDefault();
    if (password === '') return setProblems({ password: t.signIn.passwordMissing });
    return run(async () => {
      await api('POST', '/api/user/2fa', { twofa: false, password });
      setPassword('');
      setCodes(undefined);
      status.set({ twofa: false });
      onChange(false);
    }, reauthProblem);
  };
  const renew = (event: Event) => {
    event.preventDefault();
    if (renewPassword === '') return setProblems({ renew: t.signIn.passwordMissing });
    return run(
      async () => {
        const answer = await api<{ recovery_codes: string[] }>('POST', '/api/user/2fa/recovery_codes', { password: renewPassword });
        setRenewPassword('');
        setCodes(answer.recovery_codes);
        status.set({ twofa: true, recovery_codes_left: answer.recovery_codes.length });
      },
      (err) => {
        const problem = reauthProblem(err);
        return problem.password ? { renew: problem.password } : problem;
      },
    );
  };

  return (
    <section aria-labelledby="twofa-heading">
      <h2 id="twofa-heading">{t.account.twofa}</h2>
      <div class="panel">
        {status.data === undefined ? (
          <>
            <FormError text={status.error} />
            {!status.error && <p>{t.loading}</p>}
          </>
        ) : codes ? (
          <RecoveryCodes codes={codes} onDone={() => setCodes(undefined)} />
        ) : setup ? (
          <>
            <p>{t.account.twofaSetupOff}</p>
            <p>{t.account.twofaScan}</p>
            <QrCode text={setup.otpauth_uri} label={t.account.twofaQr} />
            <p>{t.account.twofaSecret}</p>
            <CopyValue text={setup.secret_twofa} label={t.account.copySecret} />
            <p>{t.account.twofaUri}</p>
            <CopyValue text={setup.otpauth_uri} label={t.account.copyUri} />
            <form onSubmit={confirm} noValidate>
              <p>{t.account.twofaConfirmIntro}</p>
              <Field id="setup-code" label={t.signIn.code} inputMode="numeric" autoComplete="one-time-code" maxLength={10} required value={code} onValue={setCode} error={problems.code} />
              <FormError text={problems.form} />
              <div class="actions">
                <button type="submit" disabled={busy}>
                  {t.account.twofaConfirm}
                </button>
                <button type="button" class="secondary" disabled={busy} onClick={() => (setSetup(undefined), setProblems({}))}>
                  {t.account.twofaCancel}
                </button>
              </div>
            </form>
          </>
        ) : on ? (
          <>
            <p>{t.account.twofaOn}</p>
            <p>{t.account.recoveryLeft(status.data.recovery_codes_left ?? 0)}</p>
            <form onSubmit={renew} noValidate>
              <h3 id="renew-heading">{t.account.recoveryRenewTitle}</h3>
              <p>{t.account.recoveryRenewIntro}</p>
              <Field id="renew-password" label={t.account.renewPassword} type="password" autoComplete="current-password" required value={renewPassword} onValue={setRenewPassword} error={problems.renew} />
              <button type="submit" disabled={busy}>
                {t.account.recoveryRenew}
              </button>
            </form>
            <form onSubmit={turnOff} noValidate>
              <h3 id="off-heading">{t.account.twofaTurnOff}</h3>
              <p>{t.account.twofaOffWarning}</p>
              <Field id="off-password" label={t.account.offPassword} type="password" autoComplete="current-password" required value={password} onValue={setPassword} error={problems.password} />
              <FormError text={problems.form} />
              <button type="submit" class="secondary" disabled={busy}>
                {t.account.twofaTurnOff}
              </button>
            </form>
          </>
        ) : (
          <>
            <p>{t.account.twofaOff}</p>
            <p>{t.account.twofaOnWarning}</p>
            {onPasswordAsked && <Field id="on-password" label={t.account.currentPassword} type="password" autoComplete="current-password" required value={onPassword} onValue={setOnPassword} error={problems.password} />}
            <FormError text={problems.form} />
            <button type="button" disabled={busy} onClick={() => void start()}>
              {t.account.twofaTurnOn}
            </button>
          </>
        )}
      </div>
    </section>
  );
}

interface AppPassword {
  uuid: string;
  name: string;
  created: number;
  last_used: number | null;
  may_share: boolean;
}

function when(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

function AppPasswords() {
  const list = useResource(() => api<AppPassword[]>('GET', '/api/user/app_passwords'), []);
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [made, setMade] = useState<{ name: string; password: string } | undefined>();
  const [problems, setProblems] = useState<{ name?: string | undefined; password?: string | undefined; form?: string | undefined; list?: string | undefined }>({});
  const [busy, setBusy] = useState(false);
  /** Runs a change that asks for the password again; `where` says where other refusals show. */
  const change = async (work: () => Promise<void>, where: 'form' | 'list') => {
    if (password === '') return setProblems({ password: t.account.appPasswordMissing });
    setBusy(true);
    setProblems({});
    try {
      await work();
      setPassword('');
      await list.refresh();
    } catch (err) {
      if (err instanceof ApiError && err.status === 400 && where === 'form') setProblems({ name: errorText(err) });
      else {
        const problem = reauthProblem(err);
        setProblems(problem.password ? problem : { [where]: problem.form });
      }
    } finally {
      setBusy(false);
    }
  };
  const create = (event: Event) => {
    event.preventDefault();
    if (name.trim() === '') return setProblems({ name: t.account.appNameMissing });
    return change(async () => {
      const answer = await api<AppPassword & { password: string }>('POST', '/api/user/app_passwords', { name: name.trim(), password });
      setMade({ name: answer.name, password: answer.password });
      setName('');
    }, 'form');
  };
  const revoke = (item: AppPassword) =>
    change(async () => {
      await api('DELETE', `/api/user/app_passwords/${encodeURIComponent(item.uuid)}`, { password });
      if (made?.name === item.name) setMade(undefined);
    }, 'list');
  const items = list.data;
  return (
    <section aria-labelledby="apppasswords-heading">
      <h2 id="apppasswords-heading">{t.account.appPasswords}</h2>
      <div class="panel">
        <p>{t.account.appPasswordsIntro}</p>
        <form onSubmit={create} noValidate>
          <Field id="app-name" label={t.account.appName} hint={t.account.appNameHint} maxLength={100} required value={name} onValue={setName} error={problems.name} />
          <Field id="app-password" label={t.account.currentPassword} hint={t.account.appPasswordHint} type="password" autoComplete="current-password" required value={password} onValue={setPassword} error={problems.password} />
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
        <FormError text={problems.list ?? list.error} />
        {items === undefined ? (
          !list.error && <p>{t.loading}</p>
        ) : items.length === 0 ? (
          <p>{t.account.appNone}</p>
        ) : (
          <ul class="app-passwords">
            {items.map((item) => (
              <li key={item.uuid}>
                <strong>{item.name}</strong> <span>{t.account.appCreated(when(item.created))}</span> <span>{item.last_used === null ? t.account.appNeverUsed : t.account.appLastUsed(when(item.last_used))}</span>{' '}
                {item.may_share && <span class="app-right">{t.account.appMayShare}</span>}{' '}
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
  const { data: entries, error } = useResource(() => api<HistoryEntry[]>('GET', '/api/user/login_history'), []);
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
  const { data: settings, error: loadError, set: setSettings } = useResource(() => api<Notifications>('GET', '/api/user/notifications'), []);
  const [saveError, setError] = useState<string | undefined>();
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const error = saveError ?? loadError;
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
  const [name, setName] = useState('');
  const webdrive = useResource(async () => {
    const answer = await api<Webdrive>('GET', '/api/user/webdrive');
    setName(answer.endpoint ?? '');
    return answer;
  }, []);
  const current = webdrive.data;
  const [problems, setProblems] = useState<{ field?: string | undefined; form?: string | undefined }>({});
  const [busy, setBusy] = useState(false);
  const run = async (call: () => Promise<unknown>) => {
    setBusy(true);
    setProblems({});
    try {
      await call();
      await webdrive.refresh();
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
        <FormError text={problems.form ?? webdrive.error} />
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
  const { data: profile, error: loadError, refresh, set: setProfile } = useResource(() => api<Profile>('GET', '/api/user'), []);
  const [generation, setGeneration] = useState(0);
  return (
    <Page title={t.account.title}>
      {loadError && !profile ? (
        <div role="alert">
          <p>{loadError}</p>
          <button type="button" onClick={() => void refresh()}>
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
