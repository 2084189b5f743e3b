/**
 * The pure parts of `driveway migrate`: the foreign-key order tables are filled in (parents
 * first, self-references aside, a cycle refused), and the database URL as it is printed.
 */
import { describe, expect, it } from 'vitest';
import { redactDatabaseUrl } from '../../../src/store/migrate-embedded.js';
import { foreignKeyOrder, type TargetTable } from '../../../src/store/storage/embedded-copy.js';

function tables(edges: Record<string, string[]>): Map<string, TargetTable> {
  return new Map(Object.entries(edges).map(([name, references]) => [name, { name, columns: [], references, hasUserTriggers: false }]));
}

describe('foreignKeyOrder', () => {
  it('puts every table after the tables it refers to', () => {
    const schema = tables({ revisions: ['nodes', 'blobs'], nodes: [], blobs: [], stars: ['users', 'nodes'], users: [], shares: ['nodes', 'users'], share_recipients: ['shares'] });
    const order = foreignKeyOrder([...schema.keys()], schema);
    expect(order).toHaveLength(7);
    for (const [name, table] of schema) for (const parent of table.references) expect(order.indexOf(parent), `${parent} before ${name}`).toBeLessThan(order.indexOf(name));
  });

  it('ignores references to tables that are not copied', () => {
    expect(foreignKeyOrder(['b'], tables({ a: [], b: ['a'] }))).toEqual(['b']);
  });

  it('refuses a cycle, naming a table in it', () => {
    expect(() => foreignKeyOrder(['a', 'b'], tables({ a: ['b'], b: ['a'] }))).toThrow(/foreign keys of a form a cycle/);
  });
});

describe('redactDatabaseUrl', () => {
  it('hides the password and keeps the rest', () => {
    expect(redactDatabaseUrl('postgres://driveway:s3cret@db.internal:5432/driveway')).toBe('postgres://driveway:***@db.internal:5432/driveway');
    expect(redactDatabaseUrl('postgres://db.internal/driveway')).toBe('postgres://db.internal/driveway');
    expect(redactDatabaseUrl('not a url')).toBe('(an unparsable URL)');
  });
});
