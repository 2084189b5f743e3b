/**
 * A list of keys as one SQL parameter, in each dialect's way: SQLite reads a JSON array through
 * json_each, PostgreSQL takes a text[] (node-postgres sends a JavaScript array as one). One
 * statement text per use however long the list, so statements stay cached.
 */
import type { Sql } from './sql.js';

/** `column <in> (the keys)`: append the clause after a column name, and pass `param` in its place. */
export function inKeys(sql: Pick<Sql, 'dialect'>, keys: readonly string[]): { clause: string; param: unknown } {
  return sql.dialect === 'postgres'
    ? { clause: '= ANY(?::text[])', param: [...keys] }
    : { clause: 'IN (SELECT value FROM json_each(?))', param: JSON.stringify(keys) };
}

/** A row source yielding one column `k` per key: `SELECT k, ... FROM <source>`. */
export function keyRows(sql: Pick<Sql, 'dialect'>, keys: readonly string[]): { source: string; param: unknown } {
  return sql.dialect === 'postgres'
    ? { source: 'unnest(?::text[]) AS keys(k)', param: [...keys] }
    : { source: '(SELECT value AS k FROM json_each(?))', param: JSON.stringify(keys) };
}
