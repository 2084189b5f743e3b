/**
 * A public link with curl (issue 8, "Done when"): a file shared by a public link downloads
 * without credentials, whole and as a Range (206 with the exact bytes), revalidates with its
 * ETag (304); a password-protected link takes the password as Basic credentials and refuses a
 * wrong one; a removed link is gone (404). The link is made through the store's API as a user
 * would; curl is the real client, nothing of the test's own HTTP stack is in between.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import { uploadFile } from '../helpers/seed.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { describeRun, runProgram, type ProgramRun } from './run-program.js';

const curl = requireBinary('curl');
const CONTENT = randomBytes(300_000);

curl.describe('public links with curl', () => {
  let f: BridgeFixture;
  let owner: DavUser;
  let tmp: ReturnType<typeof makeTmpDir>;
  let url = '';
  let shareUuid = '';

  async function createLink(file: string, extra: Record<string, unknown> = {}): Promise<{ url: string; share_uuid: string }> {
    const res = await f.client.http.requestRaw({ method: 'POST', path: `/api/nodes/${file}/shares`, token: owner.session.token, json: { type: 'public', ...extra } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body as { data: { url: string; share_uuid: string } }).data;
  }

  function get(args: string[], target: string, out = path.join(tmp.dir, 'out.bin')): Promise<ProgramRun> {
    return runProgram(curl.path, ['-sS', '-o', out, '-w', '%{http_code} %{size_download}', ...args, target], { timeoutMs: 30_000 });
  }

  beforeAll(async () => {
    f = await bridgeFixture();
    owner = await f.newDavUser();
    tmp = makeTmpDir('driveway-links-');
    const file = await uploadFile(f.client, owner.session, 'home', 'report.pdf', CONTENT);
    const link = await createLink(file);
    url = new URL(link.url, f.store.url).href;
    shareUuid = link.share_uuid;
  });
  afterAll(async () => {
    await f?.close();
    tmp?.remove();
  });

  it('downloads the whole file without credentials, byte for byte', async () => {
    const run = await get([], url);
    expect(run.stdout, describeRun(run)).toBe(`200 ${CONTENT.length}`);
    expect(createHash('sha256').update(readFileSync(path.join(tmp.dir, 'out.bin'))).digest('hex')).toBe(createHash('sha256').update(CONTENT).digest('hex'));
  });

  it('serves a Range as 206 with exactly its bytes', async () => {
    const run = await get(['-r', '100000-100999'], url);
    expect(run.stdout, describeRun(run)).toBe('206 1000');
    expect(readFileSync(path.join(tmp.dir, 'out.bin')).equals(CONTENT.subarray(100_000, 101_000))).toBe(true);
  });

  it('revalidates with the ETag it sent (304)', async () => {
    const headers = path.join(tmp.dir, 'headers.txt');
    await get(['-D', headers], url);
    const etag = /^etag: (.+)$/im.exec(readFileSync(headers, 'utf8'))?.[1]?.trim();
    expect(etag).toMatch(/^"[0-9a-f-]+-1"$/);
    const run = await get(['-H', `If-None-Match: ${etag}`], url);
    expect(run.stdout).toBe('304 0');
  });

  it('takes the password of a protected link as Basic credentials and refuses a wrong one', async () => {
    const file = await uploadFile(f.client, owner.session, 'home', 'secret.pdf', 'for the board only');
    const link = await createLink(file, { password: 'Board-Meeting-7' });
    const protectedUrl = new URL(link.url, f.store.url).href;
    expect((await get([], protectedUrl)).stdout.split(' ')[0]).toBe('401');
    expect((await get(['-u', 'anyone:wrong'], protectedUrl)).stdout.split(' ')[0]).toBe('401');
    expect((await get(['-u', 'anyone:Board-Meeting-7'], protectedUrl)).stdout).toBe('200 18');
  });

  it('is gone once removed (404)', async () => {
    const res = await f.client.http.requestRaw({ method: 'DELETE', path: `/api/shares/${shareUuid}`, token: owner.session.token });
    expect(res.status).toBe(200);
    expect((await get([], url)).stdout.split(' ')[0]).toBe('404');
  });
});
