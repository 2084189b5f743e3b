/**
 * Discovery and the OCS API on the bridge's address (bridge/nextcloud/): status.php to anyone,
 * the OCS envelope in v1 and v2, JSON and XML, capabilities and config public, cloud/user and the
 * polled apps only to a caller the bridge authenticates as it does DAV requests (Basic with the
 * password or an app password, a store token as Bearer), unknown endpoints in the envelope.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { apiCall, dataOf } from '../../helpers/user-api.js';
import { UNLIMITED_AVAILABLE_BYTES } from '../../../src/bridge/tree/grants.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

interface OcsJson {
  ocs: { meta: { status: string; statuscode: number; message: string; totalitems?: string; itemsperpage?: string }; data: unknown };
}

const basic = (login: string, password: string): string => `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;

describe('Nextcloud discovery and OCS on the bridge', () => {
  let f: BridgeFixture;
  let ada: DavUser;
  let limited: DavUser;

  async function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
    const res = await request(`${f.davUrl}${path}`, { method: method as 'GET', headers });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  }

  async function ocs(path: string, auth?: string): Promise<{ answer: Answer; json: OcsJson }> {
    const answer = await get(path, { 'ocs-apirequest': 'true', ...(auth ? { authorization: auth } : {}) });
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    return { answer, json: JSON.parse(answer.text) as OcsJson };
  }

  beforeAll(async () => {
    f = await bridgeFixture();
    ada = await f.newDavUser();
    limited = await f.newDavUser({ quotaBytes: 10_000 });
  });
  afterAll(async () => {
    await f.close();
  });

  it('answers status.php to anyone, wrong credentials included, as an installed server of a current version named driveway', async () => {
    for (const headers of [{}, { authorization: basic(ada.email, 'not the password') }] as Array<Record<string, string>>) {
      const answer = await get('/status.php', headers);
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
      expect(answer.headers.dav).toBeUndefined();
      expect(JSON.parse(answer.text)).toEqual({
        installed: true,
        maintenance: false,
        needsDbUpgrade: false,
        version: '30.0.0.0',
        versionstring: '30.0.0',
        edition: '',
        productname: 'driveway',
        extendedSupport: false,
      });
    }
    const head = await get('/status.php', {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect((await get('/status.php', {}, 'PUT')).status).toBe(405);
  });

  it('offers bulk upload to every client but the Nextcloud desktop clients before 3.10 (an empty file fails their bulk request)', async () => {
    const davOf = async (agent: string) => {
      const answer = await get('/ocs/v2.php/cloud/capabilities?format=json', { 'user-agent': agent });
      return (JSON.parse(answer.text) as { ocs: { data: { capabilities: { dav: Record<string, unknown> } } } }).ocs.data.capabilities.dav;
    };
    expect(await davOf('Mozilla/5.0 (Linux) mirall/3.7.3 (nextcloudcmd, debian-6.1.0-28-amd64 ClientArchitecture: x86_64 OsArchitecture: x86_64)')).toEqual({ chunking: '1.0' });
    expect(await davOf('Mozilla/5.0 (Windows) mirall/3.9.0 (Nextcloud, windows-10.0.22621)')).toEqual({ chunking: '1.0' });
    expect(await davOf('Mozilla/5.0 (Linux) mirall/3.10.1 (Nextcloud, debian)')).toEqual({ chunking: '1.0', bulkupload: '1.0' });
    expect(await davOf('Mozilla/5.0 (Android) Nextcloud-android/3.30.0')).toEqual({ chunking: '1.0', bulkupload: '1.0' });
  });

  it('refuses a method an endpoint does not take with 405 and the methods it does', async () => {
    const refused = await get('/ocs/v2.php/cloud/capabilities', {}, 'DELETE');
    expect(refused.status).toBe(405);
    expect(refused.headers.allow).toBe('GET, HEAD');
    expect((await ocs('/ocs/v2.php/cloud/capabilities?format=json')).answer.status).toBe(200);
  });

  it('answers the capabilities to anyone in v1 and v2, saying only what driveway does', async () => {
    const v1 = await ocs('/ocs/v1.php/cloud/capabilities?format=json');
    expect(v1.answer.status).toBe(200);
    expect(v1.json.ocs.meta).toEqual({ status: 'ok', statuscode: 100, message: 'OK', totalitems: '', itemsperpage: '' });
    const data = v1.json.ocs.data as { version: Record<string, unknown>; capabilities: Record<string, Record<string, unknown>> };
    expect(data.version).toEqual({ major: 30, minor: 0, micro: 0, string: '30.0.0', edition: '', extendedSupport: false });
    const caps = data.capabilities;
    expect(caps.dav).toEqual({ chunking: '1.0', bulkupload: '1.0' });
    expect(caps.files).toEqual({ bigfilechunking: true, undelete: true, versioning: true });
    expect(caps.checksums).toEqual({ supportedTypes: ['SHA1', 'MD5'], preferredUploadType: 'SHA1' });
    expect(caps.core).toMatchObject({ pollinterval: 30_000, 'webdav-root': 'remote.php/webdav', status: { installed: true, version: '30.0.0.0' } });
    expect(caps.uploadConflictFiles).toBe(false);
    for (const absent of ['user_status', 'activity', 'end-to-end-encryption']) expect(caps).not.toHaveProperty(absent);
    expect(caps.notifications).toEqual({ 'ocs-endpoints': ['list', 'get', 'delete', 'delete-all'] });

    const v2 = await ocs('/ocs/v2.php/cloud/capabilities?format=json', basic(ada.email, ada.password));
    expect(v2.answer.status).toBe(200);
    expect(v2.json.ocs.meta).toEqual({ status: 'ok', statuscode: 200, message: 'OK' });
    expect(v2.json.ocs.data).toEqual(data);
  });

  it('answers in XML unless JSON is asked, by format or by Accept', async () => {
    const xml = await get('/ocs/v1.php/cloud/capabilities');
    expect(xml.status).toBe(200);
    expect(xml.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(xml.text.startsWith('<?xml version="1.0"?>\n<ocs>\n <meta>\n  <status>ok</status>\n  <statuscode>100</statuscode>\n  <message>OK</message>\n')).toBe(true);
    expect(xml.text).toContain('<chunking>1.0</chunking>');
    expect(xml.text).toContain('<supportedTypes>\n     <element>SHA1</element>\n     <element>MD5</element>\n    </supportedTypes>');
    expect(xml.text).toContain('<bigfilechunking>1</bigfilechunking>');
    const accepted = await get('/ocs/v2.php/cloud/capabilities', { accept: 'application/json' });
    expect(accepted.headers['content-type']).toBe('application/json; charset=utf-8');
    expect((JSON.parse(accepted.text) as OcsJson).ocs.meta.statuscode).toBe(200);
    const forcedXml = await get('/ocs/v2.php/cloud/capabilities?format=xml', { accept: 'application/json' });
    expect(forcedXml.text).toContain('<statuscode>200</statuscode>');
  });

  it('answers cloud/user with the login name the files space takes, the profile and the quota', async () => {
    const { answer, json } = await ocs('/ocs/v1.php/cloud/user?format=json', basic(ada.email, ada.password));
    expect(answer.status).toBe(200);
    expect(json.ocs.meta.statuscode).toBe(100);
    const data = json.ocs.data as Record<string, unknown>;
    expect(data).toMatchObject({ enabled: true, id: ada.email, email: ada.email });
    expect(data['display-name']).toBe(data.displayname);
    expect(typeof data['display-name']).toBe('string');
    expect(data.quota).toEqual({ free: UNLIMITED_AVAILABLE_BYTES, used: 0, total: UNLIMITED_AVAILABLE_BYTES, relative: 0, quota: -3 });
    // The id is where the client then goes: its files space answers.
    const space = await request(`${f.davUrl}/remote.php/dav/files/${encodeURIComponent(String(data.id))}/`, { method: 'PROPFIND', headers: { authorization: ada.auth, depth: '0' } });
    await space.body.dump();
    expect(space.statusCode).toBe(207);

    const put = await request(`${f.davUrl}/home/four.txt`, { method: 'PUT', headers: { authorization: limited.auth }, body: '4444' });
    await put.body.dump();
    expect(put.statusCode).toBe(201);
    const v2 = await ocs('/ocs/v2.php/cloud/user?format=json', limited.auth);
    expect(v2.json.ocs.meta.statuscode).toBe(200);
    expect((v2.json.ocs.data as { quota: unknown }).quota).toEqual({ free: 9_996, used: 4, total: 10_000, relative: 0.04, quota: 10_000 });
  });

  it('takes an app password and a store token as it takes them for DAV', async () => {
    const made = dataOf<{ uuid: string; password: string }>(await apiCall(f.client, ada.session, 'POST', '/api/user/app_passwords', { name: 'ocs test' }));
    const byAppPassword = await ocs('/ocs/v1.php/cloud/user?format=json', basic(ada.email, made.password));
    expect((byAppPassword.json.ocs.data as { id: string }).id).toBe(ada.email);
    const byToken = await ocs('/ocs/v2.php/cloud/user?format=json', `Bearer ${ada.session.token}`);
    expect(byToken.answer.status).toBe(200);
    expect((byToken.json.ocs.data as { id: string }).id).toBe(ada.email);
  });

  it('answers 997 with 401 without credentials or with wrong ones, in both versions and formats, and names no user', async () => {
    for (const auth of [undefined, basic(ada.email, 'wrong password')]) {
      const v1 = await ocs('/ocs/v1.php/cloud/user?format=json', auth);
      expect(v1.answer.status).toBe(401);
      expect(v1.answer.headers['www-authenticate']).toBe('Basic realm="driveway", charset="UTF-8"');
      expect(v1.json).toEqual({ ocs: { meta: { status: 'failure', statuscode: 997, message: 'Current user is not logged in', totalitems: '', itemsperpage: '' }, data: [] } });
      const v2 = await ocs('/ocs/v2.php/cloud/user?format=json', auth);
      expect(v2.answer.status).toBe(401);
      expect(v2.json).toEqual({ ocs: { meta: { status: 'failure', statuscode: 997, message: 'Current user is not logged in' }, data: [] } });
    }
    const xml = await get('/ocs/v2.php/cloud/user');
    expect(xml.status).toBe(401);
    expect(xml.text).toBe('<?xml version="1.0"?>\n<ocs>\n <meta>\n  <status>failure</status>\n  <statuscode>997</statuscode>\n  <message>Current user is not logged in</message>\n </meta>\n <data/>\n</ocs>\n');
  });

  it('answers an unknown endpoint 998 in the envelope: HTTP 200 in v1, 404 in v2, whoever asks', async () => {
    const v1 = await ocs('/ocs/v1.php/cloud/nothing-here?format=json');
    expect(v1.answer.status).toBe(200);
    expect(v1.json.ocs.meta).toMatchObject({ status: 'failure', statuscode: 998 });
    expect(v1.json.ocs.data).toEqual([]);
    const v2 = await ocs('/ocs/v2.php/apps/files_sharing/api/v1/remote_shares?format=json', ada.auth);
    expect(v2.answer.status).toBe(404);
    expect(v2.json.ocs.meta).toMatchObject({ status: 'failure', statuscode: 998 });
    const xml = await get('/ocs/v2.php/apps/nothing');
    expect(xml.status).toBe(404);
    expect(xml.text).toContain('<statuscode>998</statuscode>');
  });

  it('answers config to anyone, and the polled apps empty to their user', async () => {
    const config = await ocs('/ocs/v1.php/config?format=json');
    expect(config.json.ocs.data).toEqual({ version: '1.7', website: 'driveway', host: new URL(f.davUrl).host, contact: '', ssl: 'false' });
    for (const path of ['/ocs/v2.php/apps/notifications/api/v2/notifications', '/ocs/v2.php/apps/activity/api/v2/activity', '/ocs/v2.php/apps/user_status/api/v1/predefined_statuses', '/ocs/v2.php/core/navigation/apps']) {
      expect((await ocs(`${path}?format=json`)).answer.status).toBe(401);
      const answered = await ocs(`${path}?format=json`, ada.auth);
      expect(answered.answer.status).toBe(200);
      expect(answered.json.ocs.data).toEqual([]);
    }
    const status = await ocs('/ocs/v2.php/apps/user_status/api/v1/user_status?format=json', ada.auth);
    expect(status.json.ocs.data).toMatchObject({ userId: ada.email, status: 'online', message: null, statusIsUserDefined: false });
  });

  it('leaves the drive to DAV: a PROPFIND of the root still lists no status.php or ocs', async () => {
    const res = await request(`${f.davUrl}/`, { method: 'PROPFIND', headers: { authorization: ada.auth, depth: '1' } });
    const text = await res.body.text();
    expect(res.statusCode).toBe(207);
    expect(text).not.toContain('status.php');
    expect(text).not.toContain('/ocs');
  });

  // Last: it locks this address out of first logins for the window.
  it('counts a refused OCS login against the same limiter as DAV: past the limit, the right password is refused too', async () => {
    const victim = await f.newDavUser();
    let refusals = 0;
    let answer = await ocs('/ocs/v1.php/cloud/user?format=json', basic(victim.email, 'guess'));
    while (answer.answer.status === 401 && refusals < 11) {
      refusals++;
      answer = await ocs('/ocs/v1.php/cloud/user?format=json', basic(victim.email, `guess ${refusals}`));
    }
    // bridge.loginMaxFailures (10) per name and per address; earlier tests' wrong passwords count for this address.
    expect(refusals).toBeLessThanOrEqual(10);
    const limitedOut = await get('/ocs/v2.php/cloud/user?format=json', { authorization: victim.auth });
    expect(limitedOut.status).toBe(503);
    expect(limitedOut.headers['retry-after']).toBeDefined();
    expect((JSON.parse(limitedOut.text) as OcsJson).ocs.meta).toMatchObject({ status: 'failure', statuscode: 503 });
    const dav = await request(`${f.davUrl}/home/`, { method: 'PROPFIND', headers: { authorization: victim.auth, depth: '0' } });
    await dav.body.dump();
    expect(dav.statusCode).toBe(503);
  });
});
