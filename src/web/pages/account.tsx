/**
 * Account (issue 24, item 3), the profile and password part: the person's name and email as the
 * store holds them (GET /api/user), the name changed through PUT /api/user `{fullname}`, and a
 * new password through PUT /api/user `{password}` with the store's password rule shown before
 * and its refusal in words next to the field. Inputs stay as typed when the store refuses.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, errorText } from '../api.js';
import { Field, FormError } from '../components/field.js';
import { Page } from '../components/page.js';
import { t } from '../strings.js';

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

function PasswordForm() {
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

export function Account() {
  const [profile, setProfile] = useState<Profile | undefined>();
  const [loadError, setLoadError] = useState<string | undefined>();
  const [attempt, setAttempt] = useState(0);
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
          <PasswordForm />
        </>
      )}
    </Page>
  );
}
