/**
 * /client-login?token=…: the browser step of the Nextcloud and ownCloud clients' login flows
 * (src/bridge/nextcloud/login-flow.ts). The person is signed in first (the app's sign-in, with
 * its two-factor step), then sees which client asks and from where, and grants or cancels.
 * Granting makes an app password named after the client (listed and revocable on the Account
 * page) and hands it to the flow; a mobile app's flow (v1) then goes back to the app by its
 * `nc://` address.
 */
import { useState } from 'preact/hooks';
import { useResource } from '../api/use-resource.js';
import { ApiError, errorText } from '../api/client.js';
import { bridgeBase, cancelFlow, flowDetails, grantFlow, type ClientFlow } from '../api/client-login.js';
import { Field, FormError } from '../components/field.js';
import { Page } from '../components/page.js';
import { useLocation } from '../router.js';
import { currentSession } from '../session.js';
import { t } from '../strings/index.js';

type State = { kind: 'loading' } | { kind: 'asking'; base: string; flow: ClientFlow } | { kind: 'done'; text: string } | { kind: 'failed'; text: string };

export function ClientLogin() {
  const c = t.clientLogin;
  const token = useLocation().search.get('token') ?? '';
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | undefined>();
  // Asked only when the store wants the password again (docs/security.md "Asking for the password again").
  const [password, setPassword] = useState<string | undefined>();
  const [passwordProblem, setPasswordProblem] = useState<string | undefined>();
  const over = (error: unknown): State => ({ kind: 'failed', text: error instanceof ApiError && error.status === 404 ? c.over : errorText(error) });
  // The flow's state is the page: loading it never fails, it ends in words (over, no bridge).
  const { data, set: setState } = useResource(async (): Promise<State> => {
    if (!token) return { kind: 'failed', text: c.over };
    try {
      const base = await bridgeBase();
      if (!base) return { kind: 'failed', text: c.noBridge };
      return { kind: 'asking', base, flow: await flowDetails(base, token) };
    } catch (error) {
      return over(error);
    }
  }, [token]);
  const state: State = data ?? { kind: 'loading' };

  const decide = async (grant: boolean) => {
    if (state.kind !== 'asking') return;
    if (grant && password === '') return setPasswordProblem(t.signIn.passwordMissing);
    setBusy(true);
    setProblem(undefined);
    setPasswordProblem(undefined);
    try {
      if (!grant) {
        await cancelFlow(state.base, token);
        return setState({ kind: 'done', text: c.cancelled });
      }
      const redirect = await grantFlow(state.base, token, state.flow, currentSession()?.username ?? '', password);
      setState({ kind: 'done', text: redirect ? c.grantedRedirect : c.granted });
      if (redirect) window.location.assign(redirect);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) setState(over(error));
      else if (error instanceof ApiError && error.code === 'reauth_required') {
        setPassword('');
        setPasswordProblem(c.passwordAgain);
      } else if (error instanceof ApiError && error.code === 'reauth_invalid') setPasswordProblem(t.account.twofaWrongPassword);
      else setProblem(errorText(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Page title={c.title}>
      {state.kind === 'loading' && <p>{t.loading}</p>}
      {(state.kind === 'done' || state.kind === 'failed') && (
        <p class="notice" role="status">
          {state.text}
        </p>
      )}
      {state.kind === 'asking' && (
        <div class="panel client-login">
          <p>{c.intro}</p>
          <p class="client-name">
            <strong>{state.flow.client}</strong>
          </p>
          <p>{c.from(state.flow.address)}</p>
          <p>{c.as(currentSession()?.username ?? '')}</p>
          <p>{c.shares}</p>
          <p class="notice">{c.warning}</p>
          {password !== undefined && <Field id="grant-password" label={t.account.currentPassword} type="password" autoComplete="current-password" required value={password} onValue={setPassword} error={passwordProblem} />}
          <FormError text={problem} />
          <div class="actions">
            <button type="button" disabled={busy} onClick={() => void decide(true)}>
              {busy ? c.granting : c.grant}
            </button>
            <button type="button" class="secondary" disabled={busy} onClick={() => void decide(false)}>
              {c.cancel}
            </button>
          </div>
        </div>
      )}
    </Page>
  );
}
