/** The change feed's payload words (migrations 014 and 026): folders, tree folders and the flags. */
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
    expect(parseChange('f1 *', true)).toEqual({ folders: ['f1'], everything: true, properties: false, locks: false, sessions: false, local: true });
  });

  it('reads `@` users whose notifications changed', () => {
    expect(parseChange('@u1 f1 @u2', false)).toEqual({ folders: ['f1'], notified: ['u1', 'u2'], everything: false, properties: false, locks: false, sessions: false, local: false });
  });
});
