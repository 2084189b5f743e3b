/**
 * Issue 22, item 3: history through a client's safe save. LibreOffice over davfs2, Word over the
 * Windows WebClient and Finder save by writing a temp file and MOVE-ing it over the original
 * with Overwrite: T, inside a lock dance (docs/bridge-design.md "Saves" has the sequences these
 * replays send). After each the original keeps its UUID and every earlier revision (each
 * downloaded by number), its public link and its private share to another user serve the new
 * content, which is its latest revision, and the temp file is gone. Word's rename-away save too
 * (original to ~WRL, temp into its name, ~WRL deleted; also spread over two bridges), while a
 * person's rename, a late or foreign MOVE, or a lock leave that dance to today's behaviour. Refusals change nothing;
 * COPY keeps its source; a collection on either side is replaced as before. Runs on the
 * run's transport (integration: in-process; integration-http: over HTTP; integration-pg-bridge:
 * PostgreSQL + S3 in-process, and there once more over HTTP, so both transports meet both
 * storages), and once more over HTTP against a store without the revision route (the proxy
 * answers it 404, or 405 as some servers do), where the bridge falls back to uploading the bytes.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId, type NodeEntry, type NodeId } from '../../../src/store-client/index.js';
import { ManualClock } from '../../../src/common/clock.js';
import { createLogger } from '../../../src/common/logger.js';
import { startBridge } from '../../../src/bridge/server.js';
import { bridgeRequests, davRequest, EXCLUSIVE_LOCKINFO, multistatusOf, type DavAnswer, type DavHeaders } from '../../helpers/dav-requests.js';
import { groupAdmin } from '../../helpers/groups.js';
import { uploadFile } from '../../helpers/seed.js';
import { bridgeFixture, bridgeStateFor, bridgeStoreFor, TEST_TRANSPORT, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { testStorageKind } from '../../helpers/start-store.js';

const LIBREOFFICE_UA = 'davfs2/1.7.0 neon/0.33.0';
const WINDOWS_UA = 'Microsoft-WebDAV-MiniRedir/10.0.19045';
const FINDER_UA = 'WebDAVFS/3.0.0 (03008000) Darwin/22.1.0 (arm64)';
const REVISION_ROUTE = /^\/api\/nodes\/[^/]+\/revisions$/;

/**
 * The run's transport; our store over HTTP where the run's is in-process on PostgreSQL + S3
 * (integration-http covers HTTP on SQLite); or a store without the revision route: the proxy
 * answers it 404 or 405.
 */
type Variant = 'run transport' | 'our store over HTTP' | 'foreign store, route 404' | 'foreign store, route 405';
const HTTP_TOO = testStorageKind() === 'postgres' && TEST_TRANSPORT === 'local';
const VARIANTS: Variant[] = ['run transport', ...(HTTP_TOO ? (['our store over HTTP'] as const) : []), 'foreign store, route 404', 'foreign store, route 405'];

