/**
 * The two-way sync scenarios of issue 30 ("Tests, with the real clients"), for one sync client on
 * one deployment: the suite files (test/clients/sync-clients.test.ts embedded,
 * test/multi-instance/sync-clients.test.ts two instances over PostgreSQL + S3 behind nginx) call
 * syncScenarios() once per client inside a describe whose beforeAll fills the deployment.
 *
 * One account per client, synced with an app password; its home synced into one local folder
 * (`--path /home`), then each scenario changes one side and runs the client again, in order:
 * first sync (nested folders, a 0-byte file, spaces, Unicode, `#`, `%`, a big file by chunking
 * NG), a no-change sync, local edits, server edits/new files/deletes at the top and five folders
 * down, a server rename, a local folder rename and move, a conflict; then a group drive with
 * write and one read-only, and the view's root (`/`) where the trash must not come down.
 * Server-side changes go to the bridge directly (`serverDavUrl`: another instance when there are
 * several), never through the recorder, so what the recorder saw is the client's alone. Every
 * scenario asserts bytes on both sides (the store read through its own client, never the
 * bridge), and what crossed the wire where the issue names it (no GET for a rename, one MOVE
 * for a folder rename).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { HttpStoreClient, StoreSession } from '../../src/store-client/index.js';
import { davRequest, href, type DavRequestOptions } from '../helpers/dav-requests.js';
import { call, dataOf, groupAdmin } from '../helpers/groups.js';
import type { RequiredBinary } from '../helpers/require-binary.js';
import type { DavUser } from '../helpers/start-bridge.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { startDavRecorder, type DavRecorder, type RecordedExchange } from './dav-recorder.js';
import { AWKWARD } from './local-tree.js';
import { storeEntry, storeTreeSha256, type StoreReader } from './store-state.js';
import { explainSync, isDiscovery, syncedTree, syncRunner, transfers, type SyncClientName, type SyncRun, type SyncRunner } from './sync-client.js';

export interface SyncDeployment {
  /** The address a person types into the client (the bridge, or the balancer in front of several), no trailing slash. */
  davUrl: string;
  /** Where the suite makes its server-side changes: the bridge, or another instance than the client's. */
  serverDavUrl: string;
  /** A store client of the deployment (the readers of store-state.ts). */
  client: HttpStoreClient;
  admin: StoreSession;
  newUser(): Promise<DavUser>;
}

export interface SyncScenarioOptions {
  /** The big file of the first sync (chunking NG): 150 MB unless DRIVEWAY_SYNC_BIG_MIB says otherwise. */
  bigFileBytes?: number;
}

const MiB = 1024 * 1024;
export const BIG_FILE_BYTES = Number(process.env.DRIVEWAY_SYNC_BIG_MIB ?? 150) * MiB;
const BIG_SYNC_TIMEOUT_MS = 240_000;
/** Five folders down from the synced root. */
const DEEP = ['deep', 'l2', 'l3', 'l4', 'l5'];
/**
 * local-tree.ts's awkward names that both clients sync: not `?` (owncloudcmd 2.11 refuses names
 * with characters Windows forbids, on every system), not NFD (the store keeps names in NFC).
 */
