import { describe, expect, it } from 'vitest';
import {
  IfHeaderError,
  NO_LOCK,
  entityTagsMatch,
  evaluateIf,
  parseIfHeader,
  parseLockTokenHeader,
  presentedLockTokens,
  type IfResourceState,
} from '../../../src/bridge/if-header.js';
import { LockStore } from '../../../src/bridge/locks.js';

const TOKEN = 'opaquelocktoken:0f6c52d8-1c7b-4f67-9a3e-6d5bd0d1a001';
const OTHER = 'opaquelocktoken:0f6c52d8-1c7b-4f67-9a3e-6d5bd0d1a002';
const ETAG = '"3f2a-7"';

function parseError(value: string): IfHeaderError | undefined {
  try {
    parseIfHeader(value);
    return undefined;
  } catch (err) {
    if (err instanceof IfHeaderError) return err;
    throw err;
  }
}

/** One resource at /res with a lock and an etag; everything else unmapped. */
function lockedResource(state: Partial<IfResourceState> = {}) {
  const calls: string[] = [];
  const resolve = (href: string): IfResourceState | undefined => {
    calls.push(href);
    if (href === '/res' || href === 'http://localhost/res') return { etag: ETAG, lockTokens: [TOKEN], ...state };
    return undefined;
  };
  return { resolve, calls };
}

async function evaluate(header: string, state?: Partial<IfResourceState>): Promise<boolean> {
  return evaluateIf(parseIfHeader(header), '/res', lockedResource(state).resolve);
}

describe('parseIfHeader', () => {
  it("parses Finder's untagged single token (which kills stock webdav-server)", () => {
    const h = parseIfHeader(`(<${TOKEN}>)`);
    expect(h).toEqual({
      tagged: false,
      lists: [{ resourceTag: undefined, conditions: [{ kind: 'token', not: false, token: TOKEN }] }],
      lockTokens: [TOKEN],
    });
  });

  it('parses tagged lists with absolute URLs and paths', () => {
    const h = parseIfHeader(`<http://localhost:8080/a%20b> (<${TOKEN}>) </c> (<${OTHER}>) (Not [${ETAG}])`);
    expect(h.tagged).toBe(true);
    expect(h.lists.map((l) => l.resourceTag)).toEqual(['http://localhost:8080/a%20b', '/c', '/c']);
    expect(h.lists[2]?.conditions).toEqual([{ kind: 'etag', not: true, etag: ETAG }]);
    expect(h.lockTokens).toEqual([TOKEN, OTHER]);
  });

  it('parses Not, entity tags (strong, weak, unquoted) and DAV:no-lock', () => {
    const h = parseIfHeader(`(Not <DAV:no-lock> [W/"x"] ["a]b"] [bare] Not[${ETAG}] not<urn:uuid:1234>)`);
    expect(h.lists[0]?.conditions).toEqual([
      { kind: 'token', not: true, token: NO_LOCK },
      { kind: 'etag', not: false, etag: 'W/"x"' },
      { kind: 'etag', not: false, etag: '"a]b"' },
      { kind: 'etag', not: false, etag: '"bare"' },
      { kind: 'etag', not: true, etag: ETAG },
      { kind: 'token', not: true, token: 'urn:uuid:1234' },
    ]);
    expect(h.lockTokens).toEqual(['urn:uuid:1234']);
  });

  it('does not count DAV:no-lock as a submitted token, in any case', () => {
    expect(parseIfHeader('(<dav:NO-LOCK>)').lockTokens).toEqual([]);
  });

  it('tolerates extra whitespace, line breaks and the commas Node adds between repeated headers', () => {
    const h = parseIfHeader(`  ( <${TOKEN}> ) ,\t(Not  <DAV:no-lock>)  `);
    expect(h.lists).toHaveLength(2);
  });

  it('types every malformed header', () => {
    const bad = [
      '',
      '   ',
      '()',
      '(',
      `(<${TOKEN}>`,
      '(<>)',
      '<http://x/a>',
      '<http://x/a> <http://x/b> (<t>)',
      `(<${TOKEN}>) <http://x/a> (<t>)`,
      '(Not)',
      '(Not Not <t>)',
      '(Nothing)',
      '([])',
      '(["unclosed])',
      '([W/])',
      '(["x" y])',
      '(token)',
      'garbage',
      '(<a<b>)',
      '<a',
    ];
    for (const value of bad) expect(parseError(value), value).toBeInstanceOf(IfHeaderError);
  });

  it('reports where parsing failed', () => {
    expect(parseError('(<t>) x')?.offset).toBe(6);
  });

  it('never throws anything but IfHeaderError on random input', () => {
    const alphabet = '()<>[]"NnotW/ ,:xDAV-\t';
    let seed = 12345;
    const next = (): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed;
    };
    for (let i = 0; i < 3000; i++) {
      let value = '';
      const len = next() % 40;
      for (let j = 0; j < len; j++) value += alphabet[next() % alphabet.length];
      try {
        parseIfHeader(value);
      } catch (err) {
        expect(err, value).toBeInstanceOf(IfHeaderError);
      }
    }
  });

  it('parses a davfs2-style header of 300 KiB with thousands of tagged lists in one pass', () => {
    const parts: string[] = [];
    let i = 0;
    let length = 0;
    while (length < 300 * 1024) {
      const part = `<http://127.0.0.1:8080/home/dir/file-${i}.bin> (<opaquelocktoken:00000000-0000-4000-8000-${String(i).padStart(12, '0')}>)`;
      parts.push(part);
      length += part.length + 1;
      i++;
    }
    const h = parseIfHeader(parts.join(' '));
    expect(h.lists).toHaveLength(i);
    expect(h.lockTokens).toHaveLength(i);
    expect(h.lists[i - 1]?.resourceTag).toBe(`http://127.0.0.1:8080/home/dir/file-${i - 1}.bin`);
  });

  it('parses one list with thousands of conditions and an unclosed header at the end', () => {
    const conditions = Array.from({ length: 5000 }, (_, k) => `Not <urn:uuid:${k}>`).join(' ');
    expect(parseIfHeader(`(${conditions})`).lists[0]?.conditions).toHaveLength(5000);
    expect(parseError(`(${conditions}`)).toBeInstanceOf(IfHeaderError);
    expect(parseError('('.repeat(200_000))).toBeInstanceOf(IfHeaderError);
    expect(parseError('<'.repeat(200_000))).toBeInstanceOf(IfHeaderError);
  });

  it('refuses headers over the length cap', () => {
    expect(parseError(`(<${'a'.repeat(1024 * 1024 + 1)}>)`)?.reason).toBe('header too long');
  });
});

