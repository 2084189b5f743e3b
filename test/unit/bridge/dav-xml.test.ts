import { PassThrough } from 'node:stream';
import { SaxesParser, type SaxesTagNS } from 'saxes';
import { describe, expect, it } from 'vitest';
import {
  DAV_NS,
  DavXmlError,
  MultistatusWriter,
  SUPPORTED_LOCK_INNER_XML,
  errorBody,
  errorXml,
  escapeXmlAttr,
  escapeXmlText,
  lockDiscoveryInnerXml,
  lockResponseBody,
  parseLockInfo,
  parsePropfind,
  parseProppatch,
  propKey,
  proppatchMultistatus,
  readBody,
  statusLine,
  type DavXmlErrorKind,
  type PropPatchInstruction,
} from '../../../src/bridge/dav-xml.js';

/** A namespace-resolved view of a document, for asserting what a client's parser would see. */
interface Node {
  ns: string;
  local: string;
  attrs: Record<string, string>;
  children: Array<Node | string>;
}

function parseXml(xml: string): Node {
  const parser = new SaxesParser({ xmlns: true, position: false });
  const stack: Node[] = [];
  let root: Node | undefined;
  parser.on('opentag', (tag: SaxesTagNS) => {
    const attrs: Record<string, string> = {};
    for (const a of Object.values(tag.attributes)) if (a.uri !== 'http://www.w3.org/2000/xmlns/') attrs[`{${a.uri}}${a.local}`] = a.value;
    const node: Node = { ns: tag.uri, local: tag.local, attrs, children: [] };
    const parent = stack[stack.length - 1];
    if (parent) parent.children.push(node);
    else root = node;
    stack.push(node);
  });
  parser.on('closetag', () => stack.pop());
  parser.on('text', (t) => stack[stack.length - 1]?.children.push(t));
  parser.write(xml).close();
  if (!root) throw new Error('no root');
  return root;
}

function elements(node: Node, ns?: string, local?: string): Node[] {
  return node.children.filter((c): c is Node => typeof c !== 'string' && (ns === undefined || c.ns === ns) && (local === undefined || c.local === local));
}

function child(node: Node, ns: string, local: string): Node {
  const found = elements(node, ns, local)[0];
  if (!found) throw new Error(`no {${ns}}${local} in {${node.ns}}${node.local}`);
  return found;
}

function text(node: Node): string {
  return node.children.map((c) => (typeof c === 'string' ? c : text(c))).join('');
}

function errorKind(fn: () => unknown): DavXmlErrorKind | 'no error' {
  try {
    fn();
    return 'no error';
  } catch (err) {
    if (err instanceof DavXmlError) return err.kind;
    throw err;
  }
}

const PROPPATCH_HEAD = '<?xml version="1.0" encoding="utf-8"?>\n<D:propertyupdate xmlns:D="DAV:">';

describe('readBody', () => {
  it('collects a body', async () => {
    const s = new PassThrough();
    const body = readBody(s, 100);
    s.write('<a>');
    s.end('</a>');
    expect((await body).toString()).toBe('<a></a>');
  });

  it('rejects as soon as the limit is passed, draining the rest', async () => {
    const s = new PassThrough();
    const body = readBody(s, 10);
    s.write('x'.repeat(11));
    await expect(body).rejects.toMatchObject({ kind: 'too-large' });
    s.end('y'.repeat(1000));
  });

  it('rejects when the stream fails', async () => {
    const s = new PassThrough();
    const body = readBody(s, 100);
    s.destroy(new Error('reset'));
    await expect(body).rejects.toMatchObject({ kind: 'aborted' });
  });
});

