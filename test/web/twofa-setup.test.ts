/**
 * 2FA that cannot lock a person out (issue 31, item 3), in Debian's Chromium: the set-up on the
 * Account page with a wrong then a right code, the recovery codes shown once (downloaded as
 * text: the file holds what the page showed), and signing in with a recovery code once and only
 * once through "Use a recovery code". axe-core and no sideways scroll at 360 and 1,920 px on
 * each new state; the store's state checked through the REST API.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import { totpCode } from '../helpers/totp.js';
import { apiCall, dataOf, postAuth } from '../helpers/user-api.js';
import { expectAccessible, sidewaysOverflow, signInThroughForm, webSuiteFixture, type WatchedPage } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');

chromiumBinary.describe('two-factor set-up and recovery codes in the web app', () => {
  const f = webSuiteFixture(chromiumBinary.path);

  async function checkLayout(page: WatchedPage['page']): Promise<void> {
    expect(await sidewaysOverflow(page)).toEqual([]);
    await expectAccessible(page);
  }

  function expectClean(watched: WatchedPage): void {
    expect(watched.foreign).toEqual([]);
    expect(watched.problems).toEqual([]);
  }

  const twofaOf = async (uuid: string): Promise<boolean> => dataOf<{ twofa: boolean }>(await apiCall(f.client, f.admin, 'GET', `/api/admin/users/${uuid}`)).twofa;

  describe.each([360, 1920])('at %i px', (width) => {
    it('turns 2FA on only after a right code, then shows the recovery codes once to copy or download', async () => {
      const user = await f.newUser({ fullname: width === 360 ? "Rae Narrow" : "Rae Wide" });
      const watched = await f.openPage({ width, clipboard: true });
      const { page } = watched;
      await page.goto(`${f.base}/account`);
      await signInThroughForm(page, user.email, user.password);
      const twofa = page.getByRole('region', { name: 'Two-factor authentication' });
      await twofa.getByRole('button', { name: 'Turn on two-factor authentication' }).click();
      await twofa.getByText('Two-factor authentication is still off').waitFor();
      await checkLayout(page);
      const secret = (await twofa.locator('.copy-value code').first().textContent()) ?? '';
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);

      const wrong = totpCode(secret, Date.now()) === '000000' ? '111111' : '000000';
      await twofa.getByLabel('Code from your authenticator app').fill(wrong);
      await twofa.getByRole('button', { name: 'Check the code and turn on' }).click();
      await page.locator('#setup-code-error').getByText('two-factor authentication is still off').waitFor();
      expect(await twofaOf(user.uuid)).toBe(false);
      await checkLayout(page);

      await twofa.getByLabel('Code from your authenticator app').fill(totpCode(secret, Date.now()));
      await twofa.getByRole('button', { name: 'Check the code and turn on' }).click();
      await twofa.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
      expect(await twofaOf(user.uuid)).toBe(true);
      await twofa.getByText('Store these recovery codes somewhere safe').waitFor();
      const shown = (await twofa.getByRole('listitem').allTextContents()).map((code) => code.trim());
      expect(shown).toHaveLength(10);
      for (const code of shown) expect(code).toMatch(/^[a-z2-7]{4}(-[a-z2-7]{4}){3}$/);
      await checkLayout(page);

      const [download] = await Promise.all([page.waitForEvent('download'), twofa.getByRole('link', { name: 'Download as a text file' }).click()]);
      expect(download.suggestedFilename()).toBe('driveway-recovery-codes.txt');
      const file = await readFile((await download.path()) as string, 'utf8');
      for (const code of shown) expect(file).toContain(code);
      await twofa.getByRole('button', { name: 'Copy the recovery codes' }).click();
      expect((await page.evaluate('navigator.clipboard.readText()')) as string).toBe(shown.join('\n'));

      // Shown once: gone after "I have stored them" and after a reload.
      await twofa.getByRole('button', { name: 'I have stored them' }).click();
      await twofa.getByText('You have 10 unused recovery codes.').waitFor();
      await checkLayout(page);
      await page.reload();
      await twofa.getByText('You have 10 unused recovery codes.').waitFor();
      expect(await page.getByRole('main').textContent()).not.toContain(shown[0]);
      // A code made here signs in.
      expect((await postAuth(f.client, { username: user.email, password: user.password, code: shown[4] })).status).toBe(200);
      expectClean(watched);
    });

    it('signs in with a recovery code once and only once, and the history shows it', async () => {
      const user = await f.newUser({ fullname: width === 360 ? "Sol Narrow" : "Sol Wide" });
      const { secret_twofa: secret } = dataOf<{ secret_twofa: string }>(await apiCall(f.client, user.session, 'POST', '/api/user/2fa/setup', {}));
      const { recovery_codes: codes } = dataOf<{ recovery_codes: string[] }>(await apiCall(f.client, user.session, 'POST', '/api/user/2fa/confirm', { code: totpCode(secret, Date.now()) }));
      const code = codes[0] as string;

      const first = await f.openPage({ width });
      await first.page.goto(`${f.base}/account`);
      await signInThroughForm(first.page, user.email, user.password);
      await first.page.getByRole('heading', { name: 'Two-factor code' }).waitFor();
      await first.page.getByRole('button', { name: 'Use a recovery code' }).click();
      await first.page.getByRole('heading', { name: 'Recovery code' }).waitFor();
      await checkLayout(first.page);
      await first.page.getByRole('button', { name: 'Verify' }).click();
      await first.page.locator('#code-error').getByText('Enter a recovery code.').waitFor();
      await first.page.getByLabel('Recovery code').fill(code.toUpperCase());
      await first.page.getByRole('button', { name: 'Verify' }).click();
      await first.page.getByRole('heading', { name: 'Your account' }).waitFor();
      const history = first.page.getByRole('region', { name: 'Sign-in history' });
      await history.getByText('password and recovery code (9 left)').first().waitFor();
      await first.page.getByRole('region', { name: 'Two-factor authentication' }).getByText('You have 9 unused recovery codes.').waitFor();
      expectClean(first);

      const second = await f.openPage({ width });
      await second.page.goto(`${f.base}/account`);
      await signInThroughForm(second.page, user.email, user.password);
      await second.page.getByRole('button', { name: 'Use a recovery code' }).click();
      await second.page.getByLabel('Recovery code').fill(code);
      await second.page.getByRole('button', { name: 'Verify' }).click();
      await second.page.locator('#code-error').getByText('This recovery code is wrong or was already used.').waitFor();
      await checkLayout(second.page);
      // Back to the app's code: the field asks for the 6 digits again.
      await second.page.getByRole('button', { name: 'Use the code from your app' }).click();
      await second.page.getByLabel('Code from your authenticator app').waitFor();
      const stored = dataOf<Array<{ status: string; error_details?: string }>>(await apiCall(f.client, user.session, 'GET', '/api/user/login_history'));
      expect(stored[0]).toMatchObject({ status: 'failure', error_details: 'wrong or used recovery code' });
      expect(second.problems).toEqual([]);
    });
  });
});
