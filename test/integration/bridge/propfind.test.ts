import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UNLIMITED_AVAILABLE_BYTES } from '../../../src/bridge/verbs/propfind.js';
import { nodeId, type NodeEntry, type StoreSession } from '../../../src/store-client/index.js';
import { davRequest, multistatusOf, type DavAnswer, type DavHeaders } from '../../helpers/dav-requests.js';
import { parseMultistatus, davProp, responseFor, type DavResponse } from '../../helpers/multistatus.js';
import { createFolder, entryNamed, uploadFile } from '../../helpers/seed.js';
import { basicAuth, bridgeFixture, bridgeWithUserFolder, type BridgeFixture } from '../../helpers/start-bridge.js';

const FINDER_UA = 'WebDAVFS/3.0.0 (03008000) Darwin/24.4.0 (arm64)';
const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

const propBody = (props: string, extraNs = ''): string =>
  `<?xml version="1.0" encoding="utf-8"?>\n<D:propfind xmlns:D="DAV:"${extraNs}><D:prop>${props}</D:prop></D:propfind>`;

/** Names that break naive hrefs (docs/client-quirks.md §0: `#` and `?` left raw; Test ideas). */
const AWKWARD = ['sp ace.txt', 'a#b.txt', 'c?d.txt', 'e%f.txt', 'g+h.txt', 'x&y;z.txt', 'smile 😀.txt', "q'(u)*!.txt"];

