/**
 * Eight clients creating in one folder at once (rclone --transfers 8, the PROPFIND suite's
 * seeding): every create succeeds and the folder lists them all. On PostgreSQL each one touches
 * the folder's row under SERIALIZABLE, so they conflict; with plain retries about 5% of them
 * failed (500). Runs on both configurations (integration and integration-pg).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { nodeId } from '../../../src/store-client/index.js';
import { createFolder, names, uploadFile } from '../../helpers/seed.js';
import { storeFixture, type StoreFixture, type TestUser } from '../../helpers/store-fixture.js';

let f: StoreFixture;
let user: TestUser;
beforeAll(async () => {
  f = await storeFixture();
  user = await f.newUser();
});
afterAll(() => f.close());

it('lets 8 writers create 240 entries in one folder at once, every one of them', async () => {
  const folder = await createFolder(f.client, user.session, 'home', 'busy');
  const expected: string[] = [];
  let next = 0;
  const failures: string[] = [];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < 240) {
        const i = next++;
        const name = i % 20 === 0 ? `file ${i}.txt` : `folder ${i}`;
        expected.push(name);
        try {
          if (i % 20 === 0) await uploadFile(f.client, user.session, folder, name, `content ${i}`);
          else await f.client.createFolder(user.session, nodeId(folder), name);
        } catch (err) {
          failures.push(`${name}: ${String(err)}`);
        }
      }
    }),
  );
  expect(failures).toEqual([]);
  expect((await names(f.client, user.session, folder)).sort()).toEqual(expected.sort());
}, 60_000);
