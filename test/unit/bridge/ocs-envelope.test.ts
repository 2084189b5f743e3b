import { describe, expect, it } from 'vitest';
import { ocsFormatOf, renderOcs } from '../../../src/bridge/nextcloud/ocs-envelope.js';
import { quotaOf } from '../../../src/bridge/nextcloud/ocs.js';

describe('the OCS envelope', () => {
  it('picks the format from format=, then Accept, else XML', () => {
    expect(ocsFormatOf(new URLSearchParams('format=json'), undefined)).toBe('json');
    expect(ocsFormatOf(new URLSearchParams('format=xml'), 'application/json')).toBe('xml');
    expect(ocsFormatOf(new URLSearchParams(''), 'text/html, application/json;q=0.9')).toBe('json');
    expect(ocsFormatOf(new URLSearchParams('format=yaml'), undefined)).toBe('xml');
  });

  it('keeps markup out of JSON and escapes it in XML, with lists as <element> and nulls empty', () => {
    const data = { name: '<b>&"x"</b>', list: ['a'], nothing: null, no: false };
    const json = renderOcs(2, 'json', { data });
    expect(json.body).not.toMatch(/[<>]/);
    expect((JSON.parse(json.body) as { ocs: { data: unknown } }).ocs.data).toEqual(data);
    const xml = renderOcs(2, 'xml', { data }).body;
    expect(xml).toContain('<name>&lt;b&gt;&amp;&quot;x&quot;&lt;/b&gt;</name>');
    expect(xml).toContain('<list>\n   <element>a</element>\n  </list>');
    expect(xml).toContain('<nothing/>');
    expect(xml).toContain('<no></no>');
  });

  it('maps refusals to HTTP as Nextcloud does: v1 keeps 200 but for 401, v2 passes the status on, the transport statuses stay in both', () => {
    const status = (version: 1 | 2, code: number): number => renderOcs(version, 'json', { refusal: { status: code, message: 'm' } }).httpStatus;
    expect([status(1, 997), status(1, 998), status(1, 403), status(1, 503), status(1, 429)]).toEqual([401, 200, 200, 503, 429]);
    expect([status(2, 997), status(2, 998), status(2, 403), status(2, 503), status(2, 42)]).toEqual([401, 404, 403, 503, 400]);
  });
});

describe('cloud/user quota', () => {
  it('reports a limit as Nextcloud does, and nothing free once over it', () => {
    expect(quotaOf({ diskQuotaBytes: 1000, diskUsedBytes: 250 })).toEqual({ free: 750, used: 250, total: 1000, relative: 25, quota: 1000 });
    expect(quotaOf({ diskQuotaBytes: 1000, diskUsedBytes: 1500 })).toEqual({ free: 0, used: 1500, total: 1500, relative: 100, quota: 1000 });
  });

  it('reports no limit (0 or below) as -3 with the free space PROPFIND reports', () => {
    for (const diskQuotaBytes of [0, -1]) expect(quotaOf({ diskQuotaBytes, diskUsedBytes: 0 })).toEqual({ free: 2 ** 50, used: 0, total: 2 ** 50, relative: 0, quota: -3 });
  });
});
