/**
 * Nextcloud chunked upload (bridge/uploads/nextcloud.ts) with an npm client of it,
 * nextcloud-chunk-file-upload 1.1 (dist/upload.js), run as is in this process against the bridge:
 * it MKCOLs a random 64-hex folder under /remote.php/dav/uploads/<user>/ with no Destination
 * (v1), PUTs the file's chunks one after the other named `start-end` (first and last byte,
 * padded to the digit count of the file's size, not rclone's 15), sends no OC-Total-Length, and
 * MOVEs `.file` with only a Destination under /remote.php/dav/files/<user>/. A multi-chunk file
 * lands whole, as one revision, in the home and in a group drive; the same name again is a second
 * revision; a member without write is refused (at the MOVE: v1 names no target before it) and
 * the group drive keeps what it had.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import Upload from 'nextcloud-chunk-file-upload';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeId } from '../../src/store-client/index.js';
import { groupAdmin } from '../helpers/groups.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';
import { MiB, patternBytes, readAll } from '../helpers/stream-helpers.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';

const TEAM = 'NpmCrew';
/** 8 digits, so the chunk names are padded to 8; six chunks of the client's default 2 MiB. */
const SIZE = 12_345_678;
const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

describe('nextcloud-chunk-file-upload 1.1 (npm)', () => {
  let f: BridgeFixture;
  let tmp: ReturnType<typeof makeTmpDir>;
  let writer: DavUser;
  let reader: DavUser;
  let team: string;

  beforeAll(async () => {
    f = await bridgeFixture();
    tmp = makeTmpDir('driveway-nc-chunk-client-');
    const ga = groupAdmin(f.client, f.admin);
    team = await ga.group(TEAM);
    [writer, reader] = await Promise.all([f.newDavUser(), f.newDavUser()]);
    await ga.member(team, writer.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    await ga.member(team, reader.uuid, { node_permissions: ['read', 'download'] });
  });
  afterAll(async () => {
    await f?.close();
    tmp?.remove();
  });

  const client = (who: DavUser): Upload => new Upload(`${f.davUrl}/remote.php/dav`, who.email, who.email, who.password);

  function localFile(name: string, seed: number): { file: string; content: Buffer } {
    const content = patternBytes(seed, SIZE);
    const file = path.join(tmp.dir, name);
    writeFileSync(file, content);
    return { file, content };
  }

  /** The stored file `name` in `folder` (a top-level id) and how many revisions it has. */
  async function stored(folder: string, name: string): Promise<{ sha: string; revisions: number }> {
    const entry = (await f.client.listFolder(writer.session, folder as NodeId)).find((e) => e.name === name);
    if (!entry) throw new Error(`${name} is not in ${folder}`);
    const bytes = await readAll((await f.client.download(writer.session, entry.id, entry.name)).body);
    return { sha: sha256(bytes), revisions: (await f.client.listRevisions(writer.session, entry.id)).length };
  }

  it('uploads a multi-chunk file into the home: every byte, one revision; again, a second revision', async () => {
    const first = localFile('first.bin', 11);
    const done = await client(writer).uploadFile(first.file, 'home/npm-upload.bin');
    expect(done.complete).toBe(true);
    expect(done.chunkNo).toBe(Math.ceil(SIZE / (2 * MiB)));
    expect(await stored('home', 'npm-upload.bin')).toEqual({ sha: sha256(first.content), revisions: 1 });
    const second = localFile('second.bin', 12);
    expect((await client(writer).uploadFile(second.file, 'home/npm-upload.bin', MiB)).complete).toBe(true);
    expect(await stored('home', 'npm-upload.bin')).toEqual({ sha: sha256(second.content), revisions: 2 });
    expect(await f.bridge.services.uploads.list(writer.uuid)).toEqual([]);
  });

  it('uploads into a group drive as a member with write; a member without write is refused, the drive as it was', async () => {
    const { file, content } = localFile('group.bin', 13);
    expect((await client(writer).uploadFile(file, `groups/${TEAM}/home/npm-upload.bin`)).complete).toBe(true);
    const home = `home:${team}`;
    expect(await stored(home, 'npm-upload.bin')).toEqual({ sha: sha256(content), revisions: 1 });
    const refused = await client(reader).uploadFile(localFile('reader.bin', 14).file, `groups/${TEAM}/home/npm-upload.bin`).then(
      () => undefined,
      (event: { complete: boolean; httpErrorCode: number | null; message: string | null }) => event,
    );
    expect(refused).toMatchObject({ complete: false, httpErrorCode: 403, message: 'Failed to glue the chunks together' });
    expect(await stored(home, 'npm-upload.bin')).toEqual({ sha: sha256(content), revisions: 1 });
  });
});
