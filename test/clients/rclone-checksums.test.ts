/**
 * rclone 1.60 with `vendor = owncloud` against bridge + store (issue 22, item 1): rclone then
 * reads oc:checksums from PROPFIND and sends OC-Checksum with its uploads; and the same with
 * `vendor = nextcloud`, which in 1.60 reads only the SHA1 of oc:checksums. `rclone hashsum MD5`
 * (owncloud) and `SHA1` equal md5sum and sha1sum of the local files; `rclone check` without --download
 * compares hashes (none "could not be checked") and finds 0 differences, then exactly the one
 * file edited in place at the same size, which a size-only comparison cannot see; `rclone sync
 * --checksum` uploads exactly that file (a new revision of its node) and nothing else, not even
 * a file whose time changed but whose bytes did not.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { sha256Tree, writeAwkwardTree } from './local-tree.js';
import { rcloneRemote, type RcloneRemote } from './rclone-remote.js';
import { describeRun, type ProgramRun } from './run-program.js';
import { storeTreeRevisions, storeTreeSha256 } from './store-state.js';

const rclone = requireBinary('rclone');
const MiB = 1024 * 1024;

/** The hashes rclone 1.60 reads from oc:checksums for each vendor (backend/webdav). */
const VENDORS = [
  { vendor: 'owncloud', hashes: ['MD5', 'SHA1'] },
  { vendor: 'nextcloud', hashes: ['SHA1'] },
] as const;