const SYNCED_NAMES = AWKWARD.filter((name) => !/[?\\:*"<>|]/.test(name) && name === name.normalize('NFC'));
/** The tree's folders: `dir <n> <name>`. */
const awkwardDir = (n: number): string => `dir ${n} ${SYNCED_NAMES[n % SYNCED_NAMES.length]}`;

/** `folders` folders of `perFolder` files each, named from SYNCED_NAMES, of 1 byte to 20 KB of random bytes. */
function writeSyncTree(root: string, folders: number, perFolder: number): void {
  for (let folder = 0; folder < folders; folder += 1) {
    mkdirSync(path.join(root, awkwardDir(folder)), { recursive: true });
    for (let file = 0; file < perFolder; file += 1) {
      const name = `${SYNCED_NAMES[(folder * perFolder + file) % SYNCED_NAMES.length]} ${folder}-${file}.txt`;
      writeFileSync(path.join(root, awkwardDir(folder), name), randomBytes(1 + ((folder * 7_919 + file * 104_729) % 20_000)));
    }
  }
}

/** Writes `bytes` of random data to `file` a MiB at a time (never held whole). */
function writeRandomFile(file: string, bytes: number): void {
  const fd = openSync(file, 'w');
  try {
    for (let written = 0; written < bytes; written += MiB) writeSync(fd, randomBytes(Math.min(MiB, bytes - written)));
  } finally {
    closeSync(fd);
  }
}

/** A local write with a modification time `secondsAhead` from now (clients see a change by size and time). */
function writeLocal(file: string, content: string | Buffer, secondsAhead = 0): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
  const when = Date.now() / 1000 + secondsAhead;
  utimesSync(file, when, when);
}

/** The decoded path of an exchange, without a trailing slash. */
const decodedPath = (e: RecordedExchange): string => decodeURIComponent(e.path.split('?')[0] ?? '').replace(/\/$/, '').normalize('NFC');

const withoutPrefixes = (tree: Map<string, string>, prefixes: readonly string[]): Record<string, string> =>
  Object.fromEntries([...tree].filter(([relative]) => !prefixes.some((prefix) => relative.startsWith(prefix))).sort(([a], [b]) => a.localeCompare(b)));

/** Registers the scenarios for `clientName` (a describe of the caller); `deployment()` is read in beforeAll. */
export function syncScenarios(clientName: SyncClientName, binary: RequiredBinary, deployment: () => SyncDeployment, options: SyncScenarioOptions = {}): void {
  const bigBytes = options.bigFileBytes ?? BIG_FILE_BYTES;
  let d: SyncDeployment;
  let reader: StoreReader;
  let user: DavUser;
  let recorder: DavRecorder;
  let tmp: ReturnType<typeof makeTmpDir>;
  let sync: SyncRunner;
  let local = '';
  const groups = { rw: `rw ${clientName} ${randomUUID().slice(0, 6)}`, ro: `ro ${clientName} ${randomUUID().slice(0, 6)}` };
  let groupOwner: DavUser;

  /** A request to the bridge directly (not through the recorder), as `as` (the synced user by default). */
  const server = (method: string, segments: readonly string[], extra: DavRequestOptions = {}, as: DavUser = user) =>
    davRequest(d.serverDavUrl, method, href(...segments), { auth: as.auth, ...extra });
  const serverPut = async (segments: readonly string[], body: string | Buffer, as?: DavUser): Promise<void> => {
    const answer = await server('PUT', segments, { body }, as);
    expect([201, 204], `PUT ${segments.join('/')}: ${answer.status} ${answer.text}`).toContain(answer.status);
  };
  /** The oc:fileid the bridge answers for a path. */
  const fileId = async (segments: readonly string[]): Promise<string> => {
    const answer = await server('PROPFIND', segments, {
      headers: { depth: '0', 'content-type': 'application/xml' },
      body: '<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><oc:fileid/><oc:id/></d:prop></d:propfind>',
    });
    expect(answer.status, answer.text).toBe(207);
    const match = /<([\w-]+:)?fileid(?:\s[^>]*)?>([^<]+)</.exec(answer.text);
    expect(match, `no oc:fileid for ${segments.join('/')}: ${answer.text}`).not.toBeNull();
    return match?.[2] ?? '';
  };
  const ok = (run: SyncRun): void => {
    expect(run.timedOut, explainSync(run, recorder)).toBe(false);
    expect(run.code, explainSync(run, recorder)).toBe(0);
  };
  const methods = (run: SyncRun, method: string): RecordedExchange[] => run.exchanges.filter((e) => e.method === method);
  /**
   * The local tree and the store's home are the same, but for folders left out: `big/` (150 MB to
   * hash) unless asked, and `deep/` after the scenario of changes five folders down (its own
   * failure is not every later scenario's).
   */
  const expectHomeInSync = async (run: SyncRun, options: { root?: string; skip?: readonly string[] } = {}): Promise<void> => {
    const [localTree, storeTree] = await Promise.all([syncedTree(options.root ?? local), storeTreeSha256(reader, user, [])]);
    const skip = options.skip ?? ['big/'];
    expect(withoutPrefixes(localTree, skip), explainSync(run, recorder)).toEqual(withoutPrefixes(storeTree, skip));
  };
  const AFTER_DEEP = ['big/', 'deep/'];
  const localFile = (...segments: string[]): string => path.join(local, ...segments);

  beforeAll(async () => {
    d = deployment();
    reader = { client: d.client };
    tmp = makeTmpDir(`driveway-sync-${clientName}-`);
    local = path.join(tmp.dir, 'home');
    user = await d.newUser();
    recorder = await startDavRecorder(d.davUrl);
    // The clients are given an app password, as Login Flow v2 hands them one.
    const app = await dataOf<{ password: string }>(call(d.client, user.session, 'POST', '/api/user/app_passwords', { name: clientName }));
    sync = syncRunner(clientName, binary, { serverUrl: recorder.url, login: user.email, password: app.password }, recorder, tmp.dir);

    const ga = groupAdmin(d.client, d.admin);
    groupOwner = await d.newUser();
    const rw = await ga.group(groups.rw);
    const ro = await ga.group(groups.ro);
    const all = ['read', 'write', 'delete', 'download'];
    await ga.member(rw, user.uuid, { node_permissions: all });
    await ga.member(rw, groupOwner.uuid, { is_admin: true, node_permissions: all });
    await ga.member(ro, user.uuid, { node_permissions: ['read', 'download'] });
    await ga.member(ro, groupOwner.uuid, { is_admin: true, node_permissions: all });
    await serverPut(['groups', groups.rw, 'home', 'team.txt'], 'the team file\n', groupOwner);
    await serverPut(['groups', groups.ro, 'home', 'handbook.txt'], 'read, do not edit\n', groupOwner);
  }, 120_000);

  afterAll(async () => {
    await recorder?.close();
    tmp?.remove();
  });

  it('first sync uploads a tree of nested folders, a 0-byte file, spaces, Unicode, # and %, and a big file by chunking NG; the store holds the same bytes', async () => {
    mkdirSync(local, { recursive: true });
    writeSyncTree(local, 3, 5);
    writeLocal(localFile('empty.txt'), '');
    writeLocal(localFile('sp ace #1 %20 ü 😀.txt'), 'awkward top-level name\n');
    writeLocal(localFile('edit me.txt'), 'first version of a file edited locally\n');
    writeLocal(localFile('same size.txt'), 'AAAAAAAAAAAAAAAA');
    writeLocal(localFile('server edits me.txt'), 'first version, the server edits it\n');
    writeLocal(localFile('delete me.txt'), 'the server deletes this\n');
    writeLocal(localFile('rename me.txt'), randomBytes(4096));
    writeLocal(localFile('move me.txt'), 'moved into another folder locally\n');
    writeLocal(localFile('conflict.txt'), 'before the conflict\n');
    writeLocal(localFile(...DEEP, 'deep.txt'), 'five folders down\n');
    writeLocal(localFile(...DEEP, 'server edits me too.txt'), 'deep, the server edits it\n');
    writeLocal(localFile(...DEEP, 'delete me too.txt'), 'deep, the server deletes this\n');
    mkdirSync(localFile('big'));
    writeRandomFile(localFile('big', 'big.bin'), bigBytes);

    const run = await sync('/home', local, { timeoutMs: BIG_SYNC_TIMEOUT_MS });
    ok(run);
    await expectHomeInSync(run, { skip: [] });
    // The big file went as chunking NG (an upload folder, then MOVE of its .file), never as legacy OC-Chunked parts.
    expect(run.exchanges.some((e) => e.method === 'MKCOL' && /\/remote\.php\/dav\/uploads\//.test(e.path)), explainSync(run, recorder)).toBe(true);
    expect(run.exchanges.some((e) => e.method === 'MOVE' && /\/remote\.php\/dav\/uploads\/.*\/\.file$/.test(e.path)), explainSync(run, recorder)).toBe(true);
    expect(run.exchanges.filter((e) => /-chunking-/.test(e.path))).toEqual([]);
    expect((await storeEntry(reader, user, ['big', 'big.bin']))?.sizeBytes).toBe(bigBytes);
    expect((await storeEntry(reader, user, ['empty.txt']))?.sizeBytes).toBe(0);
  }, BIG_SYNC_TIMEOUT_MS + 60_000);

  it('a second sync with nothing changed transfers nothing', async () => {
    const run = await sync('/home', local);
    ok(run);
    expect(transfers(run.exchanges), explainSync(run, recorder)).toEqual([]);
    await expectHomeInSync(run);
  });

  it('the next sync with nothing changed makes one PROPFIND, of the synced root, besides status and OCS', async () => {
    // The one before may list again the folders the first sync wrote into (the client marks them
    // so); this one has nothing left to check below the root.
    const run = await sync('/home', local);
    ok(run);
    expect(transfers(run.exchanges), explainSync(run, recorder)).toEqual([]);
    const propfinds = methods(run, 'PROPFIND');
    expect(propfinds.map(decodedPath), explainSync(run, recorder)).toHaveLength(1);
    expect(decodedPath(propfinds[0] as RecordedExchange), explainSync(run, recorder)).toMatch(/\/home$/);
  });

  it('local edits go up, one of them the same size with other bytes, and nothing else is uploaded', async () => {
    writeLocal(localFile('edit me.txt'), 'second version, longer than the first, edited locally\n', 60);
    writeLocal(localFile('same size.txt'), 'BBBBBBBBBBBBBBBB', 60);
    writeLocal(localFile(...DEEP, 'deep.txt'), 'five folders down, edited locally\n', 60);
    const revisionBefore = (await storeEntry(reader, user, ['same size.txt']))?.revision ?? 0;
    const run = await sync('/home', local);
    ok(run);
    const uploaded = [...methods(run, 'PUT'), ...methods(run, 'MOVE')].map(decodedPath);
    expect(uploaded.map((p) => p.split('/').pop()).sort(), explainSync(run, recorder)).toEqual(['deep.txt', 'edit me.txt', 'same size.txt']);
    await expectHomeInSync(run);
    expect((await storeEntry(reader, user, ['same size.txt']))?.revision).toBe(revisionBefore + 1);
  });

  it('server edits, new files and deletes at the top and five folders down are each downloaded by the next sync', async () => {
    await serverPut(['home', 'server edits me.txt'], 'second version, written on the server\n');
    await serverPut(['home', 'new on the server.txt'], 'new at the top\n');
    await serverPut(['home', ...DEEP, 'server edits me too.txt'], 'deep, second version, written on the server\n');
    await serverPut(['home', ...DEEP, 'new deep on the server.txt'], 'new five folders down\n');
    expect((await server('DELETE', ['home', 'delete me.txt'])).status).toBe(204);
    expect((await server('DELETE', ['home', ...DEEP, 'delete me too.txt'])).status).toBe(204);
    const run = await sync('/home', local);
    ok(run);
    expect(readFileSync(localFile('server edits me.txt'), 'utf8')).toBe('second version, written on the server\n');
    expect(readFileSync(localFile('new on the server.txt'), 'utf8')).toBe('new at the top\n');
    expect(readFileSync(localFile(...DEEP, 'server edits me too.txt'), 'utf8'), explainSync(run, recorder)).toBe('deep, second version, written on the server\n');
    expect(readFileSync(localFile(...DEEP, 'new deep on the server.txt'), 'utf8')).toBe('new five folders down\n');
    expect(existsSync(localFile('delete me.txt'))).toBe(false);
    expect(existsSync(localFile(...DEEP, 'delete me too.txt')), explainSync(run, recorder)).toBe(false);
    expect(methods(run, 'PUT'), explainSync(run, recorder)).toEqual([]);
    await expectHomeInSync(run);
  });

  it('a server rename of a file and of a folder is applied locally without a download', async () => {
    const before = await syncedTree(local);
    const move = async (from: string[], to: string[]) => {
      const answer = await server('MOVE', ['home', ...from], { headers: { destination: `${d.serverDavUrl}${href('home', ...to)}` } });
      expect(answer.status, answer.text).toBe(201);
    };
    await move(['rename me.txt'], ['renamed on the server.txt']);
    await move([awkwardDir(0)], ['dir 0 renamed on the server']);
    const run = await sync('/home', local);
    ok(run);
    expect(methods(run, 'GET').filter((e) => !isDiscovery(e)), explainSync(run, recorder)).toEqual([]);
    expect(existsSync(localFile('rename me.txt'))).toBe(false);
    expect(existsSync(localFile(awkwardDir(0)))).toBe(false);
    const after = await syncedTree(local);
    expect(after.get('renamed on the server.txt')).toBe(before.get('rename me.txt'));
    for (const [relative, hash] of before) {
      if (relative.startsWith(`${awkwardDir(0)}/`)) expect(after.get(relative.replace(awkwardDir(0), 'dir 0 renamed on the server'))).toBe(hash);
    }
    expect(transfers(run.exchanges), explainSync(run, recorder)).toEqual([]);
    await expectHomeInSync(run, { skip: AFTER_DEEP });
  });

  it('a local folder rename and a local move go up as one MOVE each, and keep their ids', async () => {
    const folder = awkwardDir(1);
    const folderId = await fileId(['home', folder]);
    const fileIdBefore = await fileId(['home', 'move me.txt']);
    const uuids = { folder: (await storeEntry(reader, user, [folder]))?.id, file: (await storeEntry(reader, user, ['move me.txt']))?.id };
    renameSync(localFile(folder), localFile('dir 1 renamed locally'));
    renameSync(localFile('move me.txt'), localFile(awkwardDir(2), 'move me.txt'));
    const run = await sync('/home', local);
    ok(run);
    const moves = methods(run, 'MOVE').map(decodedPath);
    expect(moves.map((p) => p.split('/').pop()).sort(), explainSync(run, recorder)).toEqual([folder.normalize('NFC'), 'move me.txt']);
    expect(transfers(run.exchanges).filter((e) => e.method !== 'MOVE'), explainSync(run, recorder)).toEqual([]);
    expect(await fileId(['home', 'dir 1 renamed locally'])).toBe(folderId);
    expect(await fileId(['home', awkwardDir(2), 'move me.txt'])).toBe(fileIdBefore);
    expect((await storeEntry(reader, user, ['dir 1 renamed locally']))?.id).toBe(uuids.folder);
    expect((await storeEntry(reader, user, [awkwardDir(2), 'move me.txt']))?.id).toBe(uuids.file);
    await expectHomeInSync(run, { skip: AFTER_DEEP });
  });

  it('a conflict is kept both ways: the server keeps its version, the local edit stays beside it as a conflict copy', async () => {
    writeLocal(localFile('conflict.txt'), 'the local side of the conflict\n', 120);
    await serverPut(['home', 'conflict.txt'], 'the server side of the conflict\n');
    const run = await sync('/home', local);
    const explained = explainSync(run, recorder);
    expect(run.timedOut, explained).toBe(false);
    expect(readFileSync(localFile('conflict.txt'), 'utf8'), explained).toBe('the server side of the conflict\n');
    const copies = readdirSync(local).filter((name) => /^conflict.*(\(conflicted copy|_conflict-)/.test(name));
    expect(copies, explained).toHaveLength(1);
    expect(readFileSync(localFile(copies[0] as string), 'utf8')).toBe('the local side of the conflict\n');
    const stored = await storeEntry(reader, user, ['conflict.txt']);
    expect(stored, explained).toBeDefined();
    const onServer = await server('GET', ['home', 'conflict.txt']);
    expect(onServer.text).toBe('the server side of the conflict\n');
    // The local side stays local (capability uploadConflictFiles false): nothing goes up, over the server's file or as a copy.
    expect(methods(run, 'PUT').filter((e) => /\/conflict[^/]*$/.test(decodedPath(e))), explained).toEqual([]);
  });

  it('a group drive with write: the group\'s file comes down, a local edit and a new file go up, a member\'s change comes down', async () => {
    const dir = path.join(tmp.dir, 'group-rw');
    const remote = `/groups/${groups.rw}/home`;
    let run = await sync(remote, dir);
    ok(run);
    expect(readFileSync(path.join(dir, 'team.txt'), 'utf8'), explainSync(run, recorder)).toBe('the team file\n');
    writeLocal(path.join(dir, 'team.txt'), 'the team file, edited by the synced member\n', 60);
    writeLocal(path.join(dir, 'from the member.txt'), 'new from the synced member\n');
    run = await sync(remote, dir);
    ok(run);
    expect((await server('GET', ['groups', groups.rw, 'home', 'team.txt'], {}, groupOwner)).text, explainSync(run, recorder)).toBe('the team file, edited by the synced member\n');
    expect((await server('GET', ['groups', groups.rw, 'home', 'from the member.txt'], {}, groupOwner)).text).toBe('new from the synced member\n');
    await serverPut(['groups', groups.rw, 'home', 'from the owner.txt'], 'new from the group administrator\n', groupOwner);
    run = await sync(remote, dir);
    ok(run);
    expect(readFileSync(path.join(dir, 'from the owner.txt'), 'utf8'), explainSync(run, recorder)).toBe('new from the group administrator\n');
  });

  it('a read-only group drive: the group\'s file comes down, and a local edit there is restored, not uploaded', async () => {
    const dir = path.join(tmp.dir, 'group-ro');
    const remote = `/groups/${groups.ro}/home`;
    let run = await sync(remote, dir);
    ok(run);
    expect(readFileSync(path.join(dir, 'handbook.txt'), 'utf8'), explainSync(run, recorder)).toBe('read, do not edit\n');
    writeLocal(path.join(dir, 'handbook.txt'), 'an edit the member may not make\n', 60);
    run = await sync(remote, dir);
    expect(run.timedOut, explainSync(run, recorder)).toBe(false);
    expect(methods(run, 'PUT'), explainSync(run, recorder)).toEqual([]);
    expect(methods(run, 'MOVE').filter((e) => /\/uploads\//.test(e.path))).toEqual([]);
    expect((await server('GET', ['groups', groups.ro, 'home', 'handbook.txt'], {}, groupOwner)).text).toBe('read, do not edit\n');
    expect(readFileSync(path.join(dir, 'handbook.txt'), 'utf8'), explainSync(run, recorder)).toBe('read, do not edit\n');
    // The member's edit is not lost: it stays beside the restored file, on this side only.
    const copies = readdirSync(dir).filter((name) => /^handbook.*(\(conflicted copy|_conflict-)/.test(name));
    expect(copies.map((name) => readFileSync(path.join(dir, name), 'utf8')), explainSync(run, recorder)).toEqual(['an edit the member may not make\n']);
  });

  it('the view\'s root syncs home and the group drives, and never the trash', async () => {
    await serverPut(['home', 'trashed.txt'], 'in the trash by now\n');
    expect((await server('DELETE', ['home', 'trashed.txt'])).status).toBe(204);
    const dir = path.join(tmp.dir, 'view-root');
    const run = await sync('/', dir, { timeoutMs: BIG_SYNC_TIMEOUT_MS });
    ok(run);
    const top = readdirSync(dir).filter((name) => !name.startsWith('.')).sort();
    expect(top, explainSync(run, recorder)).toContain('home');
    expect(top).toContain('groups');
    expect(top.filter((name) => !['home', 'groups', 'incoming'].includes(name)), explainSync(run, recorder)).toEqual([]);
    const tree = await syncedTree(dir);
    expect([...tree.keys()].filter((relative) => relative.split('/').includes('trash') || relative.endsWith('trashed.txt'))).toEqual([]);
    expect(run.exchanges.filter((e) => /\/trash(?:bin)?(?:\/|$)/.test(decodedPath(e)))).toEqual([]);
    expect(readFileSync(path.join(dir, 'groups', groups.rw, 'home', 'team.txt'), 'utf8')).toBe('the team file, edited by the synced member\n');
    expect(readFileSync(path.join(dir, 'groups', groups.ro, 'home', 'handbook.txt'), 'utf8')).toBe('read, do not edit\n');
    await expectHomeInSync(run, { root: path.join(dir, 'home'), skip: ['deep/'] });
  }, BIG_SYNC_TIMEOUT_MS + 60_000);
}
