/**
 * The few pieces of SQL the dialects spell differently (storage/sql.ts names the shared subset):
 * each repository asks for its piece here instead of writing SQLite's spelling.
 */
import type { Sql } from './sql.js';

/**
 * The collation clause of a case-insensitive name (users.username, groups.name, group_tags.name):
 * SQLite compares them `COLLATE NOCASE`; in PostgreSQL the columns are citext, which needs none.
 */
export function nocase(sql: Sql): string {
  return sql.dialect === 'sqlite' ? ' COLLATE NOCASE' : '';
}

/**
 * `column` as a key that ignores ASCII case, for a plain text column (users.fullname, users.email):
 * SQLite's NOCASE collation, PostgreSQL's LOWER (SQLite's NOCASE folds ASCII only, and LOWER of
 * the text in both cases orders the same names together).
 */
export function folded(sql: Sql, column: string): string {
  return sql.dialect === 'sqlite' ? `${column} COLLATE NOCASE` : `LOWER(${column})`;
}

/** A subquery of the strings in a JSON array given as one `?` parameter (one statement for any count). */
export function jsonValues(sql: Sql): string {
  return sql.dialect === 'sqlite' ? 'SELECT value FROM json_each(?)' : 'SELECT json_array_elements_text(CAST(? AS json))';
}

/**
 * `column` ordered by its bytes (names in a listing: SQLite's BINARY collation compares UTF-8
 * bytes; PostgreSQL's "C" collation does the same, whatever the database's locale).
 */
export function binaryOrder(sql: Sql, column: string): string {
  return sql.dialect === 'sqlite' ? column : `${column} COLLATE "C"`;
}
