import { describe, expect, it } from 'vitest';
import { classify } from '../../../src/store-client/errors.js';

describe('classify', () => {
  it('returns nothing for a success envelope', () => {
    expect(classify('op', 200, { status: 'success', msg: 'ok' })).toBeUndefined();
    expect(classify('op', 204, '')).toBeUndefined();
  });

  it.each([
    [401, 'unauthenticated'],
    [403, 'forbidden'],
    [404, 'not-found'],
    [409, 'conflict'],
    [410, 'upload-token-expired'],
    [413, 'quota'],
    [507, 'quota'],
    [416, 'range-not-satisfiable'],
    [400, 'invalid'],
    [422, 'invalid'],
    [429, 'unavailable'],
    [500, 'unavailable'],
    [502, 'unavailable'],
    [503, 'unavailable'],
  ])('maps HTTP %i to %s', (status, kind) => {
    expect(classify('op', status, { status: 'error', msg: 'x' })?.kind).toBe(kind);
  });

  it('refines a 4xx by the code extension', () => {
    expect(classify('op', 400, { status: 'error', msg: 'too big', code: 'quota_exceeded' })?.kind).toBe('quota');
    expect(classify('op', 403, { status: 'error', msg: 'no', code: 'virtual_folder' })?.kind).toBe('forbidden');
  });

  it('classifies a 200 carrying status error from its message', () => {
    expect(classify('op', 200, { status: 'error', msg: 'Node not found' })?.kind).toBe('not-found');
    expect(classify('op', 200, { status: 'error', msg: 'Folder already exists' })?.kind).toBe('conflict');
    expect(classify('op', 200, { status: 'error', msg: 'Disk quota exceeded' })?.kind).toBe('quota');
    expect(classify('op', 200, { status: 'error', msg: 'Upload token expired' })?.kind).toBe('upload-token-expired');
    expect(classify('op', 200, { status: 'error', msg: 'Something odd' })?.kind).toBe('invalid');
  });

  it('keeps operation, status, message, code and Retry-After', () => {
    const err = classify('nodes.moveInto', 429, { status: 'error', msg: 'slow down', code: 'rate_limited' }, { 'retry-after': '30' });
    expect(err).toMatchObject({ operation: 'nodes.moveInto', httpStatus: 429, storeMsg: 'slow down', code: 'rate_limited', retryAfterSec: 30 });
    expect(err?.message).toContain('nodes.moveInto failed: unavailable (HTTP 429)');
  });
});