describe('evaluateIf: litmus conditional PUTs on a locked resource', () => {
  it('cond_put: (<token> [etag]) is true', async () => {
    expect(await evaluate(`(<${TOKEN}> [${ETAG}])`)).toBe(true);
  });

  it('fail_cond_put: (<DAV:no-lock> [etag]) is false (412)', async () => {
    expect(await evaluate(`(<DAV:no-lock> [${ETAG}])`)).toBe(false);
  });

  it('cond_put_with_not: (<token>) (Not <DAV:no-lock>) is true', async () => {
    expect(await evaluate(`(<${TOKEN}>) (Not <DAV:no-lock>)`)).toBe(true);
  });

  it('complex_cond_put: (<token> [etag]) (Not <DAV:no-lock> [etag]) is true', async () => {
    expect(await evaluate(`(<${TOKEN}> [${ETAG}]) (Not <DAV:no-lock> [${ETAG}])`)).toBe(true);
  });

  it('fail_complex_cond_put: the same with a corrupted etag is false (412)', async () => {
    expect(await evaluate(`(<${TOKEN}> ["3f2b-7"]) (Not <DAV:no-lock> ["3f2b-7"])`)).toBe(false);
  });

  it('tagged cond_put as neon sends it with a lock store: <url> (<token>)', async () => {
    expect(await evaluate(`<http://localhost/res> (<${TOKEN}>)`)).toBe(true);
  });
});

describe('evaluateIf with the lock store: tokens decide ownership', () => {
  const chain = ['home', 'res'];

  async function storeWithLock() {
    const locks = new LockStore();
    const lock = await locks.lock({ chain, rootHref: '/res', scope: 'exclusive', depth: '0', ownerXml: undefined, principal: 'u1', timeoutSec: 600 });
    const resolve = async (href: string): Promise<IfResourceState | undefined> =>
      href === '/res' ? { etag: ETAG, lockTokens: (await locks.locksCovering(chain)).map((l) => l.token) } : undefined;
    return { locks, lock, resolve };
  }

  it('cond_put_corrupt_token: (<tokenx>) (Not <DAV:no-lock>) passes the header but the lock refuses (423)', async () => {
    const { locks, lock, resolve } = await storeWithLock();
    const header = parseIfHeader(`(<${lock.token}x>) (Not <DAV:no-lock>)`);
    expect(await evaluateIf(header, '/res', resolve)).toBe(true);
    expect(await locks.canModify(chain, presentedLockTokens(header))).toBe(false);
  });

  it('cond_put_with_not: the real token both passes and satisfies the lock', async () => {
    const { locks, lock, resolve } = await storeWithLock();
    const header = parseIfHeader(`(<${lock.token}>) (Not <DAV:no-lock>)`);
    expect(await evaluateIf(header, '/res', resolve)).toBe(true);
    expect(await locks.canModify(chain, presentedLockTokens(header))).toBe(true);
  });

  it('fail_cond_put_unlocked: (<DAV:no-lock>) on an unlocked resource is false (412)', async () => {
    const locks = new LockStore();
    const header = parseIfHeader('(<DAV:no-lock>)');
    const resolve = async (): Promise<IfResourceState> => ({ etag: ETAG, lockTokens: (await locks.locksCovering(chain)).map((l) => l.token) });
    expect(await evaluateIf(header, '/res', resolve)).toBe(false);
  });

  it('a token of a lock on another resource does not satisfy this one', async () => {
    const { locks } = await storeWithLock();
    const other = await locks.lock({ chain: ['home', 'other'], rootHref: '/other', scope: 'exclusive', depth: '0', ownerXml: undefined, principal: 'u1', timeoutSec: 600 });
    const header = parseIfHeader(`</other> (<${other.token}>)`);
    expect(await locks.canModify(chain, presentedLockTokens(header))).toBe(false);
  });
});

