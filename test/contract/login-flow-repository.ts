/**
 * One suite for every LoginFlowRepository (contracts/login-flows.ts): a flow found by its login
 * key while open and not granted, granted once, taken once by its poll key, cancelled, expired;
 * the bound per address and in all. Run over the store's SQLite database, the bridge's own state
 * file and PostgreSQL (test/integration/bridge-state/login-flows.test.ts, which also races two
 * instances for one flow and for an address's last place).
 */
import { describe, expect, it } from 'vitest';
import type { LoginFlow, LoginFlowRepository } from '../../src/contracts/login-flows.js';

export const T0 = 1_800_000_000_000;
export const TTL = 20 * 60 * 1000;
export const LIMITS = { maxPerAddress: 3, maxOpen: 5 };

export const flow = (n: number | string, address = '192.0.2.1', createdMs = T0): LoginFlow => ({
  pollKey: `poll-${n}`,
  loginKey: `login-${n}`,
  kind: 'v2',
  client: 'Nextcloud desktop (Linux)',
  address,
  server: 'https://drive.example',
  publicKey: `public-${n}`,
  sealedKey: `sealed-${n}`,
  createdMs,
  expiresMs: createdMs + TTL,
});

/** Opens a fresh, empty repository for one test, and how to let it go. */
export type LoginFlowRepositoryFactory = () => Promise<{ repository: LoginFlowRepository; close(): Promise<void> }>;

export function describeLoginFlowRepository(name: string, open: LoginFlowRepositoryFactory): void {
  describe(`LoginFlowRepository contract: ${name}`, () => {
    const using = async (test: (repository: LoginFlowRepository) => Promise<void>): Promise<void> => {
      const { repository, close } = await open();
      try {
        await test(repository);
      } finally {
        await close();
      }
    };

    it('finds an open flow by its login key until the grant, and the poll key takes the grant once', () =>
      using(async (repository) => {
        expect(await repository.open(flow(1), LIMITS, T0)).toBe(true);
        expect(await repository.find('login-1', T0)).toEqual(flow(1));
        expect(await repository.find('poll-1', T0)).toBeUndefined();
        expect(await repository.take('poll-1', T0)).toBeUndefined();
        expect(await repository.grant('login-1', 'ada', 'sealed-password', T0 + 1)).toBe(true);
        expect(await repository.grant('login-1', 'eve', 'other', T0 + 2)).toBe(false);
        expect(await repository.find('login-1', T0)).toBeUndefined();
        expect(await repository.take('login-1', T0)).toBeUndefined();
        expect(await repository.take('poll-1', T0 + 3)).toEqual({ flow: flow(1), loginName: 'ada', sealedPassword: 'sealed-password' });
        expect(await repository.take('poll-1', T0 + 4)).toBeUndefined();
      }));

    it('forgets a cancelled flow, granted or not', () =>
      using(async (repository) => {
        await repository.open(flow(1), LIMITS, T0);
        await repository.open(flow(2), LIMITS, T0);
        expect(await repository.cancel('login-1')).toBe(true);
        expect(await repository.cancel('login-1')).toBe(false);
        expect(await repository.grant('login-1', 'ada', 's', T0)).toBe(false);
        expect(await repository.grant('login-2', 'ada', 's', T0)).toBe(true);
        expect(await repository.cancel('login-2')).toBe(true);
        expect(await repository.take('poll-2', T0)).toBeUndefined();
      }));

    it('lets nothing of an expired flow be found, granted or taken', () =>
      using(async (repository) => {
        await repository.open(flow(1), LIMITS, T0);
        await repository.open(flow(2), LIMITS, T0);
        expect(await repository.grant('login-2', 'ada', 's', T0 + TTL - 1)).toBe(true);
        expect(await repository.find('login-1', T0 + TTL)).toBeUndefined();
        expect(await repository.grant('login-1', 'ada', 's', T0 + TTL)).toBe(false);
        expect(await repository.take('poll-2', T0 + TTL)).toBeUndefined();
      }));

    it('bounds open flows per address and in all; expired ones free their places', () =>
      using(async (repository) => {
        for (const n of [1, 2, 3]) expect(await repository.open(flow(n), LIMITS, T0)).toBe(true);
        expect(await repository.open(flow(4), LIMITS, T0)).toBe(false);
        expect(await repository.find('login-4', T0)).toBeUndefined();
        expect(await repository.open(flow(5, '192.0.2.2'), LIMITS, T0)).toBe(true);
        expect(await repository.open(flow(6, '192.0.2.3'), LIMITS, T0)).toBe(true);
        expect(await repository.open(flow(7, '192.0.2.4'), LIMITS, T0)).toBe(false);
        expect(await repository.open(flow(8, '192.0.2.1', T0 + TTL), LIMITS, T0 + TTL)).toBe(true);
        expect(await repository.find('login-1', T0)).toBeUndefined();
      }));
  });
}
