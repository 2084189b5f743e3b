/**
 * The Connect page's rclone guide works as written (issue 24, item 2): with the store and the
 * WebDAV bridge in one process as `npm start` runs them, Ada copies the one-line `rclone config
 * create` command from the page, puts her password in place of YOUR-PASSWORD as the guide says,
 * runs it, and her drive answers through rclone: a file the store holds is listed, and a file
 * rclone uploads is then in the store (asked through the REST API).
 */
import path from 'node:path';
import { expect, it } from 'vitest';
import { nodeId } from '../../src/store-client/index.js';
import { describeRun, runProgram } from '../clients/run-program.js';
import { requireBinary } from '../helpers/require-binary.js';
import { clipboardText, signInThroughForm, webDriveSuite } from '../helpers/web-page.js';

const chromiumBinary = requireBinary('chromium');
const rclone = requireBinary('rclone');
const bash = requireBinary('bash');

// Skipped (loudly) when either program is missing; CI=true fails instead.
(rclone.isAvailable ? chromiumBinary : rclone).describe('the rclone guide of the Connect page, run as written', () => {
  const suite = webDriveSuite(chromiumBinary.path, 'adarc', 'driveway-web-rclone-');

  it('mounts Ada\'s WebDrive URL through the command copied from the page', async () => {
    const { f, ada, tmp } = suite;
    const watched = await f.openPage({ clipboard: true });
    const { page } = watched;
    await page.goto(`${f.base}/connect`);
    await signInThroughForm(page, ada.email, ada.password);
    await page.getByRole('heading', { name: 'Connect your drive' }).waitFor();
    await page.getByText('rclone', { exact: true }).click();
    await page.getByRole('button', { name: 'Copy the rclone command' }).click();
    const command = await clipboardText(page);
    expect(command).toContain(`url='${f.davUrl}/webdrive/adarc/'`);

    const env = { PATH: process.env.PATH, HOME: tmp.dir, RCLONE_CONFIG: path.join(tmp.dir, 'rclone.conf'), LANG: 'C.UTF-8' };
    const created = await runProgram(bash.path, ['-euo', 'pipefail', '-c', command.replace('YOUR-PASSWORD', ada.password)], { cwd: tmp.dir, env, timeoutMs: 30_000 });
    expect(created.code, describeRun(created)).toBe(0);
    const listed = await runProgram(rclone.path, ['lsf', 'driveway:', '--retries', '1', '--low-level-retries', '1'], { cwd: tmp.dir, env, timeoutMs: 60_000 });
    expect(listed.code, describeRun(listed)).toBe(0);
    expect(listed.stdout.split('\n')).toContain('minutes.txt');
    const sent = await runProgram(rclone.path, ['rcat', 'driveway:from-rclone.txt', '--retries', '1', '--low-level-retries', '1'], { cwd: tmp.dir, env, timeoutMs: 60_000, input: 'sent by rclone\n' });
    expect(sent.code, describeRun(sent)).toBe(0);
    const home = await f.client.listFolder(ada.session, nodeId('home'));
    expect(home.map((entry) => entry.name).sort()).toEqual(['from-rclone.txt', 'minutes.txt']);
    expect(watched.foreign).toEqual([]);
    expect(watched.problems).toEqual([]);
  });
});
