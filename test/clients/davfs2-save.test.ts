/**
 * Issue 22, item 3, with the real davfs2 1.6 (FUSE, `use_locks 1`): a save the way LibreOffice
 * makes it on a mounted drive, by its lock file, a temp file written next to the document and
 * `rename(2)` of the temp over the document. davfs2 turns the rename into a MOVE with Overwrite
 * onto the document. Afterwards the document keeps its UUID, both earlier revisions, its public
 * link and its share to another user, and the saved bytes are its latest revision.
 *
 * As in davfs2.test.ts the bridge runs in this process, so every file operation on the mount is
 * a spawned program. Needs root and /dev/fuse (a loud skip without them, a failure with CI=true).
 */
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { NodeEntry } from '../../src/store-client/index.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { startDavRecorder, type DavRecorder } from './dav-recorder.js';
import { DavfsMount, requireDavfs, STEP_TIMEOUT_MS } from './davfs2-mount.js';
import { describeRun, runProgram, type ProgramRun } from './run-program.js';
import { storeEntry } from './store-state.js';

const davfs = requireDavfs('davfs2-save.test');

davfs.describe('a LibreOffice-style save on a davfs2 mount keeps the document’s history', () => {
  let f: BridgeFixture;
  let recorder: DavRecorder;
  let alice: DavUser;
  let bob: DavUser;
  let tmp: ReturnType<typeof makeTmpDir>;
  let davfsMount: DavfsMount;
  let before: NodeEntry;
  let linkToken: string;

  async function dav(method: string, path: string, body?: string): Promise<number> {
    const res = await request(`${f.davUrl}${path}`, { method, headers: { authorization: alice.auth }, ...(body === undefined ? {} : { body }) });
    await res.body.dump();
    return res.statusCode;
  }

  async function api(method: 'POST', path: string, json: unknown): Promise<Record<string, unknown>> {
    const res = await f.client.http.requestRaw({ method, path, token: alice.session.token, json });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    return res.body as Record<string, unknown>;
  }

  function sh(script: string): Promise<ProgramRun> {
    return runProgram('sh', ['-c', script], { cwd: tmp.dir, timeoutMs: STEP_TIMEOUT_MS });
  }

  async function revisionText(version?: number): Promise<string> {
    const download = await f.client.download(alice.session, before.id, before.name, version === undefined ? {} : { version });
    return Buffer.concat(await download.body.toArray()).toString();
  }

  beforeAll(async () => {
    f = await bridgeFixture();
    recorder = await startDavRecorder(f.davUrl);
    alice = await f.newDavUser();
    bob = await f.newDavUser();
    expect(await dav('MKCOL', '/home/office/')).toBe(201);
    expect(await dav('PUT', '/home/office/report.odt', 'report v1')).toBe(201);
    expect(await dav('PUT', '/home/office/report.odt', 'report v2')).toBe(204);
    const entry = await storeEntry(f, alice, ['office', 'report.odt']);
    if (!entry) throw new Error('no report.odt');
    before = entry;
    await api('POST', `/api/nodes/${entry.id}/shares`, { type: 'private', recipients: [bob.uuid] });
    linkToken = ((await api('POST', `/api/nodes/${entry.id}/shares`, { type: 'public' })).data as { token: string }).token;
    tmp = makeTmpDir('driveway-davfs2-save-');
    davfsMount = new DavfsMount({
      mountPath: davfs.mountPath,
      url: `${recorder.url}/home/office/`,
      username: alice.email,
      password: alice.password,
      tmpDir: tmp.dir,
      name: 'office',
      // Upload a closed file at once, as a document's temp file is before the rename.
      conf: ['delay_upload 0'],
    });
  }, 120_000);

  afterAll(async () => {
    const free = davfsMount ? await davfsMount.cleanup() : true;
    if (free) tmp?.remove();
    await recorder?.close();
    await f?.close();
  }, STEP_TIMEOUT_MS + 60_000);

  it(
    'lock file, temp file, rename over the document, unmount: same node, v1 and v2 kept, the save is revision 3',
    async (ctx) => {
      const mounted = await davfsMount.mount();
      if (davfsMount.fuseRefused) ctx.skip(`FUSE unusable here: ${davfsMount.fuseRefused}`);
      expect(mounted.code, describeRun(mounted)).toBe(0);
      const mnt = davfsMount.mnt;
      const save = await sh(
        [
          `cat "${mnt}/report.odt" > /dev/null`,
          `printf ',alice,host,28.11.2026 10:00,alice;' > "${mnt}/.~lock.report.odt#"`,
          `printf 'report v3 saved' > "${mnt}/lu1234abcd.tmp"`,
          // davfs2 has uploaded the closed temp (delay_upload 0) when the rename comes.
          'sleep 1',
          `mv -f "${mnt}/lu1234abcd.tmp" "${mnt}/report.odt"`,
          `rm "${mnt}/.~lock.report.odt#"`,
        ].join(' && '),
      );
      expect(save.code, `${describeRun(save)}\n${recorder.describe()}`).toBe(0);
      const unmounted = await davfsMount.unmount();
      expect(unmounted.code, describeRun(unmounted)).toBe(0);

      const moves = recorder.exchanges.filter((e) => e.method === 'MOVE');
      expect(moves.map((e) => e.status), recorder.describe()).toEqual([204]);
      const after = await storeEntry(f, alice, ['office', 'report.odt']);
      expect(after?.id).toBe(before.id);
      expect(after?.revision).toBe(3);
      expect([await revisionText(1), await revisionText(2), await revisionText()]).toEqual(['report v1', 'report v2', 'report v3 saved']);
      const linked = await request(`${f.store.url}/public/${linkToken}`);
      expect(await linked.body.text()).toBe('report v3 saved');
      const shared = await request(`${f.davUrl}/shared_with_you/report.odt`, { headers: { authorization: bob.auth } });
      expect(await shared.body.text()).toBe('report v3 saved');
      expect((await storeEntry(f, alice, ['office', 'lu1234abcd.tmp']))).toBeUndefined();
      // Only the lock file LibreOffice removes is in the trash (a DELETE trashes); neither the temp nor the document.
      expect((await f.client.listFolder(alice.session, 'trash' as NodeEntry['id'])).map((e) => e.name)).toEqual(['.~lock.report.odt#']);
      if (process.env.DRIVEWAY_TEST_LOG) console.log(recorder.describe());
    },
    STEP_TIMEOUT_MS * 3,
  );
});