describe('parsePropfind', () => {
  it('reads an empty body as allprop (RFC 4918 §9.1)', () => {
    expect(parsePropfind('')).toEqual({ kind: 'allprop', include: [] });
    expect(parsePropfind(Buffer.from(' \r\n'))).toEqual({ kind: 'allprop', include: [] });
  });

  it('reads allprop with include', () => {
    const body = '<D:propfind xmlns:D="DAV:"><D:allprop/><D:include><D:supportedlock/><Q:x xmlns:Q="urn:q"/></D:include></D:propfind>';
    expect(parsePropfind(body)).toEqual({
      kind: 'allprop',
      include: [
        { ns: DAV_NS, local: 'supportedlock' },
        { ns: 'urn:q', local: 'x' },
      ],
    });
  });

  it('reads propname', () => {
    expect(parsePropfind('<propfind xmlns="DAV:"><propname/></propfind>')).toEqual({ kind: 'propname' });
  });

  it("reads Finder's prop list with foreign and null namespaces, once each", () => {
    const body =
      '<?xml version="1.0" encoding="utf-8"?><D:propfind xmlns:D="DAV:"><D:prop xmlns:A="http://www.apple.com/webdav_fs/props/">' +
      '<D:getlastmodified/><D:getcontentlength/><D:creationdate/><D:resourcetype/><A:appledoubleheader/>' +
      '<D:quota-available-bytes/><nons xmlns=""/><D:resourcetype/></D:prop></D:propfind>';
    const req = parsePropfind(body);
    expect(req.kind).toBe('prop');
    if (req.kind !== 'prop') return;
    expect(req.props.map(propKey)).toEqual([
      '{DAV:}getlastmodified',
      '{DAV:}getcontentlength',
      '{DAV:}creationdate',
      '{DAV:}resourcetype',
      '{http://www.apple.com/webdav_fs/props/}appledoubleheader',
      '{DAV:}quota-available-bytes',
      '{}nons',
    ]);
  });

  it('ignores unknown elements and reads a bare propfind as allprop', () => {
    expect(parsePropfind('<D:propfind xmlns:D="DAV:"><X:y xmlns:X="urn:x"/></D:propfind>')).toEqual({ kind: 'allprop', include: [] });
  });

  it('refuses prop together with allprop', () => {
    expect(errorKind(() => parsePropfind('<D:propfind xmlns:D="DAV:"><D:allprop/><D:prop><D:a/></D:prop></D:propfind>'))).toBe('invalid');
  });

  it('answers malformed XML with a typed error (litmus propfind_invalid, propfind_invalid2)', () => {
    expect(errorKind(() => parsePropfind('<foo>'))).toBe('malformed');
    expect(errorKind(() => parsePropfind('<D:propfind xmlns:D="DAV:"><D:prop><bar:foo xmlns:bar=""/></D:prop></D:propfind>'))).toBe('malformed');
    expect(errorKind(() => parsePropfind('<D:propfind><D:prop/></D:propfind>'))).toBe('malformed');
    expect(errorKind(() => parsePropfind('<a/><b/>'))).toBe('malformed');
    expect(errorKind(() => parsePropfind('just text'))).toBe('malformed');
    expect(errorKind(() => parsePropfind('<a>&undefined;</a>'))).toBe('malformed');
  });

  it('refuses a wrong root element', () => {
    expect(errorKind(() => parsePropfind('<D:propertyupdate xmlns:D="DAV:"/>'))).toBe('invalid');
    expect(errorKind(() => parsePropfind('<propfind/>'))).toBe('invalid');
  });

  it('refuses any DOCTYPE: no external entities, no entity expansion', () => {
    const xxe = '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]><D:propfind xmlns:D="DAV:"><D:prop><D:a>&x;</D:a></D:prop></D:propfind>';
    const laughs = '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><D:propfind xmlns:D="DAV:">&b;</D:propfind>';
    expect(errorKind(() => parsePropfind(xxe))).toBe('malformed');
    expect(errorKind(() => parsePropfind(laughs))).toBe('malformed');
  });

  it('enforces size, depth and element-count limits', () => {
    const big = `<D:propfind xmlns:D="DAV:"><!--${'x'.repeat(1024 * 1024)}--></D:propfind>`;
    expect(errorKind(() => parsePropfind(big))).toBe('too-large');
    expect(errorKind(() => parsePropfind(Buffer.from(big)))).toBe('too-large');
    expect(errorKind(() => parsePropfind('<a>'.repeat(100) + '</a>'.repeat(100)))).toBe('too-complex');
    const many = `<D:propfind xmlns:D="DAV:"><D:prop>${'<D:a/>'.repeat(30_000)}</D:prop></D:propfind>`;
    expect(errorKind(() => parsePropfind(many))).toBe('too-complex');
  });

  it('decodes byte order marks and declared encodings, and refuses invalid bytes', () => {
    const xml = '<D:propfind xmlns:D="DAV:"><D:prop><D:caf\u00e9/></D:prop></D:propfind>';
    const expected = { kind: 'prop', props: [{ ns: DAV_NS, local: 'caf\u00e9' }] };
    expect(parsePropfind(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(xml)]))).toEqual(expected);
    expect(parsePropfind(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(xml, 'utf16le')]))).toEqual(expected);
    expect(parsePropfind(Buffer.from(`<?xml version="1.0" encoding="ISO-8859-1"?>${xml}`, 'latin1'))).toEqual(expected);
    expect(errorKind(() => parsePropfind(Buffer.from(`<?xml version="1.0" encoding="x-klingon"?>${xml}`)))).toBe('unsupported-encoding');
    expect(errorKind(() => parsePropfind(Buffer.from([0x3c, 0x61, 0xff, 0x3e])))).toBe('malformed');
  });
});

