/**
 * Group administration and Administration (issue 24 items 6 and 7), in Debian's Chromium, as
 * people use the pages: the built-in admin creates a user and a group, adds the user to the
 * group and sets the user's quota, which the user's next upload then meets (the store's 507);
 * resets a password the user then signs in with; disables and enables a user. A group
 * administrator changes a member's permissions and the member's access follows; a member gets
 * the group read-only; a plain user opening /admin gets a refusal in words and no data; a group
 * of another organization is "not found". axe-core on every page, no sideways overflow at 360
 * and 1,920 px (screenshots kept, never committed), nothing from another origin.
 */
import type { Page } from 'playwright-core';
import { beforeAll, expect, it } from 'vitest';
import { groupAdmin, type GroupAdmin } from '../helpers/groups.js';
import { requireBinary } from '../helpers/require-binary.js';
import { uploadFile } from '../helpers/seed.js';
import { apiCall, dataOf, postAuth } from '../helpers/user-api.js';
import { expectAccessible, keepScreenshot, sidewaysOverflow, signInThroughForm, webSuiteFixture, type WatchedPage } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');

chromiumBinary.describe('the group and Administration pages', () => {
  const f = webSuiteFixture(chromiumBinary.path);
  let ga: GroupAdmin;

  beforeAll(async () => {
    ga = groupAdmin(f.client, f.admin);
  }, 120_000);

  async function signedIn(username: string, password: string, at: string, options: { width?: number } = {}): Promise<WatchedPage> {
    const watched = await f.openPage(options);
    await watched.page.goto(`${f.base}${at}`);
    await signInThroughForm(watched.page, username, password);
    await watched.page.waitForURL((url) => url.pathname === at);
    return watched;
  }

  function expectClean(watched: WatchedPage): void {
    expect(watched.foreign).toEqual([]);
    expect(watched.problems).toEqual([]);
  }

  async function checkLayout(page: Page, name: string): Promise<void> {
    for (const width of [360, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      expect(await sidewaysOverflow(page), `${name} at ${width} px`).toEqual([]);
      await keepScreenshot(page, `web-admin-${name}-${width}`);
    }
    await expectAccessible(page);
  }

  it('the admin creates a user and a group, adds the user, sets a quota the user’s upload then meets', async () => {
    const watched = await signedIn('admin', f.store.adminPassword, '/admin');
    const { page } = watched;
    await page.getByRole('heading', { name: 'Administration', level: 1 }).waitFor();
    await page.getByText('driveway version').waitFor();
    await expect(page.getByText('the built-in admin (every organization)').isVisible()).resolves.toBe(true);
    await checkLayout(page, 'admin');

    await page.getByRole('navigation', { name: 'Administration sections' }).getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    await page.getByLabel('Full name').fill('Grace Hopper');
    await page.getByLabel('Email address (the user signs in with it)').fill('grace@example.test');
    await page.getByLabel('Password', { exact: true }).fill('weak');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.locator('#new-password-error').getByText('Password must have at least 8 characters.').waitFor();
    expect(await page.getByLabel('Full name').inputValue()).toBe('Grace Hopper');
    await page.getByLabel('Password', { exact: true }).fill('Cobol-1959');
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('status').filter({ hasText: 'Grace Hopper is created.' }).waitFor();
    const users = dataOf<Array<{ uuid: string; email: string }>>(await apiCall(f.client, f.admin, 'GET', '/api/admin/users'));
    const grace = users.find((u) => u.email === 'grace@example.test');
    expect(grace).toBeDefined();

    // Search, then the quota: 0.001 MiB = 1,049 bytes (binary units, as every size the app shows).
    await page.getByLabel('Search by name or email').fill('grace');
    await expect(page.locator('.admin-list > li').count()).resolves.toBe(1);
    await page.locator('summary').filter({ hasText: 'Grace Hopper' }).click();
    await page.getByLabel('Quota of Grace Hopper in MiB').fill('0.001');
    await page.getByRole('button', { name: 'Set quota' }).click();
    await page.getByRole('status').filter({ hasText: 'The quota is set.' }).waitFor();
    expect(dataOf<{ disk_quota: number }>(await apiCall(f.client, f.admin, 'GET', `/api/admin/users/${grace?.uuid}`)).disk_quota).toBe(1049);
    await page.locator('li').filter({ has: page.locator('summary', { hasText: 'Grace Hopper' }) }).getByText('Uses 0 bytes of 1 KiB.').waitFor();
    await checkLayout(page, 'admin-users');

    // A group, and Grace in it.
    await page.getByRole('navigation', { name: 'Administration sections' }).getByRole('link', { name: 'Groups' }).click();
    await page.getByRole('heading', { name: 'Groups', level: 1 }).waitFor();
    await page.getByLabel('Group name').fill('Compilers');
    await page.getByRole('button', { name: 'Create group' }).click();
    await page.getByRole('status').filter({ hasText: 'The group Compilers is created.' }).waitFor();
    await page.locator('summary').filter({ hasText: 'Compilers' }).click();
    await page.getByLabel('User to add to Compilers').selectOption({ label: 'Grace Hopper (grace@example.test)' });
    await page.getByRole('button', { name: 'Add member' }).click();
    await page.getByRole('button', { name: 'Remove Grace Hopper from the group' }).waitFor();
    await checkLayout(page, 'admin-groups');
    expect(dataOf<Array<{ group_name: string }>>(await apiCall(f.client, f.admin, 'GET', `/api/admin/users/${grace?.uuid}/groups`)).map((g) => g.group_name)).toEqual(['Compilers']);

    // Grace's upload meets the quota the page set.
    const session = await f.client.login('grace@example.test', 'Cobol-1959');
    await uploadFile(f.client, session, 'home', 'fits.txt', 'a'.repeat(600));
    await expect(uploadFile(f.client, session, 'home', 'too-big.txt', 'b'.repeat(600))).rejects.toMatchObject({ httpStatus: 507, code: 'quota_exceeded' });
    // A quota below what Grace stores now is refused in words, next to the field.
    await page.getByRole('navigation', { name: 'Administration sections' }).getByRole('link', { name: 'Users' }).click();
    await page.locator('summary').filter({ hasText: 'Grace Hopper' }).click();
    await page.getByLabel('Quota of Grace Hopper in MiB').fill('0.0005');
    await page.getByRole('button', { name: 'Set quota' }).click();
    await page.locator(`#quota-${grace?.uuid}-error`).getByText('The quota must be more than what is stored now (600 bytes), or 0.').waitFor();
    expect(dataOf<{ disk_quota: number }>(await apiCall(f.client, f.admin, 'GET', `/api/admin/users/${grace?.uuid}`)).disk_quota).toBe(1049);

    for (const name of ['Organizations', 'Approvers'] as const) {
      await page.getByRole('navigation', { name: 'Administration sections' }).getByRole('link', { name }).click();
      await page.getByRole('heading', { name, level: 1 }).waitFor();
      await page.getByText('Loading…').waitFor({ state: 'detached' });
      await checkLayout(page, `admin-${name.toLowerCase()}`);
    }
    await page.getByLabel('Whose files').selectOption({ label: 'Compilers' });
    await page.getByText('No approvers: shares are made at once.').waitFor();
    await page.getByLabel('Approver').selectOption({ label: 'Grace Hopper (grace@example.test)' });
    await page.getByRole('button', { name: 'Add approver' }).click();
    await page.getByText('Grace Hopper approves public links').waitFor();
    await expectAccessible(page);
    expectClean(watched);
  });

  it('the admin resets a password the user signs in with, disables and enables the user', async () => {
    const ken = await f.newUser({ fullname: 'Ken Thompson' });
    const watched = await signedIn('admin', f.store.adminPassword, '/admin/users', { width: 360 });
    const { page } = watched;
    await page.getByLabel('Search by name or email').fill(ken.email);
    await page.locator('summary').filter({ hasText: 'Ken Thompson' }).click();
    await page.getByLabel('New password for Ken Thompson').fill('Unix-1969a');
    await page.getByRole('button', { name: 'Reset password' }).click();
    await page.getByRole('status').filter({ hasText: 'The password is reset' }).waitFor();

    const kens = await f.openPage();
    await kens.page.goto(`${f.base}/account`);
    await signInThroughForm(kens.page, ken.email, 'Unix-1969a');
    await kens.page.getByRole('heading', { name: 'Your account' }).waitFor();
    expect((await postAuth(f.client, { username: ken.email, password: ken.password })).status).toBe(401);
    // No Administration in a plain user's navigation.
    await expect(kens.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Administration' }).count()).resolves.toBe(0);

    await page.getByRole('button', { name: 'Disable Ken Thompson' }).click();
    await page.getByRole('status').filter({ hasText: 'The account is disabled' }).waitFor();
    expect((await postAuth(f.client, { username: ken.email, password: 'Unix-1969a' })).status).toBe(401);
    await page.getByRole('button', { name: 'Enable Ken Thompson' }).click();
    await page.getByRole('status').filter({ hasText: 'The account is enabled.' }).waitFor();
    expect((await postAuth(f.client, { username: ken.email, password: 'Unix-1969a' })).status).toBe(200);
    await expectAccessible(page);
    expectClean(watched);
  });

  it('a group admin changes a member’s permissions and the member’s access follows; the member sees it read-only', async () => {
    const ada = await f.newUser({ fullname: 'Ada Lovelace' });
    const bob = await f.newUser({ fullname: 'Bob Babbage' });
    const group = await ga.group('Engines');
    await ga.member(group, ada.uuid, { is_admin: true, node_permissions: ['read', 'write'] });
    await ga.member(group, bob.uuid, { node_permissions: ['read'] });
    const bobsAccess = async () => dataOf<string[]>(await apiCall(f.client, bob.session, 'GET', `/api/nodes/home:${group}/myaccess`));
    expect(await bobsAccess()).toEqual(['read']);

    const watched = await signedIn(ada.email, ada.password, '/groups');
    const { page } = watched;
    await page.getByRole('link', { name: 'Engines' }).waitFor();
    await page.getByText('group administrator').waitFor();
    await checkLayout(page, 'groups');
    await page.getByRole('link', { name: 'Engines' }).click();
    await page.getByRole('heading', { name: 'Engines', level: 1 }).waitFor();
    await page.locator('summary').filter({ hasText: 'Bob Babbage' }).click();
    const bobs = page.locator('li').filter({ has: page.locator('summary', { hasText: 'Bob Babbage' }) });
    await bobs.getByLabel('Write', { exact: true }).check();
    await bobs.getByLabel('Download', { exact: true }).check();
    await page.getByRole('button', { name: 'Save permissions of Bob Babbage' }).click();
    await bobs.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(await bobsAccess()).toEqual(['read', 'write', 'download']);
    // The member list says who may do what, in words.
    await page.locator('summary').filter({ hasText: 'Bob Babbage' }).getByText('Files: read, write, download').waitFor();
    await page.locator('summary').filter({ hasText: 'Ada Lovelace' }).getByText('Group administrator: may do everything').waitFor();
    await uploadFile(f.client, bob.session, `home:${group}`, 'notes.txt', 'hello');

    // The WebDrive endpoint, shown to members or not.
    await page.getByLabel('WebDrive name').fill('engines');
    await page.getByLabel('Show the WebDrive URL to all members').uncheck();
    await page.getByRole('button', { name: 'Create WebDrive URL' }).click();
    await page.getByText('Only the group’s administrators see this address:').waitFor();
    await page.getByRole('button', { name: 'Copy the group’s WebDrive URL' }).waitFor();
    await page.getByLabel('Tag name').fill('Urgent');
    await page.getByLabel('Tag class').fill('status');
    await page.getByRole('button', { name: 'Add tag' }).click();
    await page.getByText('(status)').waitFor();
    await page.getByText('Approvers of the group’s shares are named by administrators').waitFor();
    await checkLayout(page, 'group-admin');

    // Bob: the same page read-only, and no WebDrive URL while it is hidden from members.
    const bobsPage = await signedIn(bob.email, bob.password, `/groups/${group}`, { width: 360 });
    await bobsPage.page.getByRole('heading', { name: 'Engines', level: 1 }).waitFor();
    await bobsPage.page.getByText('The group’s administrators do not show its WebDrive URL to members.').waitFor();
    await expect(bobsPage.page.getByText('Only the group’s administrators change this.').first().isVisible()).resolves.toBe(true);
    await expect(bobsPage.page.getByRole('button', { name: /Save|Remove|Add member|WebDrive/ }).count()).resolves.toBe(0);
    await bobsPage.page.getByText('Urgent').waitFor();
    await checkLayout(bobsPage.page, 'group-member');

    // Removing Bob ends his access.
    await page.getByRole('button', { name: 'Remove Bob Babbage from the group' }).click();
    await page.locator('summary').filter({ hasText: 'Bob Babbage' }).waitFor({ state: 'detached' });
    expect((await apiCall(f.client, bob.session, 'GET', `/api/nodes/home:${group}/myaccess`)).status).toBe(404);
    expectClean(watched);
    expectClean(bobsPage);
  });

  it('Add member starts every member afresh at read only, on the group page and in Administration, and the lists say who may do what', async () => {
    const ada = await f.newUser({ fullname: 'Ada Reset' });
    const cleo = await f.newUser({ fullname: 'Cleo Writer' });
    const dan = await f.newUser({ fullname: 'Dan Reader' });
    const eve = await f.newUser({ fullname: 'Eve Writer' });
    const fay = await f.newUser({ fullname: 'Fay Reader' });
    const group = await ga.group('Looms');
    await ga.member(group, ada.uuid, { is_admin: true, node_permissions: ['read', 'write'] });
    const permissionsOf = async (user: string) => dataOf<{ node_permissions: string[] }>(await apiCall(f.client, f.admin, 'GET', `/api/admin/groups/${group}/users/${user}`)).node_permissions;

    // The group page: Cleo gets write; the boxes then stand at read only again, so Dan gets read only.
    const watched = await signedIn(ada.email, ada.password, `/groups/${group}`);
    const { page } = watched;
    const add = page.locator('form').filter({ has: page.getByRole('heading', { name: 'Add member' }) });
    await add.getByLabel('User').selectOption({ label: `Cleo Writer (${cleo.email})` });
    await add.getByLabel('Write', { exact: true }).check();
    await add.getByRole('button', { name: 'Add member' }).click();
    await page.locator('summary').filter({ hasText: 'Cleo Writer' }).getByText('Files: read, write').waitFor();
    expect(await add.getByLabel('Write', { exact: true }).isChecked()).toBe(false);
    expect(await add.getByLabel('Read', { exact: true }).isChecked()).toBe(true);
    await add.getByLabel('User').selectOption({ label: `Dan Reader (${dan.email})` });
    await add.getByRole('button', { name: 'Add member' }).click();
    await page.locator('summary').filter({ hasText: 'Dan Reader' }).getByText('Files: read', { exact: true }).waitFor();
    expect(await permissionsOf(cleo.uuid)).toEqual(['read', 'write']);
    expect(await permissionsOf(dan.uuid)).toEqual(['read']);
    await checkLayout(page, 'group-add-member');
    expectClean(watched);

    // Administration > Groups: the same for Eve, then Fay.
    const admins = await signedIn('admin', f.store.adminPassword, '/admin/groups');
    const ap = admins.page;
    await ap.locator('summary').filter({ hasText: 'Looms' }).click();
    const row = ap.locator('li').filter({ has: ap.locator('summary', { hasText: 'Looms' }) });
    await row.locator('li').filter({ hasText: 'Cleo Writer' }).getByText('Files: read, write').waitFor();
    await row.getByLabel('User to add to Looms').selectOption({ label: `Eve Writer (${eve.email})` });
    await row.getByLabel('Write', { exact: true }).check();
    await row.getByRole('button', { name: 'Add member' }).click();
    await row.locator('li').filter({ hasText: 'Eve Writer' }).getByText('Files: read, write').waitFor();
    expect(await row.getByLabel('Write', { exact: true }).isChecked()).toBe(false);
    await row.getByLabel('User to add to Looms').selectOption({ label: `Fay Reader (${fay.email})` });
    await row.getByRole('button', { name: 'Add member' }).click();
    await row.locator('li').filter({ hasText: 'Fay Reader' }).getByText('Files: read', { exact: true }).waitFor();
    expect(await permissionsOf(eve.uuid)).toEqual(['read', 'write']);
    expect(await permissionsOf(fay.uuid)).toEqual(['read']);
    await checkLayout(ap, 'admin-groups-add-member');
    expectClean(admins);
  });

  it('another administrator gets no built-in admin controls; 2FA off; a group deleted with its files given to a user', async () => {
    const adminEmail = 'linus@example.test';
    dataOf(await apiCall(f.client, f.admin, 'POST', '/api/admin/users', { fullname: 'Linus Admin', email: adminEmail, password: 'Kernel-1991', disk_quota: 0, is_active: true, is_admin: true }));
    const mia = await f.newUser({ fullname: 'Mia Twofactor' });
    dataOf(await apiCall(f.client, mia.session, 'POST', '/api/user/2fa', { twofa: true }));
    const group = await ga.group('Archive');
    await uploadFile(f.client, f.admin, `home:${group}`, 'ledger.txt', 'entries');

    const watched = await signedIn(adminEmail, 'Kernel-1991', '/admin/organizations');
    const { page } = watched;
    await page.getByText('organizations are created and deleted by the built-in admin').waitFor();
    await page.getByText('Default organization').waitFor();
    await expect(page.getByRole('button', { name: 'Create organization' }).count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: /^Delete/ }).count()).resolves.toBe(0);
    await expectAccessible(page);

    await page.getByRole('navigation', { name: 'Administration sections' }).getByRole('link', { name: 'Users' }).click();
    await expect(page.getByLabel('Organization').count()).resolves.toBe(0);
    await page.locator('summary').filter({ hasText: 'Administrator' }).first().click();
    await page.getByText('the built-in admin’s own account is changed by the built-in admin alone.').waitFor();
    await expect(page.getByRole('button', { name: 'Disable Administrator' }).count()).resolves.toBe(0);
    await page.getByLabel('Search by name or email').fill('Mia');
    await page.locator('summary').filter({ hasText: 'Mia Twofactor' }).click();
    await page.getByRole('button', { name: 'Turn off two-factor authentication for Mia Twofactor' }).click();
    await page.getByRole('status').filter({ hasText: 'Two-factor authentication is off for this user.' }).waitFor();
    expect(dataOf<{ twofa: boolean }>(await apiCall(f.client, f.admin, 'GET', `/api/admin/users/${mia.uuid}`)).twofa).toBe(false);

    await page.getByRole('navigation', { name: 'Administration sections' }).getByRole('link', { name: 'Groups' }).click();
    await page.locator('summary').filter({ hasText: 'Archive' }).click();
    await page.getByRole('button', { name: 'Delete Archive' }).click();
    await page.getByText('Choose who gets the files, or confirm that they are deleted with the group.').waitFor();
    expect((await apiCall(f.client, f.admin, 'GET', `/api/admin/groups/${group}`)).status).toBe(200);
    await page.getByLabel('Give the files of Archive to').selectOption({ label: `Mia Twofactor (${mia.email})` });
    await page.getByRole('button', { name: 'Delete Archive' }).click();
    await page.getByRole('status').filter({ hasText: 'The group Archive is deleted. Its files are in the folder Archive in the home of Mia Twofactor.' }).waitFor();
    await page.locator('summary').filter({ hasText: 'Archive' }).waitFor({ state: 'detached' });
    expect((await apiCall(f.client, f.admin, 'GET', `/api/admin/groups/${group}`)).status).toBe(404);
    const folders = dataOf<Array<{ name: string; uuid: string }>>(await apiCall(f.client, mia.session, 'GET', '/api/nodes/home/dirlist'));
    const archive = folders.find((entry) => entry.name === 'Archive');
    expect(archive).toBeDefined();
    // The group's top-level folders come as folders of that name (docs/store-semantics.md "Deleting users and groups").
    const inside = dataOf<Array<{ name: string; uuid: string }>>(await apiCall(f.client, mia.session, 'GET', `/api/nodes/${archive?.uuid}/dirlist`));
    const home = inside.find((entry) => entry.name === 'home');
    const files = dataOf<Array<{ name: string }>>(await apiCall(f.client, mia.session, 'GET', `/api/nodes/${home?.uuid}/dirlist`));
    expect(files.map((entry) => entry.name)).toEqual(['ledger.txt']);
    await expectAccessible(page);
    expectClean(watched);
  });

  it('a plain user opening /admin is refused in words and gets no data; another organization’s group is not found', async () => {
    await ga.organization('elsewhere');
    const foreignGroup = await ga.group('Far Away', { orgId: 'elsewhere' });
    const eve = await f.newUser({ fullname: 'Eve Plain' });
    const watched = await signedIn(eve.email, eve.password, '/admin/users');
    const { page } = watched;
    const adminCalls: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.startsWith('/api/admin')) adminCalls.push(request.url());
    });
    await page.getByText('Administration is for administrators.').waitFor();
    await expect(page.getByRole('button', { name: 'Create user' }).count()).resolves.toBe(0);
    await page.reload();
    await page.getByText('Administration is for administrators.').waitFor();
    expect(adminCalls).toEqual([]);
    await checkLayout(page, 'admin-refused');

    await page.goto(`${f.base}/groups/${foreignGroup}`);
    await page.getByRole('heading', { name: 'Group not found' }).waitFor();
    await page.getByText('There is no group at this address that you are a member of.').waitFor();
    await expect(page.getByText('Far Away').count()).resolves.toBe(0);
    await expectAccessible(page);
    expectClean(watched);
  });
});
