/**
 * Every upload door ends in the one write path (bridge/commit.ts), so a lock taken while an upload
 * is under way holds at its commit as it holds for a PUT (issue 29, defect 3: the tus commit
 * checked permission and quota but no lock, and replaced a file another user had locked). For
 * each door, in a group drive Alice and Carol both write to: Carol locks the target after the
 * upload started (after the tus POST, after the v2 MKCOL, between two v1 chunks); Alice's final
 * write (the PATCH that completes a tus upload, the MOVE of `.file`) is 423 and the file keeps
 * its content and revisions; once Carol unlocked and Alice locked it herself, the same final
 * write is 423 without her token and goes through with `If: (<token>)`. Runs on both
 * transports and on PostgreSQL (integration-pg-bridge).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeId } from '../../../src/store-client/index.js';
import { bridgeRequests, EXCLUSIVE_LOCKINFO } from '../../helpers/dav-requests.js';
import { groupAdmin } from '../../helpers/groups.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

const TEAM = 'Lock Crew';
const ALL = ['read', 'write', 'delete', 'download'];
const TUS = { 'tus-resumable': '1.0.0' };
const PATCH_TYPE = { 'content-type': 'application/offset+octet-stream' };
const OLD = 'the locked content';
const NEW = Buffer.from('the uploaded content '.repeat(200));

let f: BridgeFixture;
let team: string;
let alice: DavUser;
let carol: DavUser;
const { dav, davAs } = bridgeRequests(() => f, () => alice);

beforeAll(async () => {
  f = await bridgeFixture({ bridgeFlags: { uploadExpirySec: 3600 } });
  const ga = groupAdmin(f.client, f.admin);
  team = await ga.group(TEAM);
  [alice, carol] = await Promise.all([f.newDavUser(), f.newDavUser()]);
  await ga.member(team, alice.uuid, { node_permissions: ALL });
  await ga.member(team, carol.uuid, { node_permissions: ALL });
});
afterAll(async () => {
  await f?.close();
});

const groupPath = (name: string): string => `/groups/${encodeURIComponent(TEAM)}/home/${name}`;
const filesUrl = (name: string): string => `${f.davUrl}/remote.php/dav/files/${encodeURIComponent(alice.email)}${groupPath(name)}`;
const uploadsOf = (): string => `/remote.php/dav/uploads/${encodeURIComponent(alice.email)}`;
const v1Name = (start: number, length: number): string => `${String(start).padStart(15, '0')}-${String(start + length - 1).padStart(15, '0')}`;

async function lockAs(who: DavUser, name: string): Promise<string> {
  const answer = await davAs(who, 'LOCK', groupPath(name), { depth: '0', 'content-type': 'application/xml', timeout: 'Second-600' }, EXCLUSIVE_LOCKINFO);
  expect(answer.status).toBe(200);
  const token = /<(opaquelocktoken:[^>]+)>/.exec(String(answer.headers['lock-token']))?.[1];
  if (!token) throw new Error('LOCK gave no token');
  return token;
}

async function unlockAs(who: DavUser, name: string, token: string): Promise<void> {
  expect((await davAs(who, 'UNLOCK', groupPath(name), { 'lock-token': `<${token}>` })).status).toBe(204);
}

/** The file's bytes and revision count, as the store holds them. */
async function stored(name: string): Promise<{ text: string; revisions: number }> {
  const entry = (await f.client.listFolder(alice.session, `home:${team}` as NodeId)).find((e) => e.name === name);
  if (!entry) throw new Error(`${name} is not in the group drive`);
  const download = await f.client.download(alice.session, entry.id, entry.name);
  const chunks: Buffer[] = [];
  for await (const chunk of download.body) chunks.push(chunk as Buffer);
  return { text: Buffer.concat(chunks).toString('utf8'), revisions: (await f.client.listRevisions(alice.session, entry.id)).length };
}

/**
 * An upload by one door: `start` sends what comes before the lock, `middle` what comes after it
 * but before the final write, `finish` the final write (with extra headers: If), answering its status.
 */
interface Door {
  start(name: string, content: Buffer): Promise<void>;
  middle(name: string, content: Buffer): Promise<void>;
  finish(name: string, content: Buffer, headers?: Record<string, string>): Promise<number>;
}