describe('parseProppatch', () => {
  it("reads Windows' Win32 properties, each as a self-contained element with its text", () => {
    const body =
      '<?xml version="1.0" encoding="utf-8" ?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:schemas-microsoft-com:"><D:set><D:prop>' +
      '<Z:Win32CreationTime>Mon, 06 Jan 2025 10:00:00 GMT</Z:Win32CreationTime>' +
      '<Z:Win32LastModifiedTime>Tue, 07 Jan 2025 11:22:33 GMT</Z:Win32LastModifiedTime>' +
      '<Z:Win32FileAttributes>00000020</Z:Win32FileAttributes>' +
      '</D:prop></D:set></D:propertyupdate>';
    const ops = parseProppatch(body);
    expect(ops.map((o) => o.op)).toEqual(['set', 'set', 'set']);
    expect(ops[1]).toEqual({
      op: 'set',
      name: { ns: 'urn:schemas-microsoft-com:', local: 'Win32LastModifiedTime' },
      xml: '<Z:Win32LastModifiedTime xmlns:Z="urn:schemas-microsoft-com:">Tue, 07 Jan 2025 11:22:33 GMT</Z:Win32LastModifiedTime>',
      text: 'Tue, 07 Jan 2025 11:22:33 GMT',
    });
  });

  it('keeps several set and remove blocks in document order (two sets kill stock webdav-server)', () => {
    const body =
      `${PROPPATCH_HEAD}<D:set><D:prop><p:a xmlns:p="urn:p">1</p:a></D:prop></D:set>` +
      '<D:remove><D:prop><p:b xmlns:p="urn:p"/></D:prop></D:remove>' +
      '<D:set><D:prop><p:a xmlns:p="urn:p">2</p:a><p:c xmlns:p="urn:p"/></D:prop></D:set></D:propertyupdate>';
    const ops = parseProppatch(body);
    expect(ops.map((o) => `${o.op} ${propKey(o.name)}`)).toEqual(['set {urn:p}a', 'remove {urn:p}b', 'set {urn:p}a', 'set {urn:p}c']);
    expect(ops[3]).toMatchObject({ xml: '<p:c xmlns:p="urn:p"/>', text: '' });
  });

  it('keeps a property in no namespace (litmus propnullns)', () => {
    const [op] = parseProppatch(`${PROPPATCH_HEAD}<D:set><D:prop><nonamespace xmlns="">randomvalue</nonamespace></D:prop></D:set></D:propertyupdate>`);
    expect(op).toMatchObject({ name: { ns: '', local: 'nonamespace' }, xml: '<nonamespace>randomvalue</nonamespace>' });
  });

  it('keeps high Unicode values byte for byte (litmus prophighunicode)', () => {
    const value = '\u{10000}\u{10FFFD}\u{1F600}é\u4e2d';
    const [op] = parseProppatch(Buffer.from(`${PROPPATCH_HEAD}<D:set><D:prop><t:high xmlns:t="http://example.com/neon/litmus/">${value}</t:high></D:prop></D:set></D:propertyupdate>`));
    expect(op).toMatchObject({ text: value, xml: `<t:high xmlns:t="http://example.com/neon/litmus/">${value}</t:high>` });
  });

  it('declares every namespace a value uses, including nested, default and attribute ones (litmus propvalnspace)', () => {
    const body =
      '<D:propertyupdate xmlns:D="DAV:" xmlns:t="http://example.com/neon/litmus/" xmlns:q="urn:q" xmlns="urn:default"><D:set><D:prop>' +
      '<t:valnspace><foo q:attr="v &amp; &quot;w&quot;"><bar xmlns="urn:inner">x</bar><q:baz/></foo><plain xmlns="">y</plain></t:valnspace>' +
      '</D:prop></D:set></D:propertyupdate>';
    const [op] = parseProppatch(body);
    expect(op?.op).toBe('set');
    if (op?.op !== 'set') return;
    expect(op.xml).toBe(
      '<t:valnspace xmlns:t="http://example.com/neon/litmus/"><foo xmlns="urn:default" xmlns:q="urn:q" q:attr="v &amp; &quot;w&quot;">' +
        '<bar xmlns="urn:inner">x</bar><q:baz/></foo><plain>y</plain></t:valnspace>',
    );
    const reparsed = parseXml(op.xml);
    const foo = child(reparsed, 'urn:default', 'foo');
    expect(foo.attrs['{urn:q}attr']).toBe('v & "w"');
    expect(child(foo, 'urn:inner', 'bar').children).toEqual(['x']);
    expect(child(foo, 'urn:q', 'baz')).toBeDefined();
    expect(child(reparsed, '', 'plain').children).toEqual(['y']);
  });

  it('keeps declarations written inside the value even when unused, and xml:lang in effect', () => {
    const body = `<D:propertyupdate xmlns:D="DAV:" xml:lang="de"><D:set><D:prop><x:p xmlns:x="urn:x" xmlns:xs="urn:xs">xs:string</x:p></D:prop></D:set></D:propertyupdate>`;
    const [op] = parseProppatch(body);
    expect(op).toMatchObject({ xml: '<x:p xmlns:x="urn:x" xmlns:xs="urn:xs" xml:lang="de">xs:string</x:p>' });
  });

  it('keeps whitespace, CDATA, markup characters and carriage returns as values', () => {
    const body = `${PROPPATCH_HEAD}<D:set><D:prop><x:p xmlns:x="urn:x">  a &lt;b&gt; &amp; <![CDATA[<c>]]>&#13;\n </x:p></D:prop></D:set></D:propertyupdate>`;
    const [op] = parseProppatch(body);
    expect(op).toMatchObject({ text: '  a <b> & <c>\r\n ', xml: '<x:p xmlns:x="urn:x">  a &lt;b&gt; &amp; &lt;c&gt;&#13;\n </x:p>' });
    if (op?.op === 'set') expect(text(parseXml(op.xml))).toBe('  a <b> & <c>\r\n ');
  });

  it('reads many namespaces at once (litmus propmanyns)', () => {
    const props = Array.from({ length: 50 }, (_, i) => `<n${i}:p${i} xmlns:n${i}="http://example.com/ns/${i}">v${i}</n${i}:p${i}>`).join('');
    const ops = parseProppatch(`${PROPPATCH_HEAD}<D:set><D:prop>${props}</D:prop></D:set></D:propertyupdate>`);
    expect(ops).toHaveLength(50);
    expect(ops[49]).toMatchObject({ name: { ns: 'http://example.com/ns/49', local: 'p49' }, xml: '<n49:p49 xmlns:n49="http://example.com/ns/49">v49</n49:p49>' });
  });

  it("reads Cyberduck's timestamps", () => {
    const body = '<D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><S:lastmodified xmlns:S="SAR:">Wed, 01 Jan 2020 00:00:00 GMT</S:lastmodified></D:prop></D:set></D:propertyupdate>';
    expect(parseProppatch(body)[0]).toMatchObject({ name: { ns: 'SAR:', local: 'lastmodified' }, text: 'Wed, 01 Jan 2020 00:00:00 GMT' });
  });

  it('refuses empty, property-less and malformed updates', () => {
    expect(errorKind(() => parseProppatch(''))).toBe('invalid');
    expect(errorKind(() => parseProppatch(`${PROPPATCH_HEAD}</D:propertyupdate>`))).toBe('invalid');
    expect(errorKind(() => parseProppatch(`${PROPPATCH_HEAD}<D:set/></D:propertyupdate>`))).toBe('invalid');
    expect(errorKind(() => parseProppatch(`${PROPPATCH_HEAD}<D:set><D:prop/></D:set></D:propertyupdate>`))).toBe('invalid');
    expect(errorKind(() => parseProppatch('<D:propfind xmlns:D="DAV:"/>'))).toBe('invalid');
    expect(errorKind(() => parseProppatch(`${PROPPATCH_HEAD}<D:set><D:prop><x/></D:set></D:propertyupdate>`))).toBe('malformed');
  });
});

