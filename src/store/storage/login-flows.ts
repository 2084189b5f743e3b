/**
 * The storage layer's LoginFlowRepository (contracts/login-flows.ts) over the `dav_login_flows`
 * table (migration 028), through one `Sql` handle, SQLite or PostgreSQL, in the store's database or
 * a bridge's own bridge.sqlite. Owns that table only.
 *
 * The bound per address: the count and the insert are one transaction; on PostgreSQL those naming
 * one address queue on it (serializeOn), so two instances opening an address's last flow at once
 * run one after the other and the second is refused.
 */
import type { GrantedLoginFlow, LoginFlow, LoginFlowKind, LoginFlowLimits, LoginFlowRepository } from '../../contracts/login-flows.js';
import type { Sql } from './sql.js';

interface Row {
  poll_key: string;
  login_key: string;
  kind: string;
  client: string;
  address: string;
  server: string;
  public_key: string;
  sealed_key: string;
  created_ms: number | string;
  expires_ms: number | string;
  login_name: string | null;
  sealed_password: string | null;
}

function toFlow(row: Row): LoginFlow {
  return {
    pollKey: row.poll_key,
    loginKey: row.login_key,
    kind: row.kind as LoginFlowKind,
    client: row.client,
    address: row.address,
    server: row.server,
    publicKey: row.public_key,
    sealedKey: row.sealed_key,
    createdMs: Number(row.created_ms),
    expiresMs: Number(row.expires_ms),
  };
}

export class SqlLoginFlowRepository implements LoginFlowRepository {
  constructor(private readonly sql: Sql) {}

  open(flow: LoginFlow, limits: LoginFlowLimits, nowMs: number): Promise<boolean> {
    return this.sql.transaction(
      async (tx) => {
        await tx.run('DELETE FROM dav_login_flows WHERE expires_ms <= ?', [nowMs]);
        const mine = await tx.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM dav_login_flows WHERE address = ?', [flow.address]);
        if (Number(mine?.n ?? 0) >= limits.maxPerAddress) return false;
        const all = await tx.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM dav_login_flows');
        if (Number(all?.n ?? 0) >= limits.maxOpen) return false;
        await tx.run(
          `INSERT INTO dav_login_flows (poll_key, login_key, kind, client, address, server, public_key, sealed_key, created_ms, expires_ms)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          [flow.pollKey, flow.loginKey, flow.kind, flow.client, flow.address, flow.server, flow.publicKey, flow.sealedKey, flow.createdMs, flow.expiresMs],
        );
        return true;
      },
      { serializeOn: [`login-flows:${flow.address}`] },
    );
  }

  async find(loginKey: string, nowMs: number): Promise<LoginFlow | undefined> {
    const row = await this.sql.get<Row>('SELECT * FROM dav_login_flows WHERE login_key = ? AND expires_ms > ? AND sealed_password IS NULL', [loginKey, nowMs]);
    return row ? toFlow(row) : undefined;
  }

  async grant(loginKey: string, loginName: string, sealedPassword: string, nowMs: number): Promise<boolean> {
    const { changes } = await this.sql.run(
      'UPDATE dav_login_flows SET login_name = ?, sealed_password = ? WHERE login_key = ? AND expires_ms > ? AND sealed_password IS NULL',
      [loginName, sealedPassword, loginKey, nowMs],
    );
    return changes === 1;
  }

  async cancel(loginKey: string): Promise<boolean> {
    const { changes } = await this.sql.run('DELETE FROM dav_login_flows WHERE login_key = ?', [loginKey]);
    return changes === 1;
  }

  async take(pollKey: string, nowMs: number): Promise<GrantedLoginFlow | undefined> {
    const row = await this.sql.get<Row>('SELECT * FROM dav_login_flows WHERE poll_key = ? AND sealed_password IS NOT NULL', [pollKey]);
    if (!row || row.login_name === null || row.sealed_password === null) return undefined;
    // Of racing takers, the one whose DELETE removed the row has it; an expired one is dropped unread.
    const { changes } = await this.sql.run('DELETE FROM dav_login_flows WHERE poll_key = ? AND sealed_password IS NOT NULL', [pollKey]);
    if (changes !== 1 || Number(row.expires_ms) <= nowMs) return undefined;
    return { flow: toFlow(row), loginName: row.login_name, sealedPassword: row.sealed_password };
  }
}
