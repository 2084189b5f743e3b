/**
 * A real store plus a store client, an admin session and a way to make users: what most store
 * and bridge integration suites start from.
 */
import { randomUUID } from 'node:crypto';
import { Agent } from 'undici';
import { createStoreClient, type HttpStoreClient, type StoreSession } from '../../src/store-client/index.js';
import { startTestStore, type TestStore, type TestStoreOptions } from './start-store.js';

export interface TestUser {
  uuid: string;
  email: string;
  password: string;
  session: StoreSession;
}

export interface StoreFixture {
  store: TestStore;
  client: HttpStoreClient;
  admin: StoreSession;
  /** Creates a user through POST /api/admin/users and logs in as them. */
  newUser(options?: { quotaBytes?: number; fullname?: string }): Promise<TestUser>;
  close(): Promise<void>;
}

export const USER_PASSWORD = 'User-Passw0rd';

export interface StoreFixtureOptions extends TestStoreOptions {
  /** The certificate the fixture's client trusts: a store served over HTTPS (tls-cert.ts). */
  ca?: Buffer;
}

export async function storeFixture(options: StoreFixtureOptions = {}): Promise<StoreFixture> {
  const store = await startTestStore(options);
  const dispatcher = options.ca ? new Agent({ connect: { ca: options.ca } }) : undefined;
  const client = createStoreClient(store.url, { retries: 0, ...(dispatcher ? { dispatcher } : {}) });
  const admin = await client.login('admin', store.adminPassword);
  return {
    store,
    client,
    admin,
    async newUser({ quotaBytes = 0, fullname = 'Test User' } = {}) {
      const email = `user-${randomUUID().slice(0, 8)}@example.test`;
      const uuid = await client.createUser(admin, { fullname, email, password: USER_PASSWORD, diskQuotaBytes: quotaBytes });
      if (!uuid) throw new Error('the store did not return the new user uuid');
      const session = await client.login(email, USER_PASSWORD);
      return { uuid, email, password: USER_PASSWORD, session };
    },
    async close() {
      await client.close();
      await store.close();
    },
  };
}
