/**
 * Windows Explorer (WebClient / Mini-Redirector) replayed request by request, as docs/client-quirks.md §2
 * describes it: anonymous OPTIONS, PROPFINDs without a body or a trailing slash, the
 * copy of a file (PROPFIND 404, empty PUT, LOCK without Depth, PUT with an untagged If, PROPPATCH
 * of the four Win32 properties, UNLOCK with a bare token), a case-only rename and a rename to a
 * name with `#`, and DELETE without a trailing slash. Each step is its own test; they share one
 * user and run in order. Plain HTTP here: Basic over HTTPS is a configuration matter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeId } from '../../../src/store-client/index.js';
import { davRequest, type DavAnswer, type DavHeaders } from '../../helpers/dav-requests.js';
import { bridgeWithUserFolder, type BridgeFixture } from '../../helpers/start-bridge.js';

const WINDOWS_UA = 'Microsoft-WebDAV-MiniRedir/10.0.19045';
const WINDOWS_LOCK =
  '<?xml version="1.0" encoding="utf-8" ?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>' +
  '<D:locktype><D:write/></D:locktype><D:owner><D:href>DESKTOP-1\\user</D:href></D:owner></D:lockinfo>';
const MODIFIED = 'Wed, 15 Jan 2020 10:20:30 GMT';
const WIN32_PROPPATCH =
  '<?xml version="1.0" encoding="utf-8" ?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:schemas-microsoft-com:"><D:set><D:prop>' +
  '<Z:Win32CreationTime>Tue, 14 Jan 2020 09:00:00 GMT</Z:Win32CreationTime>' +
  '<Z:Win32LastAccessTime>Thu, 16 Jan 2020 08:00:00 GMT</Z:Win32LastAccessTime>' +
  `<Z:Win32LastModifiedTime>${MODIFIED}</Z:Win32LastModifiedTime>` +
  '<Z:Win32FileAttributes>00000020</Z:Win32FileAttributes>' +
  '</D:prop></D:set></D:propertyupdate>';
const BODY = 'Windows copied this file.\r\n';

describe('Windows Explorer (Mini-Redirector) request sequence', () => {
  let f: BridgeFixture;
  let auth: string;
  let session: Awaited<ReturnType<BridgeFixture['newDavUser']>>['session'];
  let dirId: string;
  let token = '';

  beforeAll(async () => {
    ({ f, auth, session, dirId } = await bridgeWithUserFolder());
  });
  afterAll(async () => {
    await f.close();
  });

  function explorer(method: string, path: string, headers: DavHeaders = {}, body?: string, anonymous = false): Promise<DavAnswer> {
    const clientHeaders = { 'user-agent': WINDOWS_UA, translate: 'f', connection: 'keep-alive' };
    return davRequest(f.davUrl, method, path, { clientHeaders, auth: anonymous ? undefined : auth, headers, body });
  }

  async function namesInDir(): Promise<string[]> {
    return (await f.client.listFolder(session, nodeId(dirId))).map((e) => e.name).sort();
  }

  it('1) OPTIONS / without credentials answers 200 with MS-Author-Via and the lock verbs', async () => {
    const answer = await explorer('OPTIONS', '/', {}, undefined, true);
    expect(answer.status).toBe(200);
    expect(answer.headers['ms-author-via']).toBe('DAV');
    expect(answer.headers.dav).toBe('1, 2');
    for (const verb of ['LOCK', 'UNLOCK', 'PROPPATCH']) expect(String(answer.headers.allow)).toContain(verb);
  });

  it('2) PROPFIND / Depth 0 without a body answers 207 (allprop)', async () => {
    const answer = await explorer('PROPFIND', '/', { depth: '0', 'content-length': '0' });
    expect(answer.status).toBe(207);
    expect(answer.text).toContain('<D:href>/</D:href>');
    expect(answer.text).toContain('<D:collection/>');
  });

  it('3) PROPFIND /home/dir without the trailing slash, Depth 1, answers 207 and no redirect', async () => {
    const answer = await explorer('PROPFIND', '/home/dir', { depth: '1', 'content-length': '0' });
    expect(answer.status).toBe(207);
    expect(answer.headers.location).toBeUndefined();
    expect(answer.text).toMatch(/<D:href>\/home\/dir\/?<\/D:href>/);
  });

  it('4a) PROPFIND of the file about to be copied is a plain 404', async () => {
    const answer = await explorer('PROPFIND', '/home/dir/x.txt', { depth: '0', 'content-length': '0' });
    expect(answer.status).toBe(404);
  });

  it('4b) PUT of 0 bytes creates the file: 201', async () => {
    const answer = await explorer('PUT', '/home/dir/x.txt', { 'content-length': '0' }, '');
    expect(answer.status).toBe(201);
    expect(await namesInDir()).toEqual(['x.txt']);
  });

  it('4c) LOCK with Timeout Second-3600 and no Depth header grants a token', async () => {
    const answer = await explorer('LOCK', '/home/dir/x.txt', { timeout: 'Second-3600', 'content-type': 'text/xml; charset="utf-8"' }, WINDOWS_LOCK);
    expect(answer.status).toBe(200);
    token = /^<(.+)>$/.exec(String(answer.headers['lock-token']))?.[1] ?? '';
    expect(token).toMatch(/^opaquelocktoken:/);
    expect(answer.text).toContain('<D:timeout>Second-3600</D:timeout>');
    expect(answer.text).toContain(token);
  });

  it('4d) PUT of the body with If: (<token>) replaces the empty file: 204', async () => {
    const blocked = await explorer('PUT', '/home/dir/x.txt', {}, 'without the token');
    expect(blocked.status).toBe(423);
    const answer = await explorer('PUT', '/home/dir/x.txt', { if: `(<${token}>)` }, BODY);
    expect([200, 204]).toContain(answer.status);
    const entry = (await f.client.listFolder(session, nodeId(dirId))).find((e) => e.name === 'x.txt');
    expect(entry?.sizeBytes).toBe(Buffer.byteLength(BODY));
  });

  it('4e) PROPPATCH of the four Win32 properties under the lock answers 207 with 200 for each', async () => {
    const answer = await explorer('PROPPATCH', '/home/dir/x.txt', { if: `(<${token}>)`, 'content-type': 'text/xml; charset="utf-8"' }, WIN32_PROPPATCH);
    expect(answer.status).toBe(207);
    for (const name of ['Win32CreationTime', 'Win32LastAccessTime', 'Win32LastModifiedTime', 'Win32FileAttributes']) expect(answer.text).toContain(name);
    expect(answer.text).toContain('HTTP/1.1 200 OK');
    expect(answer.text).not.toMatch(/HTTP\/1\.1 (4|5)\d\d/);
  });

  it('4f) UNLOCK with the bare token (no angle brackets) answers 204', async () => {
    const answer = await explorer('UNLOCK', '/home/dir/x.txt', { 'lock-token': token });
    expect(answer.status).toBe(204);
  });

  it('4g) PROPFIND shows getlastmodified = Win32LastModifiedTime and no lock, and GET the body', async () => {
    const answer = await explorer('PROPFIND', '/home/dir/x.txt', { depth: '0', 'content-length': '0' });
    expect(answer.status).toBe(207);
    expect(answer.text).toContain(`<D:getlastmodified>${MODIFIED}</D:getlastmodified>`);
    expect(answer.text).toContain(`<D:getcontentlength>${Buffer.byteLength(BODY)}</D:getcontentlength>`);
    expect(answer.text).toContain('<D:lockdiscovery/>');
    const get = await explorer('GET', '/home/dir/x.txt');
    expect(get.text).toBe(BODY);
  });

  it('5a) MOVE to a name differing only in case renames the file', async () => {
    const answer = await explorer('MOVE', '/home/dir/x.txt', { destination: `${f.davUrl}/home/dir/X.txt`, overwrite: 'F' });
    expect([201, 204]).toContain(answer.status);
    expect(await namesInDir()).toEqual(['X.txt']);
  });

  it('5b) MOVE to a name with # (percent-encoded in the Destination) renames it', async () => {
    const answer = await explorer('MOVE', '/home/dir/X.txt', { destination: `${f.davUrl}/home/dir/a%23b.txt`, overwrite: 'F' });
    expect([201, 204]).toContain(answer.status);
    expect(await namesInDir()).toEqual(['a#b.txt']);
    const listing = await explorer('PROPFIND', '/home/dir/', { depth: '1', 'content-length': '0' });
    expect(listing.text).toContain('<D:href>/home/dir/a%23b.txt</D:href>');
  });

  it('6) DELETE /home/dir without the trailing slash answers 204 and moves it to trash', async () => {
    const answer = await explorer('DELETE', '/home/dir');
    expect(answer.status).toBe(204);
    const home = await f.client.listFolder(session, nodeId('home'));
    expect(home.map((e) => e.name)).not.toContain('dir');
    const trash = await f.client.listFolder(session, nodeId('trash'));
    expect(trash.map((e) => e.name)).toContain('dir');
    expect((await explorer('PROPFIND', '/home/dir', { depth: '0' })).status).toBe(404);
  });
});