describe('parseLockInfo', () => {
  it("reads Finder's exclusive lock with an owner href", () => {
    const body =
      '<?xml version="1.0" encoding="utf-8"?>\n<D:lockinfo xmlns:D="DAV:">\n<D:lockscope><D:exclusive/></D:lockscope>\n' +
      '<D:locktype><D:write/></D:locktype>\n<D:owner>\n<D:href>http://www.apple.com/webdav_fs/</D:href>\n</D:owner>\n</D:lockinfo>';
    expect(parseLockInfo(body)).toEqual({
      scope: 'exclusive',
      type: 'write',
      ownerXml: '<D:owner xmlns:D="DAV:">\n<D:href>http://www.apple.com/webdav_fs/</D:href>\n</D:owner>',
    });
  });

  it('reads a shared lock with a text owner and none', () => {
    const shared = '<lockinfo xmlns="DAV:"><lockscope><shared/></lockscope><locktype><write/></locktype><owner>litmus test suite</owner></lockinfo>';
    expect(parseLockInfo(shared)).toEqual({ scope: 'shared', type: 'write', ownerXml: '<owner xmlns="DAV:">litmus test suite</owner>' });
    const bare = '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';
    expect(parseLockInfo(bare)?.ownerXml).toBeUndefined();
  });

  it('reads an empty body as a refresh', () => {
    expect(parseLockInfo('')).toBeUndefined();
  });

  it('refuses incomplete or unsupported lock requests', () => {
    expect(errorKind(() => parseLockInfo('<D:lockinfo xmlns:D="DAV:"><D:locktype><D:write/></D:locktype></D:lockinfo>'))).toBe('invalid');
    expect(errorKind(() => parseLockInfo('<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope></D:lockinfo>'))).toBe('invalid');
    expect(errorKind(() => parseLockInfo('<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:other/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>'))).toBe('invalid');
    expect(errorKind(() => parseLockInfo('<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:shared/></D:lockscope><D:locktype><D:read/></D:locktype></D:lockinfo>'))).toBe('invalid');
    expect(errorKind(() => parseLockInfo('<D:lockinfo xmlns:D="DAV:">'))).toBe('malformed');
  });
});

