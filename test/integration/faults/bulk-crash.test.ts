/**
 * kill -9 of driveway (embedded: SQLite + local blobs) while it takes bulk uploads, whose parts
 * are committed as one group (src/store/durability.ts group; docs/store-semantics.md "Group
 * commit"): after the restart every file is at its old or its new content, never a mix or a row
 * without its bytes; a new file is whole or absent; `driveway check` finds disk_used exact and
 * every blob whole. Parts of both kinds: small (kept in their row) and 100 KiB (a blob file).
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_BASIC, runDriveway, spawnDriveway, type DrivewayProcess } from '../../helpers/driveway-process.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const BOUNDARY = 'crash-boundary';
const FILES = 30;
const ROUNDS = 2;
const md5 = (data: Buffer): string => createHash('md5').update(data).digest('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The content of file `i` in `generation` (0: before the bulk uploads): every other file a blob file. */
function contentOf(i: number, generation: number): Buffer {
  const size = i % 2 === 0 ? 3000 + i : 100 * 1024 + i;
  return Buffer.alloc(size, `g${generation} f${i} `);
}

function bulkBody(parts: Array<{ path: string; content: Buffer }>): Buffer {
  const chunks: Buffer[] = [];
  for (const { path, content } of parts) {
    chunks.push(Buffer.from(`--${BOUNDARY}\r\nX-File-Path: ${path}\r\nX-File-MD5: ${md5(content)}\r\nX-File-Mtime: 1700000000\r\nContent-Length: ${content.length}\r\n\r\n`), content, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

async function get(instance: DrivewayProcess, path: string): Promise<Buffer | undefined> {
  const response = await fetch(`${instance.davUrl}${path}`, { headers: { authorization: ADMIN_BASIC } });
  const body = Buffer.from(await response.arrayBuffer());
  return response.status === 200 ? body : undefined;
}

describe('bulk uploads across a kill -9 of driveway', () => {
  let tmp: ReturnType<typeof makeTmpDir>;
  let instance: DrivewayProcess | undefined;
  const env = { DRIVEWAY_LOG_LEVEL: 'warn' };

  beforeAll(() => {
    tmp = makeTmpDir('driveway-bulk-crash-');
  });
  afterAll(() => {
    instance?.kill();
    tmp.remove();
  });

  it('leaves every file at its old or new content and disk_used exact', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      instance = await spawnDriveway({ dataDir: tmp.dir, env, startupMs: 60_000 });
      const dav = instance.davUrl;
      if (round === 0) {
        expect((await fetch(`${dav}/home/crash/`, { method: 'MKCOL', headers: { authorization: ADMIN_BASIC } })).status).toBe(201);
        for (let i = 0; i < FILES; i += 1) {
          const put = await fetch(`${dav}/home/crash/f${i}.bin`, { method: 'PUT', headers: { authorization: ADMIN_BASIC }, body: contentOf(i, 0) });
          expect(put.status).toBe(201);
        }
      }
      // Bulk uploads one after the other (each a new generation of every file, and one new file),
      // killed at a moment the test does not choose.
      let generation = round * 100;
      const sent: number[] = [];
      let stop = false;
      const sender = (async () => {
        while (!stop) {
          generation += 1;
          const parts = Array.from({ length: FILES }, (_, i) => ({ path: `/home/crash/f${i}.bin`, content: contentOf(i, generation) }));
          parts.push({ path: `/home/crash/new-${generation}.bin`, content: contentOf(generation, generation) });
          sent.push(generation);
          try {
            const answer = await fetch(`${dav}/remote.php/dav/bulk`, { method: 'POST', headers: { authorization: ADMIN_BASIC, 'content-type': `multipart/related; boundary=${BOUNDARY}` }, body: bulkBody(parts) });
            await answer.arrayBuffer();
          } catch {
            return;
          }
        }
      })();
      await sleep(300 + Math.floor(Math.random() * 700));
      instance.child.kill('SIGKILL');
      stop = true;
      expect(await instance.exited).toBeNull();
      await sender;
      // The kill came while a bulk request was under way (the sender sends one after the other).
      expect(sent.length).toBeGreaterThan(0);

      instance = await spawnDriveway({ dataDir: tmp.dir, env, startupMs: 60_000 });
      const possible = [0, ...Array.from({ length: round * 100 }, (_, g) => g + 1), ...sent];
      for (let i = 0; i < FILES; i += 1) {
        const body = await get(instance, `/home/crash/f${i}.bin`);
        expect(body, `f${i}.bin after round ${round}`).toBeDefined();
        const matches = possible.filter((g) => contentOf(i, g).equals(body as Buffer));
        expect(matches.length, `f${i}.bin is one whole generation`).toBe(1);
      }
      for (const g of sent) {
        const body = await get(instance, `/home/crash/new-${g}.bin`);
        if (body !== undefined) expect(body.equals(contentOf(g, g)), `new-${g}.bin whole`).toBe(true);
      }
      instance.kill();
      await instance.exited;
      instance = undefined;
      const check = await runDriveway(['check'], { env: { DRIVEWAY_DATA_DIR: tmp.dir } });
      expect(check.stdout, check.stderr).toMatch(/\nclean\n$/);
      expect(check.code, check.stdout).toBe(0);
    }
  }, 180_000);
});
