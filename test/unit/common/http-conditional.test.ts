import { describe, expect, it } from 'vitest';
import { evaluateConditionalRequest, interpretRange, type RepresentationInfo } from '../../../src/common/http-conditional.js';

const MODIFIED_MS = Date.UTC(2024, 4, 17, 10, 30, 15, 250);
const MODIFIED_HTTP = new Date(MODIFIED_MS).toUTCString();
const entity: RepresentationInfo = { etag: '"f00d-2"', lastModifiedMs: MODIFIED_MS, sizeBytes: 1000 };

const get = (headers: Record<string, string>, e: RepresentationInfo = entity) => evaluateConditionalRequest('GET', headers, e);

describe('evaluateConditionalRequest: whole and ranged answers', () => {
  it('answers 200 with length, validators and Accept-Ranges when nothing is asked', () => {
    expect(get({})).toEqual({
      status: 200,
      headers: { etag: '"f00d-2"', 'last-modified': MODIFIED_HTTP, 'accept-ranges': 'bytes', 'content-length': '1000' },
    });
  });

  it('answers 206 with Content-Range and the span length for a closed range', () => {
    const d = get({ range: 'bytes=10-19' });
    expect(d).toMatchObject({ status: 206, range: { start: 10, end: 19 } });
    expect(d.headers['content-range']).toBe('bytes 10-19/1000');
    expect(d.headers['content-length']).toBe('10');
    expect(d.headers.etag).toBe('"f00d-2"');
  });

  it('reads an open range to the last byte', () => {
    expect(get({ range: 'bytes=990-' })).toMatchObject({ status: 206, range: { start: 990, end: 999 }, headers: { 'content-range': 'bytes 990-999/1000' } });
  });

  it('reads a suffix range as the last n bytes', () => {
    expect(get({ range: 'bytes=-100' })).toMatchObject({ status: 206, range: { start: 900, end: 999 } });
  });

  it('reads a suffix longer than the file as the whole file (RFC 9110 §14.1.3)', () => {
    expect(get({ range: 'bytes=-5000' })).toMatchObject({ status: 206, range: { start: 0, end: 999 }, headers: { 'content-range': 'bytes 0-999/1000' } });
  });

  it('clamps a last position past the end to the last byte', () => {
    expect(get({ range: 'bytes=500-5000' })).toMatchObject({ status: 206, range: { start: 500, end: 999 }, headers: { 'content-length': '500' } });
  });

  it('answers 416 with Content-Range bytes */size when the range starts past the end', () => {
    const d = get({ range: 'bytes=1000-1010' });
    expect(d.status).toBe(416);
    expect(d.headers['content-range']).toBe('bytes */1000');
  });

  it('answers 416 for a zero-length suffix', () => {
    expect(get({ range: 'bytes=-0' }).status).toBe(416);
  });

  it('answers 200 with the whole file for several disjoint ranges', () => {
    expect(get({ range: 'bytes=0-9,100-109' })).toMatchObject({ status: 200, headers: { 'content-length': '1000' } });
  });

  it('merges ranges that touch into one 206', () => {
    expect(get({ range: 'bytes=0-9,10-19' })).toMatchObject({ status: 206, range: { start: 0, end: 19 } });
  });

  it.each(['bytes=abc', 'bytes=5', 'items=0-5', 'bytes=9-3', 'bytes=-', 'bytes 0-5'])('ignores the malformed or foreign Range %j (200)', (range) => {
    expect(get({ range }).status).toBe(200);
  });

  it('answers an empty file with 200 whatever the Range', () => {
    const empty = { ...entity, sizeBytes: 0 };
    for (const range of ['bytes=0-', 'bytes=0-0', 'bytes=-1', 'bytes=5-10']) {
      expect(get({ range }, empty)).toMatchObject({ status: 200, headers: { 'content-length': '0' } });
    }
  });

  it('ignores Range on HEAD and answers the whole length', () => {
    expect(evaluateConditionalRequest('HEAD', { range: 'bytes=0-9' }, entity)).toMatchObject({ status: 200, headers: { 'content-length': '1000' } });
  });
});