describe.each<Variant>(VARIANTS)('safe saves keep history (%s)', (variant) => {
  const missingStatus = variant === 'foreign store, route 404' ? 404 : variant === 'foreign store, route 405' ? 405 : undefined;
  const foreign = missingStatus !== undefined;
  let f: BridgeFixture;
  let alice: DavUser;
  // The bridges' clock: a test moves it past the minute a rename-away waits.
  const clock = new ManualClock();
  const { dav, davAs, storeEntries, put } = bridgeRequests(() => f, () => alice);

  beforeAll(async () => {
    f = await bridgeFixture({ clock, ...(foreign || variant === 'our store over HTTP' ? { viaProxy: true } : {}) });
    // A store that only speaks the interface: the route answers 404 as a missing one would.
    if (missingStatus !== undefined) f.proxy?.answerInstead(REVISION_ROUTE, missingStatus, { message: 'no such route', statusCode: missingStatus });
    alice = await f.newDavUser();
    expect((await dav('MKCOL', '/home/docs/')).status).toBe(201);
  });
  afterAll(async () => {
    await f?.close();
  });

  async function api(method: 'GET' | 'POST', path: string, json?: unknown, as: DavUser = alice): Promise<Record<string, unknown>> {
    const res = await f.client.http.requestRaw({ method, path, token: as.session.token, ...(json === undefined ? {} : { json }) });
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
    return res.body as Record<string, unknown>;
  }

  async function docsId(): Promise<NodeId> {
    const docs = (await storeEntries('home')).find((e) => e.name === 'docs');
    if (!docs) throw new Error('no docs folder');
    return docs.id;
  }

  async function entryOf(name: string): Promise<NodeEntry | undefined> {
    return (await f.client.listFolder(alice.session, await docsId())).find((e) => e.name === name);
  }

  async function revisionText(id: NodeId, name: string, version: number): Promise<string> {
    const download = await f.client.download(alice.session, id, name, { version });
    return Buffer.concat(await download.body.toArray()).toString();
  }

  interface Original {
    entry: NodeEntry;
    /** The public link's token. */
    link: string;
    /** Who it is shared with (privately, read). */
    bob: DavUser;
  }

  /** The original: written once per version, starred, shared with a new user, with a public link. */
  async function original(name: string, versions: string[]): Promise<Original> {
    for (const text of versions) await put(`/home/docs/${name}`, text);
    const entry = await entryOf(name);
    if (!entry) throw new Error(`no ${name}`);
    const bob = await f.newDavUser();
    await api('POST', `/api/nodes/${entry.id}/shares`, { type: 'private', recipients: [bob.uuid] });
    const link = ((await api('POST', `/api/nodes/${entry.id}/shares`, { type: 'public' })).data as { token: string }).token;
    await api('POST', `/api/nodes/${entry.id}`, { starred: true });
    return { entry, link, bob };
  }

  /** After a save of `saved` over `name`: same node, history whole, link, share and star live, temp gone. */
  async function expectHistoryKept(name: string, before: Original, versions: string[], saved: string, temp: string): Promise<void> {
    const now = await entryOf(name);
    expect(now?.id).toBe(before.entry.id);
    expect(now?.revision).toBe(versions.length + 1);
    expect(now?.isStarred).toBe(true);
    for (const [i, text] of versions.entries()) expect(await revisionText(before.entry.id, name, i + 1)).toBe(text);
    expect(await revisionText(before.entry.id, name, versions.length + 1)).toBe(saved);
    expect((await davAs(alice, 'GET', `/home/docs/${name}`)).text).toBe(saved);
    const linked = await request(`${f.store.url}/public/${before.link}`);
    expect(linked.statusCode).toBe(200);
    expect(await linked.body.text()).toBe(saved);
    // The share, through the bridge and the store.
    expect((await davAs(before.bob, 'GET', `/shared_with_you/${encodeURIComponent(name)}`)).text).toBe(saved);
    expect(Buffer.concat(await (await f.client.download(before.bob.session, before.entry.id, name)).body.toArray()).toString()).toBe(saved);
    expect(await entryOf(temp)).toBeUndefined();
    const trash = (await storeEntries('trash')).map((e) => e.name);
    expect(trash).not.toContain(temp);
    expect(trash).not.toContain(name);
  }

  function as(agent: string) {
    return (method: string, path: string, headers: DavHeaders = {}, body?: string): Promise<DavAnswer> =>
      dav(method, path, { 'user-agent': agent, ...headers }, body);
  }

  async function lockFor(send: ReturnType<typeof as>, path: string): Promise<string> {
    const res = await send('LOCK', path, { depth: '0', timeout: 'Second-600', 'content-type': 'text/xml; charset="utf-8"' }, EXCLUSIVE_LOCKINFO);
    expect([200, 201], res.text).toContain(res.status);
    const token = /<(opaquelocktoken:[^>]+)>/.exec(String(res.headers['lock-token']))?.[1];
    if (!token) throw new Error('LOCK gave no token');
    return token;
  }

  const tagged = (path: string, token: string): DavHeaders => ({ if: `<${f.davUrl}${path}> (<${token}>)` });

  it('LibreOffice over davfs2: lock file, temp PUT under its own lock, MOVE over the locked original, unlock', async () => {
    const send = as(LIBREOFFICE_UA);
    const name = 'report.odt';
    const versions = ['report v1', 'report v2'];
    const before = await original(name, versions);
    // Opening: davfs2 locks the file it opens for writing; LibreOffice writes its lock file.
    expect((await send('PROPFIND', '/home/docs/', { depth: '1' })).status).toBe(207);
    const docToken = await lockFor(send, `/home/docs/${name}`);
    const lockFile = '/home/docs/.~lock.report.odt%23';
    const lockFileToken = await lockFor(send, lockFile);
    expect([200, 201, 204]).toContain((await send('PUT', lockFile, { if: `(<${lockFileToken}>)` }, ',alice,host,28.11.2026 10:00,alice;')).status);
    // Saving: a temp file, created under its own lock as davfs2 creates every file, then renamed over the original.
    const temp = 'lu12345abcd.tmp';
    const tempToken = await lockFor(send, `/home/docs/${temp}`);
    expect([200, 201, 204]).toContain((await send('PUT', `/home/docs/${temp}`, { if: `(<${tempToken}>)` }, 'report v3 saved')).status);
    expect((await send('UNLOCK', `/home/docs/${temp}`, { 'lock-token': `<${tempToken}>` })).status).toBe(204);
    const moved = await send('MOVE', `/home/docs/${temp}`, { destination: `${f.davUrl}/home/docs/${name}`, overwrite: 'T', ...tagged(`/home/docs/${name}`, docToken) });
    expect(moved.status, moved.text).toBe(204);
    // The original's lock still holds for the editor that took it (a save is a write, not a delete).
    expect((await dav('PUT', `/home/docs/${name}`, {}, 'someone else')).status).toBe(423);
    expect((await send('PROPFIND', `/home/docs/${name}`, { depth: '0' })).status).toBe(207);
    // Closing: the lock file goes, both locks are released.
    expect((await send('DELETE', lockFile, { if: `(<${lockFileToken}>)` })).status).toBe(204);
    expect((await send('UNLOCK', `/home/docs/${name}`, { 'lock-token': `<${docToken}>` })).status).toBe(204);
    await expectHistoryKept(name, before, versions, 'report v3 saved', temp);
  });

  it('Word over the Windows WebClient: LOCK, temp created empty then written under a lock, MOVE over the original, UNLOCK', async () => {
    const send = as(WINDOWS_UA);
    const name = 'letter.docx';
    const versions = ['letter v1', 'letter v2'];
    const before = await original(name, versions);
    const docToken = await lockFor(send, `/home/docs/${name}`);
    const temp = '~WRD0002.tmp';
    const tempPath = `/home/docs/${encodeURIComponent(temp)}`;
    expect((await send('PROPFIND', tempPath, { depth: '0', 'content-length': '0' })).status).toBe(404);
    expect((await send('PUT', tempPath, { 'content-length': '0' }, '')).status).toBe(201);
    const tempToken = await lockFor(send, tempPath);
    expect((await send('PUT', tempPath, { if: `(<${tempToken}>)` }, 'letter v3 saved')).status).toBe(204);
    expect((await send('UNLOCK', tempPath, { 'lock-token': `<${tempToken}>` })).status).toBe(204);
    const moved = await send('MOVE', tempPath, { destination: `${f.davUrl}/home/docs/${name}`, overwrite: 'T', ...tagged(`/home/docs/${name}`, docToken) });
    expect(moved.status, moved.text).toBe(204);
    expect((await send('UNLOCK', `/home/docs/${name}`, { 'lock-token': `<${docToken}>` })).status).toBe(204);
    await expectHistoryKept(name, before, versions, 'letter v3 saved', temp);
  });

  /** Trash entries as `name id`, to see that a save put nothing there. */
  async function trashState(): Promise<string[]> {
    return (await storeEntries('trash')).map((e) => `${e.name} ${e.id}`).sort();
  }

  /**
   * Word's other pattern (on some setups): the temp written, the original renamed away to
   * `~WRL<n>.tmp` under its lock, the temp renamed into the freed name, the backup deleted. The
   * temp's MOVE goes to `intoBridge` when given (a second bridge: the dance spread over instances).
   */
  async function renameAwaySave(name: string, saved: string, n: number, intoBridge?: { send: ReturnType<typeof as>; url: string }): Promise<{ into: DavAnswer; deleted: DavAnswer }> {
    const send = as(WINDOWS_UA);
    const docPath = `/home/docs/${name}`;
    const docToken = await lockFor(send, docPath);
    const tempPath = `/home/docs/${encodeURIComponent(`~WRD000${n}.tmp`)}`;
    const backupPath = `/home/docs/${encodeURIComponent(`~WRL000${n}.tmp`)}`;
    expect((await send('PUT', tempPath, { 'content-length': '0' }, '')).status).toBe(201);
    const tempToken = await lockFor(send, tempPath);
    expect((await send('PUT', tempPath, { if: `(<${tempToken}>)` }, saved)).status).toBe(204);
    expect((await send('UNLOCK', tempPath, { 'lock-token': `<${tempToken}>` })).status).toBe(204);
    const away = await send('MOVE', docPath, { destination: `${f.davUrl}${backupPath}`, overwrite: 'F', if: `(<${docToken}>)` });
    expect(away.status, away.text).toBe(201);
    // Explorer lists the folder between the steps: with a second bridge, this one's listing still
    // holds the backup when its DELETE comes (no change feed over SQLite tells it otherwise).
    if (intoBridge) expect((await send('PROPFIND', '/home/docs/', { depth: '1' })).status).toBe(207);
    const into = await (intoBridge?.send ?? send)('MOVE', tempPath, { destination: `${intoBridge?.url ?? f.davUrl}${docPath}`, overwrite: 'F' });
    // The MOVE away ended the document's lock (RFC 4918 §9.9.1: a write lock does not move with its resource).
    const deleted = await send('DELETE', backupPath);
    return { into, deleted };
  }

  // Word's other pattern (on some setups): no request lands on an existing file, so the bridge
  // remembers the rename to ~WRL and makes the temp moved into the freed name a new revision of
  // the original (docs/bridge-design.md "Saves").
  it('Word renaming the original away (~WRL), the temp into its place, then deleting ~WRL: a new revision of the original', async () => {
    const name = 'memo.docx';
    const versions = ['memo v1', 'memo v2'];
    const before = await original(name, versions);
    const trashBefore = await trashState();
    const { into, deleted } = await renameAwaySave(name, 'memo v3 saved', 3);
    expect(into.status, into.text).toBe(201);
    expect(deleted.status, deleted.text).toBe(204);
    await expectHistoryKept(name, before, versions, 'memo v3 saved', '~WRD0003.tmp');
    expect(await entryOf('~WRL0003.tmp')).toBeUndefined();
    expect(await trashState()).toEqual(trashBefore);
  });

  it('the rename-away save through two bridges over one store: each step on either keeps the history', async () => {
    const second = await startBridge({
      config: f.store.config,
      logger: createLogger('silent'),
      store: bridgeStoreFor(f.store, f.proxy ? 'http' : TEST_TRANSPORT, f.proxy?.url),
      state: await bridgeStateFor(f.store, f.proxy ? 'http' : TEST_TRANSPORT, { config: f.store.config }),
      port: 0,
      clock,
    });
    try {
      const other = (method: string, path: string, headers: DavHeaders = {}, body?: string) =>
        davRequest(second.url, method, path, { auth: alice.auth, headers: { 'user-agent': WINDOWS_UA, ...headers }, body });
      const name = 'minutes.docx';
      const versions = ['minutes v1'];
      const before = await original(name, versions);
      const trashBefore = await trashState();
      const { into, deleted } = await renameAwaySave(name, 'minutes v2 saved', 4, { send: other, url: second.url });
      expect(into.status, into.text).toBe(201);
      expect(deleted.status, deleted.text).toBe(204);
      await expectHistoryKept(name, before, versions, 'minutes v2 saved', '~WRD0004.tmp');
      expect(await trashState()).toEqual(trashBefore);
    } finally {
      await second.close();
    }
  });

  it('a COPY onto the name a document was renamed away from: a new revision of the document, the copied file stays', async () => {
    const name = 'copied.docx';
    const before = await original(name, ['copied v1']);
    await put('/home/docs/copied-src.docx', 'copied v2 saved');
    const backupPath = `/home/docs/${encodeURIComponent('~WRL0005.tmp')}`;
    expect((await as(WINDOWS_UA)('MOVE', `/home/docs/${name}`, { destination: `${f.davUrl}${backupPath}`, overwrite: 'F' })).status).toBe(201);
    const copied = await as(WINDOWS_UA)('COPY', '/home/docs/copied-src.docx', { destination: `${f.davUrl}/home/docs/${name}`, overwrite: 'F' });
    expect(copied.status, copied.text).toBe(201);
    expect((await as(WINDOWS_UA)('DELETE', backupPath)).status).toBe(204);
    // The second DELETE finds nothing: the memo of the restored name answers once.
    expect((await as(WINDOWS_UA)('DELETE', backupPath)).status).toBe(404);
    await expectHistoryKept(name, before, ['copied v1'], 'copied v2 saved', '~WRL0005.tmp');
    expect((await dav('GET', '/home/docs/copied-src.docx')).text).toBe('copied v2 saved');
  });

  it('a lock on the renamed-away document whose token is not sent: the temp lands as a new file, the document untouched', async () => {
    const name = 'held.docx';
    const before = await original(name, ['held v1']);
    await put('/home/docs/held-temp.tmp', 'held v2');
    const backupPath = `/home/docs/${encodeURIComponent('~WRL0006.tmp')}`;
    expect((await as(WINDOWS_UA)('MOVE', `/home/docs/${name}`, { destination: `${f.davUrl}${backupPath}`, overwrite: 'F' })).status).toBe(201);
    const token = await lockFor(as(WINDOWS_UA), backupPath);
    const temp = await entryOf('held-temp.tmp');
    const moved = await as(WINDOWS_UA)('MOVE', '/home/docs/held-temp.tmp', { destination: `${f.davUrl}/home/docs/${name}`, overwrite: 'F' });
    expect(moved.status, moved.text).toBe(201);
    expect((await entryOf(name))?.id).toBe(temp?.id);
    expect(await entryOf('~WRL0006.tmp')).toMatchObject({ id: before.entry.id, revision: 1 });
    expect((await as(WINDOWS_UA)('DELETE', backupPath)).status).toBe(423);
    expect((await as(WINDOWS_UA)('UNLOCK', backupPath, { 'lock-token': `<${token}>` })).status).toBe(204);
  });

  /** A file renamed by hand, then another file moved onto the name it left: the name goes to the moved file's node, as always. */
  async function expectPlainRename(name: string, renamedTo: string, between: () => Promise<void>): Promise<void> {
    await put(`/home/docs/${name}`, `${name} v1`);
    const kept = await entryOf(name);
    await put(`/home/docs/other-${name}`, 'another file');
    const other = await entryOf(`other-${name}`);
    expect((await dav('MOVE', `/home/docs/${name}`, { destination: `${f.davUrl}/home/docs/${encodeURIComponent(renamedTo)}`, overwrite: 'F' })).status).toBe(201);
    await between();
    const moved = await dav('MOVE', `/home/docs/other-${name}`, { destination: `${f.davUrl}/home/docs/${name}`, overwrite: 'F' });
    expect(moved.status, moved.text).toBe(201);
    expect((await entryOf(name))?.id).toBe(other?.id);
    const renamed = await entryOf(renamedTo);
    expect(renamed?.id).toBe(kept?.id);
    expect(await revisionText(renamed?.id as NodeId, renamedTo, 1)).toBe(`${name} v1`);
    expect((await dav('DELETE', `/home/docs/${encodeURIComponent(renamedTo)}`)).status).toBe(204);
    expect((await storeEntries('trash')).find((e) => e.id === kept?.id)?.revision).toBe(renamed?.revision);
  }

  it('a rename to ~x.tmp, then another file moved onto the old name after the minute: a new node, the renamed file untouched', async () => {
    await expectPlainRename('late.txt', '~late.tmp', async () => clock.advance(61_000));
  });

  it('a rename to ~x.tmp, then the renamed file written, then another file moved onto the old name: a new node', async () => {
    await expectPlainRename('edited.txt', '~edited.tmp', async () => {
      expect((await dav('PUT', `/home/docs/${encodeURIComponent('~edited.tmp')}`, {}, 'edited.txt v1')).status).toBe(204);
    });
  });

  it('a rename to a name that is no editor’s backup, then another file moved onto the old name: a new node', async () => {
    await expectPlainRename('named.txt', 'named-old.txt', async () => undefined);
    await expectPlainRename('tilde.txt', '~tilde.txt', async () => undefined);
  });

  it('another user cannot complete someone’s rename-away: refused without write, and a new node with it', async () => {
    expect((await dav('MKCOL', '/home/docs/team/')).status).toBe(201);
    const team = await entryOf('team');
    const reader = await f.newDavUser();
    const writer = await f.newDavUser();
    await api('POST', `/api/nodes/${team?.id}/shares`, { type: 'private', recipients: [reader.uuid] });
    await api('POST', `/api/nodes/${team?.id}/shares`, { type: 'private', recipients: [writer.uuid], writable: true });
    await put('/home/docs/team/plan.docx', 'plan v1');
    const plan = (await f.client.listFolder(alice.session, team?.id as NodeId)).find((e) => e.name === 'plan.docx');
    expect((await as(WINDOWS_UA)('MOVE', '/home/docs/team/plan.docx', { destination: `${f.davUrl}/home/docs/team/${encodeURIComponent('~WRL0009.tmp')}`, overwrite: 'F' })).status).toBe(201);
    const teamState = async (): Promise<string[]> => (await f.client.listFolder(alice.session, team?.id as NodeId)).map((e) => `${e.name} ${e.id} ${e.revision}`).sort();
    const before = await teamState();
    for (const [user, status] of [[reader, 403], [writer, 201]] as const) {
      expect((await davAs(user, 'PUT', '/home/mine.docx', {}, `${user.uuid} text`)).status).toBe(201);
      const moved = await davAs(user, 'MOVE', '/home/mine.docx', { destination: `${f.davUrl}/shared_with_you/team/plan.docx`, overwrite: 'F', 'user-agent': WINDOWS_UA });
      expect(moved.status, moved.text).toBe(status);
      if (status === 403) {
        expect(await teamState()).toEqual(before);
      } else {
        // The writer's file is a new node there; alice's document stays as it was at its backup name.
        const now = await teamState();
        expect(now).toContain(`~WRL0009.tmp ${plan?.id} 1`);
        expect(now.find((e) => e.startsWith('plan.docx '))).not.toContain(String(plan?.id));
        expect(await revisionText(plan?.id as NodeId, '~WRL0009.tmp', 1)).toBe('plan v1');
      }
    }
  });

  it('Finder: temp created by LOCK of the unmapped URL, chunked PUT, UNLOCK, MOVE over the original without Overwrite (T by default)', async () => {
    const send = as(FINDER_UA);
    const name = 'notes.rtf';
    const versions = ['notes v1', 'notes v2'];
    const before = await original(name, versions);
    const temp = '.dat.nosync01a2.Zx9Qp';
    const tempToken = await lockFor(send, `/home/docs/${temp}`);
    const body = 'notes v3 saved';
    const written = await send('PUT', `/home/docs/${temp}`, { if: `(<${tempToken}>)`, 'x-expected-entity-length': String(body.length) }, body);
    expect([200, 201, 204]).toContain(written.status);
    expect((await send('UNLOCK', `/home/docs/${temp}`, { 'lock-token': `<${tempToken}>` })).status).toBe(204);
    const moved = await send('MOVE', `/home/docs/${temp}`, { destination: `${f.davUrl}/home/docs/${name}` });
    expect(moved.status, moved.text).toBe(204);
    await expectHistoryKept(name, before, versions, body, temp);
  });

  it('a save in a group’s drive: the node stays the group’s, its usage grows by the saved bytes exactly', async () => {
    const teamName = `Office Team ${variant}`;
    const ga = groupAdmin(f.client, f.admin);
    const team = await ga.group(teamName);
    await ga.member(team, alice.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    const dir = `/groups/${encodeURIComponent(teamName)}/home`;
    await put(`${dir}/plan.docx`, 'plan v1');
    const plan = (await f.client.listFolder(alice.session, nodeId(`home:${team}`))).find((e) => e.name === 'plan.docx');
    if (!plan) throw new Error('no plan.docx');
    const usedBefore = (await f.client.groupUsage(alice.session, team))?.usedBytes ?? -1;
    await put(`${dir}/~WRD0001.tmp`, '');
    await put(`${dir}/~WRD0001.tmp`, 'plan v2 saved');
    const moved = await dav('MOVE', `${dir}/~WRD0001.tmp`, { destination: `${f.davUrl}${dir}/plan.docx`, overwrite: 'T' });
    expect(moved.status, moved.text).toBe(204);
    const after = (await f.client.listFolder(alice.session, nodeId(`home:${team}`))).map((e) => `${e.name} ${e.id} ${e.revision}`);
    expect(after).toEqual([`plan.docx ${plan.id} 2`]);
    expect((await f.client.details(alice.session, plan.id)).ownerType).toBe('Group');
    expect((await f.client.groupUsage(alice.session, team))?.usedBytes).toBe(usedBefore + 'plan v2 saved'.length);
    expect(await revisionText(plan.id, 'plan.docx', 1)).toBe('plan v1');
  });

  it('MOVE gives the destination the source’s dead properties and client mtime; COPY keeps its source', async () => {
    await put('/home/docs/props-dst.txt', 'dst');
    await put('/home/docs/props-src.txt', 'src');
    const color = (path: string, value: string) =>
      dav('PROPPATCH', path, { 'content-type': 'application/xml' }, `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:test"><D:set><D:prop><Z:color>${value}</Z:color></D:prop></D:set></D:propertyupdate>`);
    expect((await color('/home/docs/props-dst.txt', 'red')).status).toBe(207);
    expect((await color('/home/docs/props-src.txt', 'green')).status).toBe(207);
    const colorOf = async (path: string): Promise<string | undefined> => {
      const [r] = multistatusOf(await dav('PROPFIND', path, { depth: '0', 'content-type': 'application/xml' }, '<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:Z="urn:test"><D:prop><Z:color/></D:prop></D:propfind>'));
      return r?.props.get('{urn:test}color')?.text;
    };
    const copied = await dav('COPY', '/home/docs/props-src.txt', { destination: `${f.davUrl}/home/docs/props-dst.txt` });
    expect(copied.status).toBe(204);
    expect(await colorOf('/home/docs/props-dst.txt')).toBe('green');
    expect((await dav('GET', '/home/docs/props-src.txt')).text).toBe('src');
    expect((await entryOf('props-dst.txt'))?.revision).toBe(2);
    expect((await color('/home/docs/props-src.txt', 'blue')).status).toBe(207);
    const moved = await dav('MOVE', '/home/docs/props-src.txt', { destination: `${f.davUrl}/home/docs/props-dst.txt`, 'x-oc-mtime': '1600000000' });
    expect(moved.status).toBe(204);
    expect(await colorOf('/home/docs/props-dst.txt')).toBe('blue');
    const [r] = multistatusOf(await dav('PROPFIND', '/home/docs/props-dst.txt', { depth: '0' }));
    expect(r?.props.get('{DAV:}getlastmodified')?.text).toBe(new Date(1_600_000_000_000).toUTCString());
    expect((await entryOf('props-dst.txt'))?.revision).toBe(3);
    expect(await entryOf('props-src.txt')).toBeUndefined();
  });

  it('a collection on either side is replaced as before: the old one goes to the trash', async () => {
    expect((await dav('MKCOL', '/home/docs/folder-dst/')).status).toBe(201);
    await put('/home/docs/folder-dst/inner.txt', 'inner');
    const oldFolder = await entryOf('folder-dst');
    await put('/home/docs/file-src.txt', 'a file over a folder');
    expect((await dav('MOVE', '/home/docs/file-src.txt', { destination: `${f.davUrl}/home/docs/folder-dst` })).status).toBe(204);
    const replaced = await entryOf('folder-dst');
    expect(replaced?.kind).toBe('file');
    expect(replaced?.id).not.toBe(oldFolder?.id);
    expect((await storeEntries('trash')).some((e) => e.id === oldFolder?.id)).toBe(true);
    expect((await dav('MKCOL', '/home/docs/folder-src/')).status).toBe(201);
    const oldFile = await entryOf('folder-dst');
    expect((await dav('COPY', '/home/docs/folder-src/', { destination: `${f.davUrl}/home/docs/folder-dst` })).status).toBe(204);
    expect((await entryOf('folder-dst'))?.kind).toBe('folder');
    expect((await storeEntries('trash')).some((e) => e.id === oldFile?.id)).toBe(true);
  });

  it('refusals change nothing: quota 507, no write 403, locked 423, If 412', async () => {
    const carol = await f.newDavUser({ quotaBytes: 1000 });
    const { dav: carolDav } = bridgeRequests(() => f, () => carol);
    const state = async (): Promise<string> => {
      const entry = (await f.client.listFolder(carol.session, nodeId('home'))).find((e) => e.name === 'kept.txt');
      return `${entry?.id} ${entry?.revision} ${(await carolDav('GET', '/home/kept.txt')).text} ${(await f.client.currentUser(carol.session)).diskUsedBytes}`;
    };
    expect((await carolDav('PUT', '/home/kept.txt', {}, 'k'.repeat(300))).status).toBe(201);
    expect((await carolDav('PUT', '/home/big.bin', {}, 'b'.repeat(600))).status).toBe(201);
    const before = await state();
    // 507: a COPY adds 600 bytes to 900 used.
    expect((await carolDav('COPY', '/home/big.bin', { destination: `${f.davUrl}/home/kept.txt` })).status).toBe(507);
    expect(await state()).toBe(before);
    // 423 and 412: a lock on the destination, then its token with a wrong entity tag.
    const token = await lockAs(carol, '/home/kept.txt');
    for (const method of ['COPY', 'MOVE']) {
      expect((await carolDav(method, '/home/big.bin', { destination: `${f.davUrl}/home/kept.txt` })).status).toBe(423);
      expect((await carolDav(method, '/home/big.bin', { destination: `${f.davUrl}/home/kept.txt`, if: `<${f.davUrl}/home/kept.txt> (<${token}> ["nope"])` })).status).toBe(412);
    }
    expect(await state()).toBe(before);
    expect((await carolDav('GET', '/home/big.bin')).text).toBe('b'.repeat(600));
    // 403: a group file carol may read but not write.
    const ga = groupAdmin(f.client, f.admin);
    const team = await ga.group(`Save Team ${variant}`);
    await ga.member(team, alice.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    await ga.member(team, carol.uuid, { node_permissions: ['read', 'download'] });
    const teamPath = `/groups/${encodeURIComponent(`Save Team ${variant}`)}/home`;
    // Made through the store: alice's bridge may still list her groups without this one.
    const shared = await uploadFile(f.client, alice.session, `home:${team}`, 'shared.txt', 'team text');
    expect((await carolDav('COPY', '/home/big.bin', { destination: `${f.davUrl}${teamPath}/shared.txt` })).status).toBe(403);
    expect((await carolDav('MOVE', '/home/big.bin', { destination: `${f.davUrl}${teamPath}/shared.txt` })).status).toBe(403);
    expect(await revisionText(shared, 'shared.txt', 1)).toBe('team text');
    expect((await f.client.listFolder(alice.session, nodeId(`home:${team}`))).map((e) => `${e.name} ${e.revision}`)).toEqual(['shared.txt 1']);
    expect((await carolDav('GET', '/home/big.bin')).text).toBe('b'.repeat(600));
  });

  it.runIf(foreign)('the fallback cut halfway through the upload changes nothing', async () => {
    await put('/home/docs/cut-dst.txt', 'whole');
    await put('/home/docs/cut-src.txt', 'x'.repeat(300_000));
    const before = await entryOf('cut-dst.txt');
    f.proxy?.breakNextRequestAfter(/^\/upload\//, 20_000, 'POST');
    const res = await dav('MOVE', '/home/docs/cut-src.txt', { destination: `${f.davUrl}/home/docs/cut-dst.txt` });
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(await entryOf('cut-dst.txt')).toEqual(before);
    expect((await dav('GET', '/home/docs/cut-dst.txt')).text).toBe('whole');
    expect((await dav('GET', '/home/docs/cut-src.txt')).text).toBe('x'.repeat(300_000));
  });

  it.runIf(variant === 'our store over HTTP')('each save above was one call of the store’s revision route over HTTP', () => {
    // LibreOffice, Word, Word's rename-away through each bridge and by COPY, Finder, the group's save, then COPY and MOVE onto props-dst.txt.
    expect(f.proxy?.matching('POST', REVISION_ROUTE).filter((r) => (r.status ?? 0) < 300).length).toBe(9);
  });

  it.runIf(foreign)('each bridge asked the missing route once, then uploaded the bytes', () => {
    // The suite's bridge and the second one of the two-bridge save: the call and the probe each.
    expect(f.proxy?.matching('POST', REVISION_ROUTE).length).toBe(4);
    expect(f.proxy?.matching('POST', /^\/upload\//).length).toBeGreaterThan(0);
  });

  async function lockAs(user: DavUser, path: string): Promise<string> {
    const res = await davAs(user, 'LOCK', path, { depth: '0', 'content-type': 'application/xml', timeout: 'Second-600' }, EXCLUSIVE_LOCKINFO);
    const token = /<(opaquelocktoken:[^>]+)>/.exec(String(res.headers['lock-token']))?.[1];
    if (!token) throw new Error('LOCK gave no token');
    return token;
  }
});
