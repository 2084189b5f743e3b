/**
 * Sign in (docs/api.md "Sessions of the web app", POST /api/session: POST /auth's body):
 * username or email and password; then, when the store asks for it (401 `twofa_required`), the
 * authenticator's code, or with "Use a recovery code" one of the recovery codes in the same
 * `code` field (good once; docs/api.md "POST /auth"); then, when the session says the
 * password expired, a new password (PUT /api/user) before going on. Each refusal in words next
 * to the field that caused it, the wait of a 429 from its Retry-After; the inputs stay as typed.
 * The session is the store's cookie (POST /api/session); it is kept here (session.ts) only once it
 * can be used, then the person goes where they were headed. A sign-in in another tab of this
 * browser takes this one along.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, errorText, signIn as openSession, takeSignInNotice, waitText } from '../api/client.js';
import { Field, FormError } from '../components/field.js';
import { Page } from '../components/page.js';
import { navigate, safeNext, useLocation } from '../router.js';
import { currentSession, onSessionChange, saveSession, type Session } from '../session.js';
import { t } from '../strings/index.js';

type Step = 'password' | 'code' | 'expired';

interface Problems {
  username?: string | undefined;
  password?: string | undefined;
  code?: string | undefined;
  newPassword?: string | undefined;
  repeat?: string | undefined;
  form?: string | undefined;
}

export function SignIn() {
  const { search } = useLocation();
  const next = safeNext(search.get('next')) ?? '/';
  const [notice] = useState(takeSignInNotice);
  const [step, setStep] = useState<Step>('password');
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [recovery, setRecovery] = useState(false);
  const [newPassword, setNewPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [pending, setPending] = useState<Session | undefined>();
  const [problems, setProblems] = useState<Problems>({});
  const [busy, setBusy] = useState(false);

  const finish = (session: Session) => {
    saveSession(session);
    navigate(next, { replace: true });
  };
  // Signed in meanwhile in another tab of this browser: the session is this tab's too.
  useEffect(
    () =>
      onSessionChange(() => {
        if (currentSession()) navigate(next, { replace: true });
      }),
    [next],
  );

  const refusal = (error: unknown): Problems => {
    if (!(error instanceof ApiError)) return { form: t.serverError };
    switch (error.code) {
      case 'unauthenticated':
        return { password: t.signIn.wrongCredentials };
      case 'twofa_invalid':
        return { code: recovery ? t.signIn.recoveryWrong : t.signIn.codeWrong };
      case 'rate_limited':
        return { form: error.retryAfterSec ? t.signIn.tooManyAttempts(waitText(error.retryAfterSec)) : t.signIn.tooManyAttemptsLater };
      default:
        return { form: errorText(error) };
    }
  };

  const signIn = async (event: Event) => {
    event.preventDefault();
    if (step === 'code' && code.trim() === '') return setProblems({ code: recovery ? t.signIn.recoveryMissing : t.signIn.codeMissing });
    if (username.trim() === '' || password === '') {
      return setProblems({ username: username.trim() === '' ? t.signIn.usernameMissing : undefined, password: password === '' ? t.signIn.passwordMissing : undefined });
    }
    setBusy(true);
    setProblems({});
    try {
      const { session, passwordExpired } = await openSession({ username: username.trim(), password, ...(step === 'code' ? { code: code.trim() } : {}) });
      if (passwordExpired) {
        setPending(session);
        setStep('expired');
      } else finish(session);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'twofa_required') setStep('code');
      else setProblems(refusal(error));
    } finally {
      setBusy(false);
    }
  };

  const changePassword = async (event: Event) => {
    event.preventDefault();
    if (!pending) return;
    if (newPassword !== repeat) return setProblems({ repeat: t.signIn.passwordsDiffer });
    setBusy(true);
    setProblems({});
    try {
      // The cookie's session, restricted to this until the new password is set.
      await api('PUT', '/api/user', { password: newPassword });
      finish(pending);
    } catch (error) {
      setProblems(error instanceof ApiError && error.status === 400 ? { newPassword: errorText(error) } : { form: errorText(error) });
    } finally {
      setBusy(false);
    }
  };

  if (step === 'expired') {
    return (
      <Page title={t.signIn.expiredTitle}>
        <form class="panel" onSubmit={changePassword} noValidate>
          <p>{t.signIn.expiredIntro}</p>
          <Field id="new-password" label={t.signIn.newPassword} hint={t.signIn.passwordRule} type="password" autoComplete="new-password" required value={newPassword} onValue={setNewPassword} error={problems.newPassword} />
          <Field id="repeat-password" label={t.signIn.repeatPassword} type="password" autoComplete="new-password" required value={repeat} onValue={setRepeat} error={problems.repeat} />
          <FormError text={problems.form} />
          <button type="submit" disabled={busy}>
            {t.signIn.changePassword}
          </button>
        </form>
      </Page>
    );
  }

  if (step === 'code') {
    return (
      <Page title={recovery ? t.signIn.recoveryTitle : t.signIn.codeTitle}>
        <form class="panel" onSubmit={signIn} noValidate>
          <p>{recovery ? t.signIn.recoveryIntro : t.signIn.codeIntro}</p>
          {recovery ? (
            <Field id="code" key="recovery" label={t.signIn.recovery} autoComplete="off" autoCapitalize="none" spellcheck={false} maxLength={40} required value={code} onValue={setCode} error={problems.code} />
          ) : (
            <Field id="code" key="totp" label={t.signIn.code} inputMode="numeric" autoComplete="one-time-code" maxLength={10} required value={code} onValue={setCode} error={problems.code} />
          )}
          <p>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setRecovery(!recovery);
                setCode('');
                setProblems({});
              }}
            >
              {recovery ? t.signIn.useApp : t.signIn.useRecovery}
            </button>
          </p>
          <FormError text={problems.form} />
          <div class="actions">
            <button type="submit" disabled={busy}>
              {t.signIn.codeSubmit}
            </button>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setStep('password');
                setCode('');
                setRecovery(false);
                setProblems({});
              }}
            >
              {t.signIn.back}
            </button>
          </div>
        </form>
      </Page>
    );
  }

  return (
    <Page title={t.signIn.title}>
      <form class="panel" onSubmit={signIn} noValidate>
        {notice && <p class="notice">{notice}</p>}
        <p>{t.signIn.intro}</p>
        <Field id="username" label={t.signIn.username} autoComplete="username" autoCapitalize="none" spellcheck={false} required value={username} onValue={setUsername} error={problems.username} />
        <Field id="password" label={t.signIn.password} type="password" autoComplete="current-password" required value={password} onValue={setPassword} error={problems.password} />
        <FormError text={problems.form} />
        <button type="submit" disabled={busy}>
          {busy ? t.signIn.working : t.signIn.submit}
        </button>
      </form>
    </Page>
  );
}