describe('escaping', () => {
  it('escapes markup characters and keeps CR', () => {
    expect(escapeXmlText('a & b < c > d\r\n')).toBe('a &amp; b &lt; c &gt; d&#13;\n');
    expect(escapeXmlAttr('"x"\t&\n')).toBe('&quot;x&quot;&#9;&amp;&#10;');
    expect(escapeXmlText('plain text é 😀')).toBe('plain text é 😀');
  });

  it('replaces characters XML cannot carry', () => {
    expect(escapeXmlText('a\u0001b\uFFFEc\uD800d')).toBe('a\uFFFDb\uFFFDc\uFFFDd');
    expect(escapeXmlText('😀')).toBe('😀');
  });

  it('writes status lines', () => {
    expect(statusLine(200)).toBe('HTTP/1.1 200 OK');
    expect(statusLine(424)).toBe('HTTP/1.1 424 Failed Dependency');
    expect(statusLine(507)).toBe('HTTP/1.1 507 Insufficient Storage');
  });
});

describe('MultistatusWriter', () => {
  it('writes propstat groups with D: for DAV: and root-declared prefixes for other namespaces', () => {
    const w = new MultistatusWriter();
    w.addPropstats('/home/a%20b.txt', [
      {
        status: 200,
        props: [
          { name: { ns: DAV_NS, local: 'getcontentlength' }, text: '12' },
          { name: { ns: DAV_NS, local: 'resourcetype' } },
          { name: { ns: DAV_NS, local: 'displayname' }, text: 'a b & <c>.txt' },
          { name: { ns: 'urn:x', local: 'p' }, elementXml: '<x:p xmlns:x="urn:x">stored</x:p>' },
          { name: { ns: '', local: 'nons' }, text: 'v' },
        ],
      },
      { status: 404, props: [{ name: { ns: 'http://www.apple.com/webdav_fs/props/', local: 'appledoubleheader' } }, { name: { ns: 'urn:schemas-microsoft-com:', local: 'Win32FileAttributes' } }] },
      { status: 403, props: [] },
    ]);
    const xml = w.toString();
    expect(xml.startsWith('<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:" ')).toBe(true);
    expect(xml).toContain('xmlns:ns0="http://www.apple.com/webdav_fs/props/"');
    expect(xml).toContain('xmlns:Z="urn:schemas-microsoft-com:"');
    expect(xml).toContain('<ns0:appledoubleheader/>');
    expect(xml).not.toContain('HTTP/1.1 403');
    expect(w.responseCount).toBe(1);

    const doc = parseXml(xml);
    expect(doc).toMatchObject({ ns: DAV_NS, local: 'multistatus' });
    const response = child(doc, DAV_NS, 'response');
    expect(text(child(response, DAV_NS, 'href'))).toBe('/home/a%20b.txt');
    const [ok, missing] = elements(response, DAV_NS, 'propstat');
    const okProp = child(ok as Node, DAV_NS, 'prop');
    expect(text(child(okProp, DAV_NS, 'displayname'))).toBe('a b & <c>.txt');
    expect(text(child(okProp, 'urn:x', 'p'))).toBe('stored');
    expect(text(child(okProp, '', 'nons'))).toBe('v');
    expect(text(child(ok as Node, DAV_NS, 'status'))).toBe('HTTP/1.1 200 OK');
    expect(text(child(missing as Node, DAV_NS, 'status'))).toBe('HTTP/1.1 404 Not Found');
    expect(elements(child(missing as Node, DAV_NS, 'prop')).map((n) => propKey(n))).toEqual([
      '{http://www.apple.com/webdav_fs/props/}appledoubleheader',
      '{urn:schemas-microsoft-com:}Win32FileAttributes',
    ]);
  });

  it('writes inner XML such as resourcetype and lockdiscovery, and error and description elements', () => {
    const w = new MultistatusWriter();
    w.addPropstats('/home/dir/', [
      {
        status: 200,
        props: [
          { name: { ns: DAV_NS, local: 'resourcetype' }, innerXml: '<D:collection/>' },
          { name: { ns: DAV_NS, local: 'supportedlock' }, innerXml: SUPPORTED_LOCK_INNER_XML },
        ],
      },
      { status: 403, props: [{ name: { ns: DAV_NS, local: 'getetag' } }], errorXml: errorXml('cannot-modify-protected-property'), description: 'protected' },
    ]);
    const doc = parseXml(w.toString());
    const [ok, forbidden] = elements(child(doc, DAV_NS, 'response'), DAV_NS, 'propstat') as [Node, Node];
    expect(child(child(child(ok, DAV_NS, 'prop'), DAV_NS, 'resourcetype'), DAV_NS, 'collection')).toBeDefined();
    const entries = elements(child(child(ok, DAV_NS, 'prop'), DAV_NS, 'supportedlock'), DAV_NS, 'lockentry');
    expect(entries.map((e) => elements(child(e, DAV_NS, 'lockscope'))[0]?.local)).toEqual(['exclusive', 'shared']);
    expect(child(child(forbidden, DAV_NS, 'error'), DAV_NS, 'cannot-modify-protected-property')).toBeDefined();
    expect(text(child(forbidden, DAV_NS, 'responsedescription'))).toBe('protected');
  });

  it('writes status responses for failed members, with an error', () => {
    const w = new MultistatusWriter();
    w.addStatus('/home/dir/locked.txt', 423, { errorXml: errorXml('lock-token-submitted', ['/home/dir/locked.txt']) });
    w.addStatus(['/a', '/b'], 424);
    const responses = elements(parseXml(w.toString()), DAV_NS, 'response');
    expect(responses).toHaveLength(2);
    expect(text(child(responses[0] as Node, DAV_NS, 'status'))).toBe('HTTP/1.1 423 Locked');
    expect(text(child(child(child(responses[0] as Node, DAV_NS, 'error'), DAV_NS, 'lock-token-submitted'), DAV_NS, 'href'))).toBe('/home/dir/locked.txt');
    expect(elements(responses[1] as Node, DAV_NS, 'href').map(text)).toEqual(['/a', '/b']);
  });

  it('round-trips dead properties parsed from PROPPATCH into PROPFIND output', () => {
    const body =
      '<D:propertyupdate xmlns:D="DAV:" xmlns="urn:default"><D:set><D:prop>' +
      '<t:valnspace xmlns:t="http://example.com/neon/litmus/"><foo><bar xmlns="urn:inner" a="1">x</bar></foo></t:valnspace>' +
      '<nonamespace xmlns="">randomvalue</nonamespace>' +
      '<D:displayname>dead in DAV:</D:displayname>' +
      '</D:prop></D:set></D:propertyupdate>';
    const ops = parseProppatch(body).filter((o): o is Extract<PropPatchInstruction, { op: 'set' }> => o.op === 'set');
    const w = new MultistatusWriter();
    w.addPropstats('/r', [{ status: 200, props: ops.map((o) => ({ name: o.name, elementXml: o.xml })) }]);
    const prop = child(child(child(parseXml(w.toString()), DAV_NS, 'response'), DAV_NS, 'propstat'), DAV_NS, 'prop');
    const valn = child(prop, 'http://example.com/neon/litmus/', 'valnspace');
    const bar = child(child(valn, 'urn:default', 'foo'), 'urn:inner', 'bar');
    expect(bar.attrs).toEqual({ '{}a': '1' });
    expect(text(bar)).toBe('x');
    expect(text(child(prop, '', 'nonamespace'))).toBe('randomvalue');
    expect(text(child(prop, DAV_NS, 'displayname'))).toBe('dead in DAV:');
  });

  it('serializes a 10,000-entry listing with seven live properties each, correctly', () => {
    const w = new MultistatusWriter();
    const props = (i: number) => [
      { name: { ns: DAV_NS, local: 'displayname' }, text: `file #${i} & co.txt` },
      { name: { ns: DAV_NS, local: 'getcontentlength' }, text: String(i * 7) },
      { name: { ns: DAV_NS, local: 'getlastmodified' }, text: new Date(1_700_000_000_000 + i * 1000).toUTCString() },
      { name: { ns: DAV_NS, local: 'creationdate' }, text: new Date(1_600_000_000_000 + i).toISOString() },
      { name: { ns: DAV_NS, local: 'getetag' }, text: `"0f6c52d8-1c7b-4f67-9a3e-${String(i).padStart(12, '0')}-3"` },
      { name: { ns: DAV_NS, local: 'getcontenttype' }, text: 'text/plain' },
      { name: { ns: DAV_NS, local: 'resourcetype' } },
    ];
    for (let i = 0; i < 10_000; i++) w.addPropstats(`/home/big/file%20%23${i}%20%26%20co.txt`, [{ status: 200, props: props(i) }]);
    const xml = w.toString();
    const responses = elements(parseXml(xml), DAV_NS, 'response');
    expect(responses).toHaveLength(10_000);
    const last = responses[9_999] as Node;
    expect(text(child(last, DAV_NS, 'href'))).toBe('/home/big/file%20%239999%20%26%20co.txt');
    const prop = child(child(last, DAV_NS, 'propstat'), DAV_NS, 'prop');
    expect(elements(prop)).toHaveLength(7);
    expect(text(child(prop, DAV_NS, 'displayname'))).toBe('file #9999 & co.txt');
    expect(text(child(prop, DAV_NS, 'getcontentlength'))).toBe('69993');
    expect(text(child(prop, DAV_NS, 'getetag'))).toBe('"0f6c52d8-1c7b-4f67-9a3e-000000009999-3"');
  });
});