/** tus: POST, then PATCHes; the last PATCH commits. A refused commit keeps the bytes: the next PATCH sends none at the end offset. */
function tusDoor(): Door {
  let location = '';
  let sent = 0;
  return {
    async start(name, content) {
      const created = await dav('POST', `${groupPath('')}`, { ...TUS, 'upload-length': String(content.length), 'upload-metadata': `filename ${Buffer.from(name).toString('base64')}` });
      expect(created.status).toBe(201);
      location = String(created.headers.location);
    },
    async middle(_name, content) {
      const half = content.subarray(0, content.length / 2);
      const answer = await dav('PATCH', location, { ...TUS, ...PATCH_TYPE, 'upload-offset': '0' }, half);
      expect(answer.status).toBe(204);
      sent = half.length;
    },
    async finish(_name, content, headers = {}) {
      const answer = await dav('PATCH', location, { ...TUS, ...PATCH_TYPE, 'upload-offset': String(sent), ...headers }, content.subarray(sent));
      if (answer.status !== 204) expect(answer.headers['tus-resumable']).toBe('1.0.0');
      // The last bytes are in whether or not the commit went through.
      sent = content.length;
      return answer.status;
    },
  };
}

/** Nextcloud v2: MKCOL with Destination, numbered chunks, MOVE of `.file`. */
function v2Door(id: string): Door {
  const headers = (name: string, content: Buffer): Record<string, string> => ({ destination: filesUrl(name), 'oc-total-length': String(content.length) });
  return {
    async start(name, content) {
      expect((await dav('MKCOL', `${uploadsOf()}/${id}`, headers(name, content))).status).toBe(201);
    },
    async middle(name, content) {
      const half = content.length / 2;
      expect((await dav('PUT', `${uploadsOf()}/${id}/1`, headers(name, content), content.subarray(0, half))).status).toBe(201);
      expect((await dav('PUT', `${uploadsOf()}/${id}/2`, headers(name, content), content.subarray(half))).status).toBe(201);
    },
    async finish(name, content, extra = {}) {
      return (await dav('MOVE', `${uploadsOf()}/${id}/.file`, { ...headers(name, content), ...extra })).status;
    },
  };
}

/** Nextcloud v1: MKCOL, the first chunk before the lock, the second after it, MOVE of `.file`. */
function v1Door(id: string): Door {
  return {
    async start(_name, content) {
      expect((await dav('MKCOL', `${uploadsOf()}/${id}`)).status).toBe(201);
      const half = content.length / 2;
      expect((await dav('PUT', `${uploadsOf()}/${id}/${v1Name(0, half)}`, {}, content.subarray(0, half))).status).toBe(201);
    },
    async middle(_name, content) {
      const half = content.length / 2;
      expect((await dav('PUT', `${uploadsOf()}/${id}/${v1Name(half, half)}`, {}, content.subarray(half))).status).toBe(201);
    },
    async finish(name, _content, extra = {}) {
      return (await dav('MOVE', `${uploadsOf()}/${id}/.file`, { destination: filesUrl(name), ...extra })).status;
    },
  };
}

describe('a lock taken while an upload is under way holds at its commit', () => {
  const doors: Array<[string, string, () => Door]> = [
    ['tus, locked after the POST', 'tus.txt', tusDoor],
    ['Nextcloud v2, locked after the MKCOL', 'v2.txt', () => v2Door('locked-v2')],
    ['Nextcloud v1, locked between two chunks', 'v1.txt', () => v1Door('locked-v1')],
  ];

  for (const [label, name, makeDoor] of doors) {
    it(`${label}: another user's lock refuses the final write (423), the file unchanged; the uploader's own lock lets it through with its token only`, async () => {
      expect((await dav('PUT', groupPath(name), {}, OLD)).status).toBe(201);
      const before = await stored(name);
      expect(before).toEqual({ text: OLD, revisions: 1 });
      const door = makeDoor();

      await door.start(name, NEW);
      const carols = await lockAs(carol, name);
      await door.middle(name, NEW);
      expect(await door.finish(name, NEW)).toBe(423);
      // Carol's token is hers: Alice naming it does not make the lock hers.
      expect(await door.finish(name, NEW, { if: `(<${carols}>)` })).toBe(423);
      expect(await stored(name)).toEqual(before);

      await unlockAs(carol, name, carols);
      const alices = await lockAs(alice, name);
      expect(await door.finish(name, NEW)).toBe(423);
      expect(await stored(name)).toEqual(before);
      expect(await door.finish(name, NEW, { if: `(<${alices}>)` })).toBe(204);
      expect(await stored(name)).toEqual({ text: NEW.toString('utf8'), revisions: 2 });
      await unlockAs(alice, name, alices);
    });
  }
});
