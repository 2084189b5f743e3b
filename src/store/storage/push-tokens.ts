/**
 * The storage layer's PushTokenRepository (contracts/push-tokens.ts) over the `dav_push_tokens`
 * table (migration 036), through one `Sql` handle, SQLite or PostgreSQL, in the store's database or
 * a bridge's own bridge.sqlite. Owns that table only.
 */
import type { PushToken, PushTokenRepository } from '../../contracts/push-tokens.js';
import type { Sql } from './sql.js';

interface Row {
  token_key: string;
  sealed: string;
  expires_ms: number | string;
}

export class SqlPushTokenRepository implements PushTokenRepository {
  constructor(private readonly sql: Sql) {}

  async put(token: PushToken, nowMs: number): Promise<void> {
    await this.sql.run('DELETE FROM dav_push_tokens WHERE expires_ms <= ?', [nowMs]);
    await this.sql.run('INSERT INTO dav_push_tokens (token_key, sealed, expires_ms) VALUES (?, ?, ?)', [token.key, token.sealed, token.expiresMs]);
  }

  async take(key: string, nowMs: number): Promise<PushToken | undefined> {
    const row = await this.sql.get<Row>('SELECT * FROM dav_push_tokens WHERE token_key = ?', [key]);
    if (!row) return undefined;
    // Of racing takers, the one whose DELETE removed the row has it; an expired one is dropped unread.
    const { changes } = await this.sql.run('DELETE FROM dav_push_tokens WHERE token_key = ?', [key]);
    if (changes !== 1 || Number(row.expires_ms) <= nowMs) return undefined;
    return { key: row.token_key, sealed: row.sealed, expiresMs: Number(row.expires_ms) };
  }
}
