/**
 * The upload link's door (`POST /public/{token}/upload`, routes/public.ts) against what the other
 * doors hold: a file another user locked through the bridge is never replaced (the link's upload
 * takes a free name beside it, the locked file keeps its bytes and revisions), and a drive at its
 * quota, to the byte, refuses the upload (507 quota_exceeded, as PUT and the REST upload answer)
 * with disk_used unchanged and nothing new in the folder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeId } from '../../../src/store-client/index.js';
import { bridgeRequests, EXCLUSIVE_LOCKINFO } from '../../helpers/dav-requests.js';
import { createFolder, readDiskUsed, uploadFile } from '../../helpers/seed.js';
import { as, fetchRaw, multipartFile, readChildNames, readText } from '../../helpers/sharing.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

let f: BridgeFixture;
const { davAs } = bridgeRequests(() => f);

beforeAll(async () => {
  f = await bridgeFixture();
});
afterAll(async () => {
  await f?.close();
});

/** An upload link on `folder` of `owner`: its URL. */
async function uploadLink(owner: DavUser, folder: NodeId): Promise<string> {
  const res = await as(f.client, owner.session, 'POST', `/api/nodes/${folder}/shares`, { type: 'upload' });
  expect(res.status).toBe(200);
  return (res.body as { data: { url: string } }).data.url;
}

function sendThroughLink(url: string, name: string, content: string) {
  const form = multipartFile(name, content);
  return fetchRaw(f.store, `${url}/upload`, { method: 'POST', headers: form.headers, body: form.body });
}

describe('an upload link', () => {
  it('never replaces a file locked through the bridge: the upload takes a free name, the locked file keeps its bytes and revisions', async () => {
    const owner = await f.newDavUser();
    const folder = await createFolder(f.client, owner.session, 'home', 'Inbox');
    const locked = await uploadFile(f.client, owner.session, folder, 'report.txt', 'the locked content');
    const lock = await davAs(owner, 'LOCK', '/home/Inbox/report.txt', { depth: '0', 'content-type': 'application/xml', timeout: 'Second-600' }, EXCLUSIVE_LOCKINFO);
    expect(lock.status).toBe(200);
    const url = await uploadLink(owner, folder);

    const answers = await Promise.all([sendThroughLink(url, 'report.txt', 'from a stranger'), sendThroughLink(url, 'report.txt', 'from another')]);
    expect(answers.map((a) => a.status)).toEqual([200, 200]);
    expect(answers.map((a) => (a.json() as { data: { name: string } }).data.name).sort()).toEqual(['report (2).txt', 'report (3).txt']);
    expect(await readText(f.store, owner.session, locked)).toBe('the locked content');
    expect(await f.client.listRevisions(owner.session, locked)).toHaveLength(1);
    // The lock still holds for a PUT through the bridge by someone without its token.
    expect((await davAs(owner, 'PUT', '/home/Inbox/report.txt', {}, 'no token')).status).toBe(423);
  });

  it('on a drive at its quota to the byte refuses the upload (507) with disk_used exact and the folder unchanged', async () => {
    const owner = await f.newDavUser({ quotaBytes: 20 });
    const folder = await createFolder(f.client, owner.session, 'home', 'Drop');
    await uploadFile(f.client, owner.session, folder, 'full.txt', 'x'.repeat(20));
    const url = await uploadLink(owner, folder);
    expect(await readDiskUsed(f.store, owner.uuid)).toBe(20);

    const refused = await Promise.all(['a.txt', 'b.txt', 'c.txt'].map((name) => sendThroughLink(url, name, '1')));
    for (const answer of refused) {
      expect({ status: answer.status, body: answer.json() }).toEqual({ status: 507, body: { status: 'error', code: 'quota_exceeded', msg: expect.any(String) } });
    }
    expect(await readChildNames(f.store, folder)).toEqual(['full.txt']);
    expect(await readDiskUsed(f.store, owner.uuid)).toBe(20);
    // PUT through the bridge refuses the same byte with the same status.
    expect((await davAs(owner, 'PUT', '/home/Drop/d.txt', {}, '1')).status).toBe(507);
  });
});
