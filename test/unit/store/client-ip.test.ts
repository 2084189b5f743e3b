/**
 * clientIp: X-Forwarded-For is believed only from a trusted peer, read from its right end
 * through trusted hops; a spoofed left part, garbage, and IPv4-mapped peers. userAgentOf: the
 * printable first 100 characters.
 */
import { describe, expect, it } from 'vitest';
import { clientIp, userAgentOf } from '../../../src/store/client-ip.js';

const PROXY = '10.0.0.5';

describe('clientIp', () => {
  it.each([
    ['an untrusted peer, whatever it forwards', '192.0.2.7', '198.51.100.1', [PROXY], '192.0.2.7'],
    ['a trusted peer without the header', PROXY, undefined, [PROXY], PROXY],
    ['a trusted peer forwarding one client', PROXY, '198.51.100.1', [PROXY], '198.51.100.1'],
    ['a client that prepends a spoofed address', PROXY, '203.0.113.66, 198.51.100.1', [PROXY], '198.51.100.1'],
    ['a chain of trusted proxies', PROXY, '198.51.100.1, 10.0.0.6', [PROXY, '10.0.0.6'], '198.51.100.1'],
    ['only trusted hops', PROXY, '10.0.0.6', [PROXY, '10.0.0.6'], '10.0.0.6'],
    ['garbage written before the trusted proxy', PROXY, 'unknown, 10.0.0.6', [PROXY, '10.0.0.6'], '10.0.0.6'],
    ['garbage as the only hop', PROXY, 'not-an-address', [PROXY], PROXY],
    ['an IPv4-mapped peer', `::ffff:${PROXY}`, '2001:db8::1', [PROXY], '2001:db8::1'],
    ['the header sent twice', PROXY, ['203.0.113.66', '198.51.100.1'], [PROXY], '198.51.100.1'],
    ['no trusted proxies at all', PROXY, '198.51.100.1', [], PROXY],
  ] as const)('answers the right client for %s', (_what, peer, header, trusted, expected) => {
    expect(clientIp(peer, header as string | string[] | undefined, trusted)).toBe(expected);
  });
});

describe('userAgentOf', () => {
  it('keeps printable characters, at most 100 of them; nothing for an empty header', () => {
    expect(userAgentOf('curl/8.5.0')).toBe('curl/8.5.0');
    expect(userAgentOf(`A\u0001B${'c'.repeat(200)}`)).toBe(`AB${'c'.repeat(98)}`);
    expect(userAgentOf('   ')).toBeUndefined();
    expect(userAgentOf(undefined)).toBeUndefined();
  });
});