for (const { vendor, hashes } of VENDORS) {
  rclone.describe(`rclone 1.60 (webdav, vendor ${vendor}): server checksums`, () => {
    let f: BridgeFixture;
    let tmp: ReturnType<typeof makeTmpDir>;
    let src: string;
    let remote: RcloneRemote;
    let user: DavUser;
    const files: string[] = [];

    beforeAll(async () => {
      requireBinary('md5sum');
      requireBinary('sha1sum');
      f = await bridgeFixture();
      user = await f.newDavUser();
      tmp = makeTmpDir('driveway-rclone-sums-');
      src = path.join(tmp.dir, 'src');
      mkdirSync(src);
      files.push(...writeAwkwardTree(src, 3, 6));
      writeFileSync(path.join(src, 'big.bin'), randomBytes(6 * MiB));
      files.push('big.bin');
      remote = await rcloneRemote({ rclonePath: rclone.path, name: 'OC', url: `${f.davUrl}/home/`, username: user.email, password: user.password, tmpDir: tmp.dir, vendor });
    }, 120_000);

    afterAll(async () => {
      await f?.close();
      tmp?.remove();
    });

    /** `program` (md5sum, sha1sum) of every local file: relative path -> hex. */
    function localSums(program: string): Map<string, string> {
      const out = execFileSync(program, files, { cwd: src, encoding: 'utf8' }).split('\n').filter((l) => l !== '');
      expect(out).toHaveLength(files.length);
      // One line per argument, in order; a name with a backslash or newline gets a leading `\`.
      return new Map(files.map((file, i) => [file.normalize('NFC'), (/[0-9a-f]{32,40}/.exec(out[i] as string) as RegExpExecArray)[0]]));
    }

    /** `rclone hashsum <kind>` of the remote folder: relative path -> hex. */
    async function remoteSums(kind: 'MD5' | 'SHA1'): Promise<Map<string, string>> {
      const run = await remote.run(['hashsum', kind, 'oc:sums']);
      expect(run.code, describeRun(run)).toBe(0);
      const sums = new Map<string, string>();
      for (const line of run.stdout.split('\n').filter((l) => l !== '')) {
        const match = /^([0-9a-f]+) {2}(.*)$/.exec(line);
        if (!match) throw new Error(`unexpected hashsum line: ${line}`);
        sums.set((match[2] as string).normalize('NFC'), match[1] as string);
      }
      return sums;
    }

    it(`copies a tree; rclone hashsum ${hashes.join(' and ')} equal${hashes.length === 1 ? 's' : ''} ${hashes.map((h) => `${h.toLowerCase()}sum`).join(' and ')} of the local files`, async () => {
      const copy = await remote.run(['copy', src, 'oc:sums']);
      expect(copy.code, describeRun(copy)).toBe(0);
      for (const kind of hashes) expect(await remoteSums(kind)).toEqual(localSums(kind === 'MD5' ? 'md5sum' : 'sha1sum'));
    });

    it('rclone check without --download compares hashes: 0 differences, then exactly the file edited in place at the same size', async () => {
      const clean = await remote.run(['check', src, 'oc:sums']);
      expect(clean.code, describeRun(clean)).toBe(0);
      expect(clean.stderr).toMatch(/0 differences found/);
      expect(clean.stderr).not.toMatch(/hashes could not be checked/);

      const edited = files.find((name) => name !== 'big.bin' && readFileSync(path.join(src, name)).length > 10) as string;
      const bytes = readFileSync(path.join(src, edited));
      bytes[5] = (bytes[5] as number) ^ 0xff;
      writeFileSync(path.join(src, edited), bytes);
      const differ = path.join(tmp.dir, 'differ.txt');
      const found = await remote.run(['check', src, 'oc:sums', '--differ', differ]);
      expect(found.code).not.toBe(0);
      expect(found.stderr, describeRun(found)).toMatch(/1 differences found/);
      expect(readFileSync(differ, 'utf8').split('\n').filter((l) => l !== '').map((l) => l.normalize('NFC'))).toEqual([edited.normalize('NFC')]);
    });

    /** The files rclone logs at -v as uploaded, NFC. */
    function copied(run: ProgramRun): string[] {
      return run.stderr
        .split('\n')
        .map((line) => /INFO\s+: (.*): Copied \(/.exec(line)?.[1])
        .filter((name): name is string => name !== undefined)
        .map((name) => name.normalize('NFC'));
    }

    it('rclone sync --checksum uploads exactly the file edited in place at the same size and time, and nothing else', async () => {
      const first = await remote.run(['sync', src, 'oc:synced']);
      expect(first.code, describeRun(first)).toBe(0);
      const before = await storeTreeRevisions(f, user, ['synced']);
      expect([...before.keys()].sort()).toEqual(files.map((name) => name.normalize('NFC')).sort());

      // Edited in place, same size, its time put back: only its hashes tell it changed.
      const sized = files.filter((name) => name !== 'big.bin' && readFileSync(path.join(src, name)).length > 10);
      const edited = sized[1] as string;
      const touched = sized[2] as string;
      const editedPath = path.join(src, edited);
      const { atime, mtime } = statSync(editedPath);
      const bytes = readFileSync(editedPath);
      bytes[3] = (bytes[3] as number) ^ 0x5a;
      writeFileSync(editedPath, bytes);
      utimesSync(editedPath, atime, mtime);
      // Touched: a new time, the same bytes; equal hashes, so --checksum leaves it.
      const later = new Date(Date.UTC(2024, 2, 4, 5, 6, 7));
      utimesSync(path.join(src, touched), later, later);

      const sync = await remote.run(['sync', src, 'oc:synced', '--checksum', '-v', '--stats', '0']);
      expect(sync.code, describeRun(sync)).toBe(0);
      expect(copied(sync), describeRun(sync)).toEqual([edited.normalize('NFC')]);

      // The store agrees: one new revision of the edited file's node, every other file as it was.
      const after = await storeTreeRevisions(f, user, ['synced']);
      const [id, revision] = (before.get(edited.normalize('NFC')) as string).split(' ');
      expect(after.get(edited.normalize('NFC'))).toBe(`${id} ${Number(revision) + 1}`);
      for (const [name, state] of before) if (name !== edited.normalize('NFC')) expect(after.get(name), name).toBe(state);
      expect(Object.fromEntries(await storeTreeSha256(f, user, ['synced']))).toEqual(Object.fromEntries(await sha256Tree(src)));
    });
  });
}