describe('evaluateIf semantics', () => {
  it('is true when any list is true and a list needs all its conditions', async () => {
    expect(await evaluate(`(<${OTHER}>) (<${TOKEN}>)`)).toBe(true);
    expect(await evaluate(`(<${TOKEN}> <${OTHER}>)`)).toBe(false);
    expect(await evaluate(`(<${OTHER}>) (["nope"])`)).toBe(false);
  });

  it('applies Not to tokens and etags', async () => {
    expect(await evaluate(`(Not <${OTHER}>)`)).toBe(true);
    expect(await evaluate(`(Not <${TOKEN}>)`)).toBe(false);
    expect(await evaluate(`(Not ["other"])`)).toBe(true);
    expect(await evaluate(`(Not [${ETAG}])`)).toBe(false);
  });

  it('compares entity tags weakly', async () => {
    expect(await evaluate('([W/"3f2a-7"])')).toBe(true);
    expect(await evaluate('([3f2a-7])')).toBe(true);
    expect(entityTagsMatch('"a"', 'W/"a"')).toBe(true);
    expect(entityTagsMatch('"a"', '"b"')).toBe(false);
  });

  it('treats a resource without an etag as matching no entity tag', async () => {
    expect(await evaluate(`([${ETAG}])`, { etag: undefined })).toBe(false);
    expect(await evaluate(`(Not [${ETAG}])`, { etag: undefined })).toBe(true);
  });

  it('treats an unmapped resource as matching no token and no etag (RFC 4918 §10.4.4)', async () => {
    const { resolve } = lockedResource();
    expect(await evaluateIf(parseIfHeader(`(<${TOKEN}>)`), '/missing', resolve)).toBe(false);
    expect(await evaluateIf(parseIfHeader(`(Not <${TOKEN}>)`), '/missing', resolve)).toBe(true);
    expect(await evaluateIf(parseIfHeader(`</missing> ([${ETAG}])`), '/res', resolve)).toBe(false);
  });

  it('evaluates a tagged list on its own resource, not on the request URI', async () => {
    const { resolve } = lockedResource();
    expect(await evaluateIf(parseIfHeader(`</res> (<${TOKEN}>)`), '/elsewhere', resolve)).toBe(true);
    expect(await evaluateIf(parseIfHeader(`</elsewhere> (<${TOKEN}>)`), '/res', resolve)).toBe(false);
  });

  it('stops at the first true list and resolves each href once', async () => {
    const { resolve, calls } = lockedResource();
    const lists = Array.from({ length: 500 }, (_, k) => `</res> (<urn:uuid:${k}>)`).join(' ');
    expect(await evaluateIf(parseIfHeader(`${lists} </res> (<${TOKEN}>) </never> (<x:y>)`), '/res', resolve)).toBe(true);
    expect(calls).toEqual(['/res']);
  });

  it('accepts an async resolver and lets its errors through', async () => {
    const header = parseIfHeader(`(<${TOKEN}>)`);
    expect(await evaluateIf(header, '/res', async () => ({ etag: undefined, lockTokens: new Set([TOKEN]) }))).toBe(true);
    await expect(evaluateIf(header, '/res', async () => Promise.reject(new Error('store down')))).rejects.toThrow('store down');
  });
});

describe('presentedLockTokens and parseLockTokenHeader', () => {
  it('collects every token in the header, whatever its list', () => {
    const h = parseIfHeader(`</b> (<${TOKEN}> ["x"]) (Not <DAV:no-lock>) </a> (<${OTHER}>)`);
    expect([...presentedLockTokens(h)]).toEqual([TOKEN, OTHER]);
    expect(presentedLockTokens(undefined).size).toBe(0);
  });

  it('reads Lock-Token with or without angle brackets (Windows sends it bare)', () => {
    expect(parseLockTokenHeader(`<${TOKEN}>`)).toBe(TOKEN);
    expect(parseLockTokenHeader(` ${TOKEN} `)).toBe(TOKEN);
    expect(parseLockTokenHeader('< spaced >')).toBe('spaced');
    expect(parseLockTokenHeader(undefined)).toBeUndefined();
    expect(parseLockTokenHeader('<>')).toBeUndefined();
    expect(parseLockTokenHeader('<unclosed')).toBeUndefined();
    expect(parseLockTokenHeader('two words')).toBeUndefined();
  });
});
