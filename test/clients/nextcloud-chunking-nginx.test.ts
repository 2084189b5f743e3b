/**
 * A big file through a proxy with a body limit (issue 23): nginx with `client_max_body_size 20m`
 * in front of the bridge refuses one PUT of the file (413, nothing stored), while the same file in
 * Nextcloud v2 chunks of 10 MiB, four at a time, lands whole. 1 GiB unless
 * DRIVEWAY_CHUNKED_TEST_MIB says otherwise; bytes are generated and hashed as they stream, never
 * held whole. nginx is Debian's, started and stopped by PID (test/helpers/nginx.ts).
 */
import { createHash } from 'node:crypto';
import { request } from 'undici';
import { nodeId } from '../../src/store-client/index.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { requireNginx, startNginx, type TestNginx } from '../helpers/nginx.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';
import { MiB, patternBytes, patternHash, patternStream } from '../helpers/stream-helpers.js';

const nginx = requireNginx();
const TOTAL_BYTES = Number(process.env.DRIVEWAY_CHUNKED_TEST_MIB ?? 1024) * MiB + 12_345;
const CHUNK_BYTES = 10 * MiB;
const PARALLEL = 4;

nginx.describe('Nextcloud chunking through nginx with client_max_body_size 20m', () => {
  let f: BridgeFixture;
  let proxy: TestNginx;
  let user: DavUser;

  beforeAll(async () => {
    f = await bridgeFixture();
    user = await f.newDavUser();
    proxy = await startNginx([f.davUrl], { bodyLimit: '20m' });
  }, 60_000);
  afterAll(async () => {
    await proxy?.stop();
    await f?.close();
  });

  async function call(method: string, path: string, headers: Record<string, string>, body?: Buffer | ReturnType<typeof patternStream>): Promise<number> {
    const answer = await request(`${proxy.url}${path}`, { method, headers: { authorization: user.auth, ...headers }, ...(body ? { body } : {}) });
    await answer.body.dump();
    return answer.statusCode;
  }

  it('refuses the single PUT at the proxy and lands the chunked upload whole, as one revision', async () => {
    const owner = encodeURIComponent(user.email);
    const single = await call('PUT', '/home/single.bin', { 'content-length': String(TOTAL_BYTES) }, patternStream(TOTAL_BYTES));
    expect(single).toBe(413);

    const v2 = { destination: `${proxy.url}/remote.php/dav/files/${owner}/home/chunked.bin`, 'oc-total-length': String(TOTAL_BYTES) };
    const dir = `/remote.php/dav/uploads/${owner}/big-upload`;
    expect(await call('MKCOL', `${dir}/`, v2)).toBe(201);
    const count = Math.ceil(TOTAL_BYTES / CHUNK_BYTES);
    let next = 1;
    const lanes = Array.from({ length: PARALLEL }, async () => {
      for (let n = next++; n <= count; n = next++) {
        const start = (n - 1) * CHUNK_BYTES;
        const chunk = patternBytes(start, Math.min(CHUNK_BYTES, TOTAL_BYTES - start));
        expect(await call('PUT', `${dir}/${n}`, { ...v2, 'content-length': String(chunk.length) }, chunk)).toBe(201);
      }
    });
    await Promise.all(lanes);
    expect(await call('MOVE', `${dir}/.file`, v2)).toBe(201);

    const entries = await f.client.listFolder(user.session, nodeId('home'));
    expect(entries.map((e) => e.name)).not.toContain('single.bin');
    const file = entries.find((e) => e.name === 'chunked.bin');
    expect(file?.sizeBytes).toBe(TOTAL_BYTES);
    expect(file?.revision).toBe(1);
    const hash = createHash('sha256');
    for await (const chunk of (await f.client.download(user.session, file!.id, file!.name)).body) hash.update(chunk as Buffer);
    expect(hash.digest('hex')).toBe(patternHash(TOTAL_BYTES));
  }, 300_000);
});