describe('PROPFIND', () => {
  let f: BridgeFixture;
  let auth: string;
  let session: StoreSession;
  let dirId: string;
  let plain: NodeEntry;

  beforeAll(async () => {
    ({ f, auth, session, dirId } = await bridgeWithUserFolder());
    await uploadFile(f.client, session, dirId, 'plain.txt', 'hello');
    await uploadFile(f.client, session, dirId, 'empty.bin', Buffer.alloc(0));
    await uploadFile(f.client, session, dirId, 'café.txt', 'NFC name');
    await createFolder(f.client, session, dirId, 'sub');
    for (const name of AWKWARD) await uploadFile(f.client, session, dirId, name, name);
    plain = await entryNamed(f.client, session, dirId, 'plain.txt');
  });
  afterAll(async () => {
    await f.close();
  });

  /** As the test user, or as `who` (an Authorization value; '' for none). */
  function dav(method: string, path: string, headers: DavHeaders = {}, body?: string, who = auth): Promise<DavAnswer> {
    return davRequest(f.davUrl, method, path, { auth: who, headers, body });
  }

  async function propfind(path: string, depth: string | undefined, body?: string, headers: DavHeaders = {}): Promise<DavResponse[]> {
    const answer = await dav('PROPFIND', path, { ...(depth !== undefined ? { depth } : {}), ...headers }, body);
    return multistatusOf(answer, { contentType: /^application\/xml/ });
  }

  it('answers Depth 0 on a file with every live property in its exact format', async () => {
    const [file, ...rest] = await propfind('/home/dir/plain.txt', '0');
    expect(rest).toEqual([]);
    if (!file) throw new Error('no response');
    expect(file.href).toBe('/home/dir/plain.txt');
    for (const prop of file.props.values()) expect(prop.status).toBe(200);
    expect(davProp(file, 'resourcetype').node.children).toEqual([]);
    expect(davProp(file, 'displayname').text).toBe('plain.txt');
    expect(davProp(file, 'getcontentlength').text).toBe('5');
    expect(davProp(file, 'getlastmodified').text).toMatch(HTTP_DATE);
    expect(davProp(file, 'getlastmodified').text).toBe(new Date(plain.updatedMs).toUTCString());
    expect(davProp(file, 'creationdate').text).toMatch(RFC3339);
    expect(Date.parse(davProp(file, 'creationdate').text)).toBe(Math.floor(plain.updatedMs / 1000) * 1000);
    expect(davProp(file, 'getetag').text).toBe(`"${plain.id}-${plain.revision}"`);
    expect(davProp(file, 'getcontenttype').text).toBe('text/plain');
    const entries = davProp(file, 'supportedlock').node.children.filter((c) => c.local === 'lockentry');
    expect(entries.map((e) => e.children.find((c) => c.local === 'lockscope')?.children[0]?.local).sort()).toEqual(['exclusive', 'shared']);
    expect(davProp(file, 'lockdiscovery').node.children).toEqual([]);
    // RFC 4331 quota properties are only returned when asked for.
    expect(file.props.has('{DAV:}quota-available-bytes')).toBe(false);

    const head = await dav('HEAD', '/home/dir/plain.txt');
    expect(head.headers.etag).toBe(davProp(file, 'getetag').text);
  });

  it('answers a collection with and without the trailing slash (207 at once, no redirect), its href ending in /', async () => {
    for (const path of ['/home/dir', '/home/dir/']) {
      const [folder, ...rest] = await propfind(path, '0');
      expect(rest).toEqual([]);
      if (!folder) throw new Error('no response');
      expect(folder.href).toBe('/home/dir/');
      expect(davProp(folder, 'resourcetype').node.children.map((c) => `${c.ns}${c.local}`)).toEqual(['DAV:collection']);
      expect(davProp(folder, 'displayname').text).toBe('dir');
      expect(davProp(folder, 'getetag').text).toMatch(/^"[^"]+"$/);
      expect(folder.props.has('{DAV:}getcontentlength')).toBe(false);
      expect(folder.props.has('{DAV:}getcontenttype')).toBe(false);
    }
  });

  it('lists the folder first, then every child exactly once, collections ending in /', async () => {
    const responses = await propfind('/home/dir/', '1');
    const hrefs = responses.map((r) => r.href);
    expect(hrefs[0]).toBe('/home/dir/');
    expect(new Set(hrefs).size).toBe(hrefs.length);
    const listed = (await f.client.listFolder(session, nodeId(dirId))).map((e) => e.name);
    expect(hrefs.length).toBe(listed.length + 1);
    expect(hrefs).toContain('/home/dir/sub/');
    expect(hrefs).toContain('/home/dir/empty.bin');
    expect(davProp(responseFor(responses, '/home/dir/empty.bin'), 'getcontentlength').text).toBe('0');
    expect(davProp(responseFor(responses, '/home/dir/empty.bin'), 'getcontenttype').text).toBe('application/octet-stream');
  });

  it('answers Depth 1 on a file with the file alone, and Depth 1 on / with the top-level folders', async () => {
    const file = await propfind('/home/dir/plain.txt', '1');
    expect(file.map((r) => r.href)).toEqual(['/home/dir/plain.txt']);
    const root = await propfind('/', '1');
    expect(root[0]?.href).toBe('/');
    expect(root.map((r) => r.href)).toEqual(expect.arrayContaining(['/home/', '/incoming/', '/trash/', '/favorites/']));
    expect(davProp(responseFor(root, '/home/'), 'displayname').text).toBe('home');
  });

  it('refuses Depth infinity, stated or missing, with 403 DAV:propfind-finite-depth, and a bad Depth with 400', async () => {
    for (const depth of ['infinity', 'Infinity', undefined]) {
      const answer = await dav('PROPFIND', '/home/dir/', depth === undefined ? {} : { depth });
      expect(answer.status).toBe(403);
      expect(answer.text).toContain('<D:propfind-finite-depth/>');
      expect(answer.text).toContain('<D:error xmlns:D="DAV:">');
    }
    expect((await dav('PROPFIND', '/home/dir/', { depth: '2' })).status).toBe(400);
  });

  it('reads an empty body, and a DAV:propfind without a choice, as allprop', async () => {
    const empty = await propfind('/home/dir/plain.txt', '0', '');
    const bare = await propfind('/home/dir/plain.txt', '0', '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"/>');
    const allprop = await propfind('/home/dir/plain.txt', '0', '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>');
    const names = (r: DavResponse[]) => [...(r[0]?.props.keys() ?? [])].sort();
    expect(names(empty)).toEqual(names(allprop));
    expect(names(bare)).toEqual(names(allprop));
    expect(names(allprop)).toContain('{DAV:}getetag');
  });

  it('adds DAV:include properties to allprop, unknown ones in a 404 propstat', async () => {
    const body =
      '<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:X="urn:x"><D:allprop/><D:include>' +
      '<D:quota-used-bytes/><X:nothing/></D:include></D:propfind>';
    const [root] = await propfind('/', '0', body);
    if (!root) throw new Error('no response');
    expect(davProp(root, 'quota-used-bytes').status).toBe(200);
    expect(davProp(root, 'resourcetype').status).toBe(200);
    expect(root.props.get('{urn:x}nothing')?.status).toBe(404);
  });

  it('reports every privilege on the user’s own files (RFC 3744 current-user-privilege-set), only when asked, and no read-only attribute', async () => {
    const [asked] = await propfind('/home/dir/plain.txt', '0', propBody('<D:current-user-privilege-set/>'));
    if (!asked) throw new Error('no response');
    const set = davProp(asked, 'current-user-privilege-set');
    expect(set.status).toBe(200);
    const privileges = set.node.children.map((p) => p.children[0]?.local).sort();
    expect(privileges).toEqual(['all', 'bind', 'read', 'read-current-user-privilege-set', 'unbind', 'write', 'write-content', 'write-properties']);
    const [all] = await propfind('/home/dir/plain.txt', '0', '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>');
    expect([...(all?.props.keys() ?? [])]).not.toContain('{DAV:}current-user-privilege-set');
    expect([...(all?.props.keys() ?? [])]).not.toContain('{urn:schemas-microsoft-com:}Win32FileAttributes');
  });

  it('answers propname with names only, and prop with just the asked properties, unknown ones (Apple ones included) in 404', async () => {
    const [names] = await propfind('/home/dir/plain.txt', '0', '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:propname/></D:propfind>');
    if (!names) throw new Error('no response');
    const expected = [
      'resourcetype',
      'displayname',
      'getcontentlength',
      'getlastmodified',
      'creationdate',
      'getetag',
      'getcontenttype',
      'supportedlock',
      'lockdiscovery',
      'current-user-privilege-set',
    ];
    const clientProps = ['{http://owncloud.org/ns}checksums', '{http://owncloud.org/ns}fileid', '{http://owncloud.org/ns}id', '{http://owncloud.org/ns}permissions', '{http://owncloud.org/ns}size', '{ME:}sha1hex', '{http://nextcloud.org/ns}has-preview'];
    expect([...names.props.keys()].sort()).toEqual([...expected.map((n) => `{DAV:}${n}`), ...clientProps].sort());
    for (const prop of names.props.values()) {
      expect(prop.status).toBe(200);
      expect(prop.node.children).toEqual([]);
      expect(prop.text).toBe('');
    }

    const [asked] = await propfind(
      '/home/dir/plain.txt',
      '0',
      propBody('<D:getcontentlength/><A:appledoubleheader/><D:quota/><D:getetag/>', ' xmlns:A="http://www.apple.com/webdav_fs/props/"'),
    );
    if (!asked) throw new Error('no response');
    expect([...asked.props.keys()].sort()).toEqual(
      ['{DAV:}getcontentlength', '{DAV:}getetag', '{DAV:}quota', '{http://www.apple.com/webdav_fs/props/}appledoubleheader'].sort(),
    );
    expect(davProp(asked, 'getcontentlength')).toMatchObject({ status: 200, text: '5' });
    expect(davProp(asked, 'quota').status).toBe(404);
    expect(asked.props.get('{http://www.apple.com/webdav_fs/props/}appledoubleheader')?.status).toBe(404);
    // A collection has no length or type: asked for, they are 404.
    const [folder] = await propfind('/home/dir/', '0', propBody('<D:getcontentlength/><D:getcontenttype/><D:resourcetype/>'));
    if (!folder) throw new Error('no response');
    expect(davProp(folder, 'getcontentlength').status).toBe(404);
    expect(davProp(folder, 'getcontenttype').status).toBe(404);
    expect(davProp(folder, 'resourcetype').status).toBe(200);
  });

  it('percent-encodes every segment of every href (space # % + ? & ; emoji) and each href leads back to its resource', async () => {
    const responses = await propfind('/home/dir/', '1', propBody('<D:displayname/><D:getcontentlength/>'));
    for (const name of AWKWARD) {
      const response = responses.find((r) => davProp(r, 'displayname').text === name);
      if (!response) throw new Error(`${name} not listed`);
      const segment = response.href.slice('/home/dir/'.length);
      expect(segment).toMatch(/^[A-Za-z0-9._~%-]+$/);
      expect(decodeURIComponent(segment)).toBe(name);
      expect(davProp(response, 'getcontentlength').text).toBe(String(Buffer.byteLength(name)));
      const [again] = await propfind(response.href, '0', propBody('<D:displayname/>'));
      expect(again?.href).toBe(response.href);
      expect(again && davProp(again, 'displayname').text).toBe(name);
    }
  });

  it('answers WebDAVFS in NFD and other clients in the form they asked for, finding the NFC name either way', async () => {
    const nfc = 'café.txt';
    const nfdHref = '/home/dir/cafe%CC%81.txt';
    const nfcHref = '/home/dir/caf%C3%A9.txt';
    const plainListing = await propfind('/home/dir/', '1', propBody('<D:displayname/>'));
    expect(davProp(responseFor(plainListing, nfcHref), 'displayname').text).toBe(nfc);

    const finderListing = await propfind('/home/dir/', '1', propBody('<D:displayname/>'), { 'user-agent': FINDER_UA });
    expect(finderListing.some((r) => r.href === nfcHref)).toBe(false);
    expect(davProp(responseFor(finderListing, nfdHref), 'displayname').text).toBe(nfc.normalize('NFD'));

    for (const [path, ua, href] of [
      [nfdHref, FINDER_UA, nfdHref],
      [nfcHref, FINDER_UA, nfdHref],
      [nfdHref, 'rclone/v1.60.0', nfdHref],
      [nfcHref, 'rclone/v1.60.0', nfcHref],
    ] as const) {
      const [found] = await propfind(path, '0', propBody('<D:getcontentlength/>'), { 'user-agent': ua });
      expect(found?.href).toBe(href);
      expect(found && davProp(found, 'getcontentlength').text).toBe(String(Buffer.byteLength('NFC name')));
    }
  });

  it('answers a plain 404 without a multistatus for missing names, missing parents and paths through a file', async () => {
    for (const path of ['/home/dir/missing.txt', '/home/nowhere/x.txt', '/home/dir/plain.txt/inner', '/nothing', '/home/dir/.DS_Store']) {
      const answer = await dav('PROPFIND', path, { depth: '0' });
      expect(answer.status, path).toBe(404);
      expect(answer.text).not.toContain('multistatus');
    }
  });

  it('asks for credentials (401) from an anonymous PROPFIND', async () => {
    const answer = await dav('PROPFIND', '/', { depth: '0' }, undefined, '');
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toMatch(/^Basic /);
  });

  it('answers 400 to malformed XML, a DOCTYPE and a foreign root element, and keeps serving', async () => {
    const bodies = [
      '<D:propfind xmlns:D="DAV:"><D:prop>',
      '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><bar:x xmlns:bar=""/></D:prop></D:propfind>',
      '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "boom">]><D:propfind xmlns:D="DAV:"><D:prop>&e;</D:prop></D:propfind>',
      '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"/>',
      'not xml at all',
    ];
    for (const body of bodies) {
      const answer = await dav('PROPFIND', '/home/dir/', { depth: '1', 'content-type': 'application/xml' }, body);
      expect(answer.status, body).toBe(400);
    }
    const after = await propfind('/home/dir/', '0');
    expect(after[0]?.href).toBe('/home/dir/');
  });

  it('answers the rclone listing body (owncloud props asked) with one 2xx propstat per item, under the requested href', async () => {
    const rcloneBody =
      '<?xml version="1.0"?>\n<d:propfind  xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns">\n <d:prop>\n' +
      '  <d:displayname />\n  <d:getlastmodified />\n  <d:getcontentlength />\n  <d:resourcetype />\n  <d:getcontenttype />\n' +
      '  <oc:checksums />\n  <oc:permissions />\n </d:prop>\n</d:propfind>\n';
    const responses = await propfind('/home/dir/', '1', rcloneBody, { 'user-agent': 'rclone/v1.60.0', 'content-type': 'application/xml' });
    for (const response of responses) {
      expect(response.href.startsWith('/home/dir/')).toBe(true);
      expect(davProp(response, 'resourcetype').status).toBe(200);
      expect(davProp(response, 'getlastmodified').text).toMatch(HTTP_DATE);
      // Files carry the checksums the store computed (checksums.test.ts checks the values), folders none.
      const isFolder = response.href.endsWith('/');
      expect(response.props.get('{http://owncloud.org/ns}checksums')?.status).toBe(isFolder ? 404 : 200);
      expect(response.props.get('{http://owncloud.org/ns}permissions')?.status).toBe(200);
    }
    const sub = responseFor(responses, '/home/dir/sub/');
    expect(davProp(sub, 'resourcetype').node.children[0]?.local).toBe('collection');
  });

  it('reports quota from the profile: used and available bytes, a large available value when unlimited, none on files', async () => {
    const quotaBody = propBody('<D:quota-available-bytes/><D:quota-used-bytes/>');
    const limited = await f.newDavUser({ quotaBytes: 1_000_000 });
    await uploadFile(f.client, limited.session, 'home', 'data.bin', Buffer.alloc(1234, 1));
    const [root] = parseMultistatus((await dav('PROPFIND', '/', { depth: '0' }, quotaBody, limited.auth)).text);
    if (!root) throw new Error('no response');
    const profile = await f.client.currentUser(limited.session);
    expect(profile.diskUsedBytes).toBe(1234);
    expect(davProp(root, 'quota-used-bytes')).toMatchObject({ status: 200, text: '1234' });
    expect(davProp(root, 'quota-available-bytes')).toMatchObject({ status: 200, text: String(1_000_000 - 1234) });

    const [unlimited] = await propfind('/home/', '0', quotaBody);
    if (!unlimited) throw new Error('no response');
    expect(davProp(unlimited, 'quota-available-bytes').text).toBe(String(UNLIMITED_AVAILABLE_BYTES));
    expect(Number(davProp(unlimited, 'quota-available-bytes').text)).toBeGreaterThan(2 ** 40);

    const [file] = await propfind('/home/dir/plain.txt', '0', quotaBody);
    if (!file) throw new Error('no response');
    expect(davProp(file, 'quota-available-bytes').status).toBe(404);
    expect(davProp(file, 'quota-used-bytes').status).toBe(404);
  });

  it('leaves quota out for macOS 15.4+ (Darwin 24.4) only when quotaForNewMacOS is off', async () => {
    const quotaBody = propBody('<D:quota-available-bytes/><D:quota-used-bytes/>');
    const services = f.bridge.services;
    const status = async (ua: string) => {
      const [root] = await propfind('/', '0', quotaBody, { 'user-agent': ua });
      return root && davProp(root, 'quota-used-bytes').status;
    };
    try {
      services.quotaForNewMacOS = false;
      expect(await status(FINDER_UA)).toBe(404);
      expect(await status('WebDAVFS/3.0.0 (03008000) Darwin/25.0.0 (arm64)')).toBe(404);
      expect(await status('WebDAVFS/3.0.0 (03008000) Darwin/24.3.0 (arm64)')).toBe(200);
      expect(await status('rclone/v1.60.0')).toBe(200);
      services.quotaForNewMacOS = true;
      expect(await status(FINDER_UA)).toBe(200);
    } finally {
      services.quotaForNewMacOS = true;
    }
  });

  it('returns dead properties with their values in prop and allprop, and their names in propname', async () => {
    const patch =
      '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="http://example.com/ns/"><D:set><D:prop>' +
      '<Z:colour>red</Z:colour><Z:nested><Z:inner a="1">deep</Z:inner></Z:nested></D:prop></D:set></D:propertyupdate>';
    expect((await dav('PROPPATCH', '/home/dir/plain.txt', {}, patch)).status).toBe(207);
    const [asked] = await propfind('/home/dir/plain.txt', '0', propBody('<Z:colour/><Z:absent/>', ' xmlns:Z="http://example.com/ns/"'));
    if (!asked) throw new Error('no response');
    expect(asked.props.get('{http://example.com/ns/}colour')).toMatchObject({ status: 200, text: 'red' });
    expect(asked.props.get('{http://example.com/ns/}absent')?.status).toBe(404);
    const [all] = await propfind('/home/dir/plain.txt', '0');
    const nested = all?.props.get('{http://example.com/ns/}nested');
    expect(nested?.status).toBe(200);
    expect(nested?.node.children[0]).toMatchObject({ ns: 'http://example.com/ns/', local: 'inner', text: 'deep' });
    const [names] = await propfind('/home/dir/plain.txt', '0', '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:propname/></D:propfind>');
    expect(names?.props.get('{http://example.com/ns/}colour')).toMatchObject({ status: 200, text: '' });
  });

  it('shows a lock in lockdiscovery, and a repeated listing follows dead property, mtime, lock and content changes', async () => {
    const listing = async () => propfind('/home/dir/', '1');
    expect(responseFor(await listing(), '/home/dir/sub/').props.has('{urn:t}tag')).toBe(false);

    const patch = (prop: string) => `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop>${prop}</D:prop></D:set></D:propertyupdate>`;
    await dav('PROPPATCH', '/home/dir/sub/', {}, patch('<x:tag xmlns:x="urn:t">one</x:tag>'));
    expect(responseFor(await listing(), '/home/dir/sub/').props.get('{urn:t}tag')?.text).toBe('one');
    await dav('PROPPATCH', '/home/dir/sub/', {}, patch('<x:tag xmlns:x="urn:t">two</x:tag>'));
    expect(responseFor(await listing(), '/home/dir/sub/').props.get('{urn:t}tag')?.text).toBe('two');

    await dav('PROPPATCH', '/home/dir/empty.bin', {}, patch('<Z:Win32LastModifiedTime xmlns:Z="urn:schemas-microsoft-com:">Mon, 02 Mar 2015 09:08:07 GMT</Z:Win32LastModifiedTime>'));
    expect(davProp(responseFor(await listing(), '/home/dir/empty.bin'), 'getlastmodified').text).toBe('Mon, 02 Mar 2015 09:08:07 GMT');

    const lockBody =
      '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype>' +
      '<D:owner><D:href>http://example.com/me</D:href></D:owner></D:lockinfo>';
    const locked = await dav('LOCK', '/home/dir/plain.txt', { timeout: 'Second-600', depth: '0' }, lockBody);
    expect(locked.status).toBe(200);
    const token = String(locked.headers['lock-token']).replace(/^<|>$/g, '');
    const discovery = davProp(responseFor(await listing(), '/home/dir/plain.txt'), 'lockdiscovery').node;
    const active = discovery.children[0];
    expect(active?.local).toBe('activelock');
    expect(active?.children.find((c) => c.local === 'locktoken')?.text).toBe(token);
    expect(active?.children.find((c) => c.local === 'timeout')?.text).toMatch(/^Second-(600|59\d)$/);
    expect(active?.children.find((c) => c.local === 'lockroot')?.text).toBe('/home/dir/plain.txt');
    expect(active?.children.find((c) => c.local === 'owner')?.text).toBe('http://example.com/me');
    expect((await dav('UNLOCK', '/home/dir/plain.txt', { 'lock-token': `<${token}>` })).status).toBe(204);
    expect(davProp(responseFor(await listing(), '/home/dir/plain.txt'), 'lockdiscovery').node.children).toEqual([]);

    expect((await dav('PUT', '/home/dir/added.txt', { 'content-type': 'text/plain' }, 'new file')).status).toBe(201);
    expect(davProp(responseFor(await listing(), '/home/dir/added.txt'), 'getcontentlength').text).toBe('8');
  });

  it('replays Finder steps 1-5: OPTIONS, stat and quota of /, the probe storm, a listing with appledoubleheader', async () => {
    const finder = { 'user-agent': FINDER_UA, 'content-type': 'text/xml' };
    const options = await dav('OPTIONS', '/', { 'user-agent': FINDER_UA }, undefined, '');
    expect(options.status).toBe(200);
    expect(String(options.headers.dav)).toMatch(/\b2\b/);

    const [stat] = await propfind('/', '0', propBody('<D:getlastmodified/><D:getcontentlength/><D:creationdate/><D:resourcetype/>'), finder);
    if (!stat) throw new Error('no response');
    expect(stat.href).toBe('/');
    expect(davProp(stat, 'resourcetype').node.children[0]?.local).toBe('collection');
    expect(davProp(stat, 'getlastmodified').text).toMatch(HTTP_DATE);
    expect(davProp(stat, 'creationdate').text).toMatch(RFC3339);

    const [quota] = await propfind('/', '0', propBody('<D:quota-available-bytes/><D:quota-used-bytes/><D:quota/><D:quotaused/>'), finder);
    if (!quota) throw new Error('no response');
    expect(davProp(quota, 'quota-available-bytes').status).toBe(200);
    expect(Number(davProp(quota, 'quota-available-bytes').text)).toBeGreaterThan(0);
    expect(davProp(quota, 'quota-used-bytes').status).toBe(200);
    expect(davProp(quota, 'quota').status).toBe(404);

    for (const path of ['/._.', '/.DS_Store', '/.metadata_never_index', '/.ql_disablethumbnails', '/Backups.backupdb', '/mach_kernel', '/.Spotlight-V100', '/home/dir/._plain.txt']) {
      const answer = await dav('PROPFIND', path, { ...finder, depth: '0' }, propBody('<D:resourcetype/>'));
      expect(answer.status, path).toBe(404);
    }

    const listing = await propfind(
      '/home/dir/',
      '1',
      propBody('<D:getlastmodified/><D:getcontentlength/><D:creationdate/><D:resourcetype/><A:appledoubleheader/>', ' xmlns:A="http://www.apple.com/webdav_fs/props/"'),
      finder,
    );
    expect(listing[0]?.href).toBe('/home/dir/');
    for (const response of listing) {
      expect(response.props.get('{http://www.apple.com/webdav_fs/props/}appledoubleheader')?.status).toBe(404);
      expect(davProp(response, 'getlastmodified').status).toBe(200);
    }
    expect(davProp(responseFor(listing, '/home/dir/plain.txt'), 'getcontentlength').text).toBe('5');
  });
});