describe('proppatchMultistatus', () => {
  it('groups results by status in the order given', () => {
    const xml = proppatchMultistatus('/home/a.txt', [
      { name: { ns: 'urn:x', local: 'a' }, status: 424 },
      { name: { ns: DAV_NS, local: 'getetag' }, status: 403 },
      { name: { ns: 'urn:x', local: 'b' }, status: 424 },
    ]);
    const propstats = elements(child(parseXml(xml), DAV_NS, 'response'), DAV_NS, 'propstat');
    expect(propstats.map((p) => text(child(p, DAV_NS, 'status')))).toEqual(['HTTP/1.1 424 Failed Dependency', 'HTTP/1.1 403 Forbidden']);
    expect(elements(child(propstats[0] as Node, DAV_NS, 'prop')).map((n) => propKey(n))).toEqual(['{urn:x}a', '{urn:x}b']);
  });
});

describe('lock bodies', () => {
  const lock = {
    token: 'opaquelocktoken:0f6c52d8-1c7b-4f67-9a3e-6d5bd0d1a001',
    scope: 'exclusive' as const,
    depth: '0' as const,
    ownerXml: '<D:owner xmlns:D="DAV:"><D:href>http://www.apple.com/webdav_fs/</D:href></D:owner>',
    rootHref: '/home/new%20file.bin',
    timeoutSec: 600,
  };

  it('writes the LOCK response with write/exclusive in DAV:, token, timeout, depth, owner and lockroot', () => {
    const xml = lockResponseBody([lock]);
    const active = child(child(parseXml(xml), DAV_NS, 'lockdiscovery'), DAV_NS, 'activelock');
    expect(child(child(active, DAV_NS, 'locktype'), DAV_NS, 'write')).toBeDefined();
    expect(child(child(active, DAV_NS, 'lockscope'), DAV_NS, 'exclusive')).toBeDefined();
    expect(text(child(active, DAV_NS, 'depth'))).toBe('0');
    expect(text(child(active, DAV_NS, 'timeout'))).toBe('Second-600');
    expect(text(child(child(active, DAV_NS, 'locktoken'), DAV_NS, 'href'))).toBe(lock.token);
    expect(text(child(child(active, DAV_NS, 'lockroot'), DAV_NS, 'href'))).toBe('/home/new%20file.bin');
    expect(text(child(child(active, DAV_NS, 'owner'), DAV_NS, 'href'))).toBe('http://www.apple.com/webdav_fs/');
  });

  it('writes lockdiscovery content for several locks, Infinite timeouts and no owner', () => {
    const inner = lockDiscoveryInnerXml([lock, { ...lock, scope: 'shared', depth: 'infinity', ownerXml: undefined, timeoutSec: undefined }]);
    const doc = parseXml(`<D:lockdiscovery xmlns:D="DAV:">${inner}</D:lockdiscovery>`);
    const [, second] = elements(doc, DAV_NS, 'activelock') as [Node, Node];
    expect(text(child(second, DAV_NS, 'timeout'))).toBe('Infinite');
    expect(text(child(second, DAV_NS, 'depth'))).toBe('infinity');
    expect(elements(second, DAV_NS, 'owner')).toEqual([]);
    expect(lockDiscoveryInnerXml([])).toBe('');
  });
});

describe('error bodies', () => {
  it('writes DAV:error with a condition and hrefs', () => {
    expect(errorBody('propfind-finite-depth')).toBe('<?xml version="1.0" encoding="utf-8"?>\n<D:error xmlns:D="DAV:"><D:propfind-finite-depth/></D:error>');
    const doc = parseXml(errorBody('lock-token-submitted', ['/a%20b', '/c&d']));
    expect(elements(child(doc, DAV_NS, 'lock-token-submitted'), DAV_NS, 'href').map(text)).toEqual(['/a%20b', '/c&d']);
    expect(child(parseXml(errorBody('no-conflicting-lock', ['/x'])), DAV_NS, 'no-conflicting-lock')).toBeDefined();
    expect(child(parseXml(errorBody('quota-not-exceeded')), DAV_NS, 'quota-not-exceeded')).toBeDefined();
  });
});
