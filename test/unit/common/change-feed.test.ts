/** The change feed's payload words (migrations 014, 026 and 038): folders, tree folders, the flags, and whose write it was. */
import { describe, expect, it } from 'vitest';
import { parseChange } from '../../../src/common/change-feed.js';

describe('parseChange', () => {
  it('reads folders, `^` tree folders and the flags of one payload', () => {
    expect(parseChange('f1 home:u1 ^a ^home:u1 !props', false)).toEqual({
      folders: ['f1', 'home:u1'],
      trees: ['a', 'home:u1'],
      everything: false,
      properties: true,
      locks: false,
      sessions: false,
      local: false,
    });
  });

  it('has no trees when the store sent none (a store before migration 026)', () => {
    expect(parseChange('~ f1 *', true)).toEqual({ folders: ['f1'], everything: true, properties: false, locks: false, sessions: false, local: true });
  });

  it('reads `@` users whose notifications changed', () => {
    expect(parseChange('@u1 f1 @u2', false)).toEqual({ folders: ['f1'], notified: ['u1', 'u2'], everything: false, properties: false, locks: false, sessions: false, local: false });
  });

  it('calls folders `local` only when this instance’s bridge wrote them (`~`), never its REST API or another instance', () => {
    expect(parseChange('~ f1 home:u1', true).local).toBe(true);
    expect(parseChange('~ ^f1 ^home:u1', true).local).toBe(true);
    // This process's REST API (the web app): its bridge must list the folders again.
    expect(parseChange('f1 home:u1', true).local).toBe(false);
    expect(parseChange('^f1', true).local).toBe(false);
    // Another instance's bridge.
    expect(parseChange('~ f1', false)).toEqual({ folders: ['f1'], everything: false, properties: false, locks: false, sessions: false, local: false });
  });

  it('calls a message naming no folder `local` when this instance sent it, as before migration 038', () => {
    expect(parseChange('!props', true).local).toBe(true);
    expect(parseChange('!locks', true).local).toBe(true);
    expect(parseChange('!props', false).local).toBe(false);
  });
});