describe('PROPFIND costs (a counting proxy between bridge and store)', () => {
  let f: BridgeFixture;
  let auth: string;
  let bigId: string;
  const ENTRIES = 2000;

  beforeAll(async () => {
    f = await bridgeFixture({ viaProxy: true, bridgeFlags: { cacheTtlMs: 600_000 } });
    const user = await f.newDavUser();
    auth = user.auth;
    bigId = await createFolder(f.client, user.session, 'home', 'big');
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < ENTRIES) {
          const i = next++;
          if (i % 100 === 0) await uploadFile(f.client, user.session, bigId, `file ${i}.txt`, `content ${i}`);
          else await f.client.createFolder(user.session, nodeId(bigId), `folder ${i}`);
        }
      }),
    );
  }, 120_000);
  afterAll(async () => {
    await f.close();
  });

  function propfindStatus(path: string, depth: string, body?: string): Promise<DavAnswer> {
    return davRequest(f.davUrl, 'PROPFIND', path, { auth, headers: { depth }, body });
  }

  it('lists a 2,000-entry folder with exactly one dirlist and no per-child call, then from the cache with none', async () => {
    const proxy = f.proxy;
    if (!proxy) throw new Error('no proxy');
    await propfindStatus('/home/', '1');
    proxy.reset();
    const cold = await propfindStatus('/home/big/', '1');
    expect(cold.status).toBe(207);
    const responses = parseMultistatus(cold.text);
    expect(responses.length).toBe(ENTRIES + 1);
    expect(proxy.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /api/nodes/${bigId}/dirlist`]);

    proxy.reset();
    const warm = await propfindStatus('/home/big/', '1', propBody('<D:displayname/><D:getlastmodified/><D:getcontentlength/><D:resourcetype/>'));
    expect(warm.status).toBe(207);
    expect(parseMultistatus(warm.text).length).toBe(ENTRIES + 1);
    expect(proxy.requests).toEqual([]);
  });

  it('reads dead properties and client mtimes for a whole listing in one batch each', async () => {
    const props = f.bridge.services.props;
    const calls: string[] = [];
    const patch = '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><x:tag xmlns:x="urn:t">v</x:tag></D:prop></D:set></D:propertyupdate>';
    const set = await davRequest(f.davUrl, 'PROPPATCH', '/home/big/folder%201/', { auth, body: patch });
    expect(set.status).toBe(207);
    const originals = { list: props.list, listMany: props.listMany, get: props.get, getMtime: props.getMtime, getMtimes: props.getMtimes };
    for (const name of Object.keys(originals) as Array<keyof typeof originals>) {
      const original = originals[name] as (...args: unknown[]) => unknown;
      Object.assign(props, { [name]: (...args: unknown[]) => (calls.push(name), original.apply(props, args)) });
    }
    try {
      const answer = await propfindStatus('/home/big/', '1');
      expect(answer.status).toBe(207);
      const folder = responseFor(parseMultistatus(answer.text), '/home/big/folder%201/');
      expect(folder.props.get('{urn:t}tag')?.text).toBe('v');
      expect(calls.sort()).toEqual(['getMtimes', 'listMany']);
    } finally {
      for (const name of Object.keys(originals) as Array<keyof typeof originals>) delete (props as unknown as Record<string, unknown>)[name];
    }
  });

  it('answers the Finder probe storm after a listing without any store request', async () => {
    const proxy = f.proxy;
    if (!proxy) throw new Error('no proxy');
    await propfindStatus('/home/big/', '1');
    proxy.reset();
    for (const path of ['/home/big/._file%200.txt', '/home/big/._folder%201', '/home/big/.DS_Store', '/home/big/Thumbs.db', '/home/big/desktop.ini']) {
      const answer = await propfindStatus(path, '0');
      expect(answer.status, path).toBe(404);
    }
    expect(proxy.requests).toEqual([]);

    // At the root even a cold cache costs nothing: only the fixed top-level names live there.
    f.bridge.services.cache.clear();
    for (const path of ['/._.', '/.DS_Store', '/Backups.backupdb', '/mach_kernel', '/.metadata_never_index', '/.Spotlight-V100', '/.localized']) {
      const answer = await propfindStatus(path, '0');
      expect(answer.status, path).toBe(404);
    }
    expect(proxy.requests).toEqual([]);
  });
});

describe('PROPFIND against a store without user profiles (edition 1.0)', () => {
  let f: BridgeFixture;
  beforeAll(async () => {
    f = await bridgeFixture({ edition: '1.0' });
  });
  afterAll(async () => {
    await f.close();
  });

  it('answers the quota properties with 404 and every other property as usual', async () => {
    // Edition 1.0 has no user administration either: the administrator is the one account.
    const res = await davRequest(f.davUrl, 'PROPFIND', '/', {
      auth: basicAuth('admin', f.store.adminPassword),
      headers: { depth: '0' },
      body: propBody('<D:quota-available-bytes/><D:quota-used-bytes/><D:resourcetype/>'),
    });
    expect(res.status).toBe(207);
    const [root] = parseMultistatus(res.text);
    if (!root) throw new Error('no response');
    expect(davProp(root, 'quota-available-bytes').status).toBe(404);
    expect(davProp(root, 'quota-used-bytes').status).toBe(404);
    expect(davProp(root, 'resourcetype').status).toBe(200);
  });
});