describe('evaluateConditionalRequest: If-Range', () => {
  it('honours the range when If-Range carries the current ETag', () => {
    expect(get({ range: 'bytes=0-9', 'if-range': '"f00d-2"' }).status).toBe(206);
  });

  it('sends the whole file when If-Range carries another ETag', () => {
    expect(get({ range: 'bytes=0-9', 'if-range': '"f00d-1"' })).toMatchObject({ status: 200, headers: { 'content-length': '1000' } });
  });

  it('never matches a weak ETag in If-Range (strong comparison)', () => {
    expect(get({ range: 'bytes=0-9', 'if-range': 'W/"f00d-2"' }).status).toBe(200);
  });

  it('honours the range when If-Range carries the exact Last-Modified date', () => {
    expect(get({ range: 'bytes=0-9', 'if-range': MODIFIED_HTTP }).status).toBe(206);
  });

  it('sends the whole file when If-Range carries another date', () => {
    expect(get({ range: 'bytes=0-9', 'if-range': new Date(MODIFIED_MS - 60_000).toUTCString() }).status).toBe(200);
  });
});

describe('evaluateConditionalRequest: preconditions', () => {
  it('answers 304 with the validators when If-None-Match lists the ETag', () => {
    expect(get({ 'if-none-match': '"other", "f00d-2"' })).toEqual({ status: 304, headers: { etag: '"f00d-2"', 'last-modified': MODIFIED_HTTP } });
  });

  it('matches If-None-Match weakly (a W/ tag counts)', () => {
    expect(get({ 'if-none-match': 'W/"f00d-2"' }).status).toBe(304);
  });

  it('answers 304 to If-None-Match: *', () => {
    expect(get({ 'if-none-match': '*' }).status).toBe(304);
  });

  it('answers 200 when If-None-Match lists only other tags', () => {
    expect(get({ 'if-none-match': '"f00d-1"' }).status).toBe(200);
  });

  it('answers 304 when If-Modified-Since is at or after Last-Modified (whole seconds)', () => {
    expect(get({ 'if-modified-since': MODIFIED_HTTP }).status).toBe(304);
    expect(get({ 'if-modified-since': new Date(MODIFIED_MS + 3_600_000).toUTCString() }).status).toBe(304);
  });

  it('answers 200 when the file changed after If-Modified-Since', () => {
    expect(get({ 'if-modified-since': new Date(MODIFIED_MS - 1_000).toUTCString() }).status).toBe(200);
  });

  it('ignores If-Modified-Since when If-None-Match is present (RFC 9110 §13.1.3)', () => {
    expect(get({ 'if-none-match': '"f00d-1"', 'if-modified-since': MODIFIED_HTTP }).status).toBe(200);
  });

  it('ignores an If-Modified-Since that is not a date', () => {
    expect(get({ 'if-modified-since': 'yesterday-ish' }).status).toBe(200);
  });

  it('answers 412 when If-Match lists no current tag', () => {
    expect(get({ 'if-match': '"f00d-1"' })).toEqual({ status: 412, headers: {} });
  });

  it('passes If-Match with the current tag or *, but not with a weak tag', () => {
    expect(get({ 'if-match': '"f00d-2"' }).status).toBe(200);
    expect(get({ 'if-match': '*' }).status).toBe(200);
    expect(get({ 'if-match': 'W/"f00d-2"' }).status).toBe(412);
  });

  it('answers 412 when the file changed after If-Unmodified-Since', () => {
    expect(get({ 'if-unmodified-since': new Date(MODIFIED_MS - 1_000).toUTCString() }).status).toBe(412);
    expect(get({ 'if-unmodified-since': MODIFIED_HTTP }).status).toBe(200);
  });

  it('evaluates If-Match before If-None-Match', () => {
    expect(get({ 'if-match': '"nope"', 'if-none-match': '"f00d-2"' }).status).toBe(412);
  });

  it('answers 412, not 304, to a matching If-None-Match on a method other than GET or HEAD', () => {
    expect(evaluateConditionalRequest('PUT', { 'if-none-match': '*' }, entity).status).toBe(412);
  });

  it('lets a 304 win over a Range', () => {
    expect(get({ 'if-none-match': '"f00d-2"', range: 'bytes=0-9' }).status).toBe(304);
  });
});

describe('interpretRange', () => {
  it('returns the span for a single range and ignore for a missing unit', () => {
    expect(interpretRange('bytes=0-0', 1)).toEqual({ kind: 'span', span: { start: 0, end: 0 } });
    expect(interpretRange('0-0', 1)).toEqual({ kind: 'ignore' });
  });
});
