/**
 * WebDAV XML for the bridge's verb handlers: parsing PROPFIND, PROPPATCH and LOCK request bodies
 * (RFC 4918 §14) and writing multistatus, lock and error bodies. Owns the XML dialect only; it
 * decides no statuses beyond the ones callers pass in and touches no store, lock or property state.
 *
 * Parsing uses saxes (strict XML 1.0 + Namespaces, the parser jsdom uses): any well-formedness or
 * namespace error, including litmus' `xmlns:bar=""` (propfind_invalid2), is a DavXmlError the verb
 * answers with 400 — webdav-server 2.6.3 answers 207 to malformed PROPFIND XML (docs/client-quirks.md §0).
 * A DOCTYPE is refused outright, so no entity is ever defined or fetched (no XXE, no entity
 * expansion); bodies are capped (1 MiB by default) and so are nesting and element counts.
 *
 * Writing is string concatenation with XML escaping; `D:` is DAV:, other namespaces get a prefix
 * declared once on the root element, and no default namespace is ever declared, so a stored dead
 * property in no namespace can be embedded as it is.
 */
import { STATUS_CODES } from 'node:http';
import type { Readable } from 'node:stream';
import { SaxesParser, type SaxesTagNS } from 'saxes';

export const DAV_NS = 'DAV:';
const XML_NS = 'http://www.w3.org/XML/1998/namespace';
const XMLNS_NS = 'http://www.w3.org/2000/xmlns/';

export type DavXmlErrorKind =
  | 'too-large'            // body over the limit: 413
  | 'aborted'              // the client stopped sending: no answer possible
  | 'malformed'            // not well-formed XML / namespace error / DOCTYPE: 400
  | 'unsupported-encoding' // a charset we cannot decode: 415
  | 'too-complex'          // nesting or element count over the limit: 400
  | 'invalid';             // well-formed but not the expected WebDAV element: 400

export class DavXmlError extends Error {
  constructor(
    readonly kind: DavXmlErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'DavXmlError';
  }
}

export interface XmlLimits {
  maxBytes: number;
  maxDepth: number;
  maxElements: number;
}

export const DEFAULT_XML_LIMITS: XmlLimits = { maxBytes: 1024 * 1024, maxDepth: 64, maxElements: 20_000 };

/** A property name: `ns` is the namespace URI, '' for no namespace. */
export interface PropName {
  readonly ns: string;
  readonly local: string;
}

/** The key properties are compared by: Clark notation `{ns}local`. */
export function propKey(name: PropName): string {
  return `{${name.ns}}${name.local}`;
}

// ---------------------------------------------------------------------------------------------
// Request bodies

/**
 * Reads a request body into memory, rejecting with DavXmlError('too-large') as soon as it passes
 * `maxBytes` (the rest is drained, not buffered, so the verb can still answer 413) and with
 * 'aborted' if the stream fails or closes early.
 */
export function readBody(stream: Readable, maxBytes: number = DEFAULT_XML_LIMITS.maxBytes): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const finish = (err: DavXmlError | undefined): void => {
      if (settled) return;
      settled = true;
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      stream.off('close', onClose);
      if (err) reject(err);
      else resolve(Buffer.concat(chunks, total));
    };
    const onData = (chunk: Buffer | string): void => {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      total += buf.length;
      if (total > maxBytes) {
        finish(new DavXmlError('too-large', `request body larger than ${maxBytes} bytes`));
        stream.resume();
        return;
      }
      chunks.push(buf);
    };
    const onEnd = (): void => finish(undefined);
    const onError = (): void => finish(new DavXmlError('aborted', 'the request body could not be read'));
    const onClose = (): void => finish(new DavXmlError('aborted', 'the request body ended early'));
    stream.on('data', onData);
    stream.on('end', onEnd);
    stream.on('error', onError);
    stream.on('close', onClose);
  });
}

interface XmlElement {
  readonly ns: string;
  readonly local: string;
  readonly prefix: string;
  /** Namespace declarations written on this element, in document order. */
  readonly declarations: ReadonlyArray<readonly [prefix: string, uri: string]>;
  readonly attributes: ReadonlyArray<{ ns: string; local: string; prefix: string; value: string }>;
  readonly children: Array<XmlElement | string>;
  /** xml:lang in effect, own or inherited. */
  readonly lang: string | undefined;
}

function decodeBody(body: Buffer | string, limits: XmlLimits): string {
  if (typeof body === 'string') {
    if (Buffer.byteLength(body, 'utf8') > limits.maxBytes) throw new DavXmlError('too-large', `body larger than ${limits.maxBytes} bytes`);
    return body.charCodeAt(0) === 0xfeff ? body.slice(1) : body;
  }
  if (body.length > limits.maxBytes) throw new DavXmlError('too-large', `body larger than ${limits.maxBytes} bytes`);
  let label = 'utf-8';
  let start = 0;
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) start = 3;
  else if (body[0] === 0xfe && body[1] === 0xff) label = 'utf-16be';
  else if (body[0] === 0xff && body[1] === 0xfe) label = 'utf-16le';
  else {
    const head = body.subarray(0, 200).toString('latin1');
    const declared = /^\s*<\?xml[^>]*\bencoding\s*=\s*["']([A-Za-z0-9._:-]+)["']/.exec(head)?.[1];
    if (declared !== undefined) label = declared.toLowerCase();
  }
  let decoder: InstanceType<typeof TextDecoder>;
  try {
    decoder = new TextDecoder(label, { fatal: true });
  } catch {
    throw new DavXmlError('unsupported-encoding', `unsupported encoding ${label}`);
  }
  try {
    const text = decoder.decode(body.subarray(start));
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  } catch {
    throw new DavXmlError('malformed', `the body is not valid ${label}`);
  }
}

/** Parses a whole document into a small element tree; undefined for an empty (whitespace) body. */
function parseDocument(body: Buffer | string, limits: XmlLimits): XmlElement | undefined {
  const text = decodeBody(body, limits);
  if (text.trim() === '') return undefined;
  const parser = new SaxesParser({ xmlns: true, position: false });
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let elements = 0;
  parser.on('doctype', () => {
    throw new DavXmlError('malformed', 'a DOCTYPE is not accepted');
  });
  parser.on('opentag', (tag: SaxesTagNS) => {
    if (++elements > limits.maxElements) throw new DavXmlError('too-complex', `more than ${limits.maxElements} elements`);
    if (stack.length >= limits.maxDepth) throw new DavXmlError('too-complex', `nested deeper than ${limits.maxDepth}`);
    const parent = stack[stack.length - 1];
    const declarations: Array<readonly [string, string]> = Object.entries(tag.ns);
    const attributes: Array<{ ns: string; local: string; prefix: string; value: string }> = [];
    let lang = parent?.lang;
    for (const attr of Object.values(tag.attributes)) {
      if (attr.uri === XMLNS_NS) continue;
      if (attr.uri === XML_NS && attr.local === 'lang') lang = attr.value;
      attributes.push({ ns: attr.uri, local: attr.local, prefix: attr.prefix, value: attr.value });
    }
    const element: XmlElement = { ns: tag.uri, local: tag.local, prefix: tag.prefix, declarations, attributes, children: [], lang };
    if (parent) parent.children.push(element);
    else root = element;
    stack.push(element);
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  const onText = (value: string): void => {
    const parent = stack[stack.length - 1];
    if (parent) parent.children.push(value);
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  try {
    parser.write(text).close();
  } catch (err) {
    if (err instanceof DavXmlError) throw err;
    throw new DavXmlError('malformed', err instanceof Error ? err.message : 'malformed XML');
  }
  if (!root) throw new DavXmlError('malformed', 'no root element');
  return root;
}

function isDav(el: XmlElement, local: string): boolean {
  return el.ns === DAV_NS && el.local === local;
}

function childElements(el: XmlElement): XmlElement[] {
  return el.children.filter((c): c is XmlElement => typeof c !== 'string');
}

function textContent(el: XmlElement): string {
  let out = '';
  for (const c of el.children) out += typeof c === 'string' ? c : textContent(c);
  return out;
}

function requireRoot(root: XmlElement, local: string): XmlElement {
  if (!isDav(root, local)) throw new DavXmlError('invalid', `expected a DAV:${local} root, got {${root.ns}}${root.local}`);
  return root;
}

function propNames(prop: XmlElement): PropName[] {
  const seen = new Set<string>();
  const out: PropName[] = [];
  for (const el of childElements(prop)) {
    const name = { ns: el.ns, local: el.local };
    const key = propKey(name);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(name);
  }
  return out;
}

export type PropfindRequest =
  /** `include`: extra properties asked on top of allprop (RFC 4918 §14.8). */
  | { readonly kind: 'allprop'; readonly include: readonly PropName[] }
  | { readonly kind: 'propname' }
  | { readonly kind: 'prop'; readonly props: readonly PropName[] };

/**
 * Parses a PROPFIND body (RFC 4918 §9.1, §14.20). An empty body is allprop, as the RFC requires;
 * a DAV:propfind without a recognised child is read as allprop too. Unknown elements are ignored
 * (§17). Throws DavXmlError.
 */
export function parsePropfind(body: Buffer | string, limits: XmlLimits = DEFAULT_XML_LIMITS): PropfindRequest {
  const root = parseDocument(body, limits);
  if (root === undefined) return { kind: 'allprop', include: [] };
  requireRoot(root, 'propfind');
  let kind: 'allprop' | 'propname' | 'prop' | undefined;
  let props: PropName[] = [];
  let include: PropName[] = [];
  for (const el of childElements(root)) {
    if (el.ns !== DAV_NS) continue;
    if (el.local === 'include') {
      include = include.concat(propNames(el));
      continue;
    }
    if (el.local !== 'allprop' && el.local !== 'propname' && el.local !== 'prop') continue;
    if (kind !== undefined) throw new DavXmlError('invalid', `DAV:${el.local} together with DAV:${kind}`);
    kind = el.local;
    if (el.local === 'prop') props = propNames(el);
  }
  if (kind === 'propname') return { kind };
  if (kind === 'prop') return { kind, props };
  return { kind: 'allprop', include };
}

/** A favorites REPORT (Nextcloud's FilesReportPlugin `oc:filter-files`): the properties asked (allprop when none) and the rules. */
export interface FilterFilesReport {
  readonly request: PropfindRequest;
  /** `<oc:filter-rules><oc:favorite>1</oc:favorite></oc:filter-rules>`: the caller's starred nodes. */
  readonly favorite: boolean;
  /** Rules other than oc:favorite (system tags, circles): not served. */
  readonly otherRules: readonly string[];
}

const OWNCLOUD_NS = 'http://owncloud.org/ns';

/**
 * Parses a REPORT body whose root is `oc:filter-files` (the Nextcloud web app's and the
 * developer manual's favorites listing: docs/client-quirks.md); undefined for any other report.
 * Throws DavXmlError for a malformed body.
 */
export function parseFilterFiles(body: Buffer | string, limits: XmlLimits = DEFAULT_XML_LIMITS): FilterFilesReport | undefined {
  const root = parseDocument(body, limits);
  if (root === undefined || root.ns !== OWNCLOUD_NS || root.local !== 'filter-files') return undefined;
  let props: PropName[] | undefined;
  let favorite = false;
  const otherRules: string[] = [];
  for (const el of childElements(root)) {
    if (isDav(el, 'prop')) props = propNames(el);
    else if (el.ns === OWNCLOUD_NS && el.local === 'filter-rules') {
      for (const rule of childElements(el)) {
        if (rule.ns === OWNCLOUD_NS && rule.local === 'favorite') favorite = true;
        else otherRules.push(`{${rule.ns}}${rule.local}`);
      }
    }
  }
  return { request: props === undefined ? { kind: 'allprop', include: [] } : { kind: 'prop', props }, favorite, otherRules };
}

export type PropPatchInstruction =
  | {
      readonly op: 'set';
      readonly name: PropName;
      /** The whole property element, serialized with every namespace declaration it needs. */
      readonly xml: string;
      /** Its text content (for live properties such as Win32LastModifiedTime). */
      readonly text: string;
    }
  | { readonly op: 'remove'; readonly name: PropName };

/**
 * Parses a PROPPATCH body (RFC 4918 §9.2, §14.19) into its set/remove instructions in document
 * order; any number of DAV:set and DAV:remove blocks (two DAV:set blocks kill webdav-server 2.6.3:
 * docs/client-quirks.md §0). Throws DavXmlError.
 */
export function parseProppatch(body: Buffer | string, limits: XmlLimits = DEFAULT_XML_LIMITS): PropPatchInstruction[] {
  const root = parseDocument(body, limits);
  if (root === undefined) throw new DavXmlError('invalid', 'PROPPATCH needs a body');
  requireRoot(root, 'propertyupdate');
  const out: PropPatchInstruction[] = [];
  for (const block of childElements(root)) {
    if (!isDav(block, 'set') && !isDav(block, 'remove')) continue;
    const props = childElements(block).filter((el) => isDav(el, 'prop'));
    if (props.length === 0) throw new DavXmlError('invalid', `DAV:${block.local} without DAV:prop`);
    for (const prop of props) {
      for (const el of childElements(prop)) {
        const name = { ns: el.ns, local: el.local };
        if (block.local === 'set') out.push({ op: 'set', name, xml: serializeElement(el), text: textContent(el) });
        else out.push({ op: 'remove', name });
      }
    }
  }
  if (out.length === 0) throw new DavXmlError('invalid', 'PROPPATCH without any property');
  return out;
}

export interface LockInfo {
  readonly scope: 'exclusive' | 'shared';
  readonly type: 'write';
  /** The DAV:owner element serialized verbatim (RFC 4918 §14.17: kept as a dead property would be). */
  readonly ownerXml: string | undefined;
}

/**
 * Parses a LOCK body (RFC 4918 §9.10, §14.11). Undefined for an empty body: a lock refresh
 * (§9.10.2). Throws DavXmlError.
 */
export function parseLockInfo(body: Buffer | string, limits: XmlLimits = DEFAULT_XML_LIMITS): LockInfo | undefined {
  const root = parseDocument(body, limits);
  if (root === undefined) return undefined;
  requireRoot(root, 'lockinfo');
  let scope: 'exclusive' | 'shared' | undefined;
  let type: 'write' | undefined;
  let ownerXml: string | undefined;
  for (const el of childElements(root)) {
    if (isDav(el, 'lockscope')) {
      const inner = childElements(el).find((c) => isDav(c, 'exclusive') || isDav(c, 'shared'));
      if (!inner) throw new DavXmlError('invalid', 'DAV:lockscope is neither exclusive nor shared');
      scope = inner.local as 'exclusive' | 'shared';
    } else if (isDav(el, 'locktype')) {
      if (!childElements(el).some((c) => isDav(c, 'write'))) throw new DavXmlError('invalid', 'only DAV:write locks exist');
      type = 'write';
    } else if (isDav(el, 'owner')) {
      ownerXml = serializeElement(el);
    }
  }
  if (scope === undefined || type === undefined) throw new DavXmlError('invalid', 'DAV:lockinfo needs DAV:lockscope and DAV:locktype');
  return { scope, type, ownerXml };
}

/**
 * Serializes an element with the namespace declarations it needs: the ones the client wrote inside
 * it (kept even if unused: a value may hold QNames in text) and, for each element and attribute
 * name, its binding when the enclosing output does not already have it. Inherited xml:lang is
 * carried onto the element (RFC 4918 §4.3). Comments and processing instructions are dropped.
 */
function serializeElement(root: XmlElement): string {
  const parts: string[] = [];
  writeElement(root, new Map(), parts, root.lang);
  return parts.join('');
}

function writeElement(el: XmlElement, scope: ReadonlyMap<string, string>, out: string[], inheritedLang: string | undefined): void {
  let inner: Map<string, string> | undefined;
  let decls = '';
  const bind = (prefix: string, uri: string): void => {
    if (prefix === 'xml') return;
    // With nothing declared, the default namespace is "no namespace".
    const current = (inner ?? scope).get(prefix) ?? (prefix === '' ? '' : undefined);
    if (current === uri) return;
    inner ??= new Map(scope);
    inner.set(prefix, uri);
    decls += prefix === '' ? ` xmlns="${escapeXmlAttr(uri)}"` : ` xmlns:${prefix}="${escapeXmlAttr(uri)}"`;
  };
  for (const [prefix, uri] of el.declarations) bind(prefix, uri);
  bind(el.prefix, el.ns);
  for (const attr of el.attributes) if (attr.prefix !== '') bind(attr.prefix, attr.ns);
  const qname = el.prefix === '' ? el.local : `${el.prefix}:${el.local}`;
  let attrs = '';
  let hasLang = false;
  for (const attr of el.attributes) {
    if (attr.ns === XML_NS && attr.local === 'lang') hasLang = true;
    attrs += ` ${attr.prefix === '' ? attr.local : `${attr.prefix}:${attr.local}`}="${escapeXmlAttr(attr.value)}"`;
  }
  if (!hasLang && inheritedLang !== undefined) attrs += ` xml:lang="${escapeXmlAttr(inheritedLang)}"`;
  if (el.children.length === 0) {
    out.push(`<${qname}${decls}${attrs}/>`);
    return;
  }
  out.push(`<${qname}${decls}${attrs}>`);
  const childScope = inner ?? scope;
  for (const child of el.children) {
    if (typeof child === 'string') out.push(escapeXmlText(child));
    else writeElement(child, childScope, out, undefined);
  }
  out.push(`</${qname}>`);
}

// ---------------------------------------------------------------------------------------------
// Escaping

// Characters XML 1.0 cannot carry at all (C0 controls but TAB/LF/CR, U+FFFE/U+FFFF, lone
// surrogates): a foreign store's name may hold them; they become U+FFFD so the client still parses.
// One pass, one regex: listings escape tens of thousands of names.
const TEXT_ESCAPE =
  /[&<>\r\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const ATTR_ESCAPE =
  /[&<>"\t\n\r\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const TEXT_SPECIAL = /[&<>\r\x00-\x08\x0B\x0C\x0E-\x1F\uD800-\uDFFF\uFFFE\uFFFF]/;
const ATTR_SPECIAL = /[&<>"\t\n\r\x00-\x08\x0B\x0C\x0E-\x1F\uD800-\uDFFF\uFFFE\uFFFF]/;

function escapeChar(c: string): string {
  switch (c) {
    case '&':
      return '&amp;';
    case '<':
      return '&lt;';
    case '>':
      return '&gt;';
    case '"':
      return '&quot;';
    case '\r':
      return '&#13;';
    case '\n':
      return '&#10;';
    case '\t':
      return '&#9;';
    default:
      return '\uFFFD';
  }
}

/** Escapes character data: & < > and CR (kept as &#13; so it survives parsing). */
export function escapeXmlText(value: string): string {
  return TEXT_SPECIAL.test(value) ? value.replace(TEXT_ESCAPE, escapeChar) : value;
}

/** Escapes an attribute value (double-quoted): also " and whitespace a parser would normalise. */
export function escapeXmlAttr(value: string): string {
  return ATTR_SPECIAL.test(value) ? value.replace(ATTR_ESCAPE, escapeChar) : value;
}

// ---------------------------------------------------------------------------------------------
// Response bodies

const XML_DECLARATION = '<?xml version="1.0" encoding="utf-8"?>\n';
const statusLines = new Map<number, string>();

/** `HTTP/1.1 404 Not Found`, as DAV:status carries it. */
export function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) {
    line = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
    statusLines.set(status, line);
  }
  return line;
}

/** One property in a propstat. At most one of text / innerXml / elementXml; none gives `<name/>`. */
export interface PropValue {
  readonly name: PropName;
  /** Character data, escaped on output. */
  readonly text?: string;
  /** Trusted markup for the content, using `D:` for DAV: and declaring any other namespace itself. */
  readonly innerXml?: string;
  /** A whole self-contained element (a stored dead property): written verbatim, `name` unused. */
  readonly elementXml?: string;
}

export interface Propstat {
  readonly status: number;
  readonly props: readonly PropValue[];
  /** Markup inside DAV:error (e.g. `<D:cannot-modify-protected-property/>`). */
  readonly errorXml?: string;
  readonly description?: string;
}

const WELL_KNOWN_PREFIXES: ReadonlyArray<readonly [string, string]> = [
  ['urn:schemas-microsoft-com:', 'Z'],
  ['http://apache.org/dav/props/', 'A'],
  ['http://apple.com/ns/dav/', 'M'],
  ['http://owncloud.org/ns', 'oc'],
  ['http://nextcloud.org/ns', 'nc'],
  ['ME:', 'ME'],
];

/**
 * Builds a DAV:multistatus document (RFC 4918 §13, §14.16) by concatenation. Property namespaces
 * other than DAV: are declared once, on the root, when the document is finished. Hrefs are written
 * as given: pass them already percent-encoded (href.ts).
 */
export class MultistatusWriter {
  private readonly chunks: string[] = [];
  private readonly prefixes = new Map<string, string>([[DAV_NS, 'D']]);
  /** ns -> local -> rendered tags: a listing repeats the same few names tens of thousands of times. */
  private readonly tags = new Map<string, Map<string, PropTags>>();
  private nextPrefix = 0;

  /** Responses written so far. */
  get responseCount(): number {
    return this.chunks.length;
  }

  /** The qualified name for a property name; allocates a root-declared prefix for a new namespace. */
  qualifiedName(name: PropName): string {
    if (name.ns === '') return name.local;
    let prefix = this.prefixes.get(name.ns);
    if (prefix === undefined) {
      prefix = WELL_KNOWN_PREFIXES.find(([ns]) => ns === name.ns)?.[1];
      if (prefix === undefined || [...this.prefixes.values()].includes(prefix)) prefix = `ns${this.nextPrefix++}`;
      this.prefixes.set(name.ns, prefix);
    }
    return `${prefix}:${name.local}`;
  }

  /** A response with propstat groups (PROPFIND, PROPPATCH). Empty groups are left out. */
  addPropstats(href: string, propstats: readonly Propstat[], description?: string): void {
    let out = '<D:response><D:href>' + escapeXmlText(href) + '</D:href>';
    for (let g = 0; g < propstats.length; g++) {
      const ps = propstats[g] as Propstat;
      const props = ps.props;
      if (props.length === 0) continue;
      out += '<D:propstat><D:prop>';
      for (let i = 0; i < props.length; i++) {
        const p = props[i] as PropValue;
        if (p.elementXml !== undefined) {
          out += p.elementXml;
          continue;
        }
        const tags = this.tagsFor(p.name);
        if (p.text !== undefined && p.text !== '') out += tags.open + escapeXmlText(p.text) + tags.close;
        else if (p.innerXml !== undefined && p.innerXml !== '') out += tags.open + p.innerXml + tags.close;
        else out += tags.empty;
      }
      out += '</D:prop><D:status>' + statusLine(ps.status) + '</D:status>';
      if (ps.errorXml !== undefined) out += '<D:error>' + ps.errorXml + '</D:error>';
      if (ps.description !== undefined) out += '<D:responsedescription>' + escapeXmlText(ps.description) + '</D:responsedescription>';
      out += '</D:propstat>';
    }
    if (description !== undefined) out += '<D:responsedescription>' + escapeXmlText(description) + '</D:responsedescription>';
    this.chunks.push(out + '</D:response>');
  }

  /**
   * A response with a status for one or more hrefs (a failed member of DELETE, COPY, MOVE), with
   * an optional DAV:error, e.g. `errorXml('lock-token-submitted', [rootHref])`.
   */
  addStatus(hrefs: string | readonly string[], status: number, options: { errorXml?: string; description?: string } = {}): void {
    let out = '<D:response>';
    for (const href of typeof hrefs === 'string' ? [hrefs] : hrefs) out += `<D:href>${escapeXmlText(href)}</D:href>`;
    out += `<D:status>${statusLine(status)}</D:status>`;
    if (options.errorXml !== undefined) out += `<D:error>${options.errorXml}</D:error>`;
    if (options.description !== undefined) out += `<D:responsedescription>${escapeXmlText(options.description)}</D:responsedescription>`;
    this.chunks.push(out + '</D:response>');
  }

  /** The finished document. */
  toString(): string {
    let decls = '';
    for (const [ns, prefix] of this.prefixes) decls += ` xmlns:${prefix}="${escapeXmlAttr(ns)}"`;
    return `${XML_DECLARATION}<D:multistatus${decls}>${this.chunks.join('')}</D:multistatus>`;
  }

  private tagsFor(name: PropName): PropTags {
    let byLocal = this.tags.get(name.ns);
    if (byLocal === undefined) {
      byLocal = new Map();
      this.tags.set(name.ns, byLocal);
    }
    let tags = byLocal.get(name.local);
    if (tags === undefined) {
      const qname = this.qualifiedName(name);
      tags = { open: `<${qname}>`, close: `</${qname}>`, empty: `<${qname}/>` };
      byLocal.set(name.local, tags);
    }
    return tags;
  }
}

interface PropTags {
  readonly open: string;
  readonly close: string;
  readonly empty: string;
}

/**
 * The multistatus answer to PROPPATCH (RFC 4918 §9.2.1): one response, one propstat per status,
 * properties in the order given.
 */
export function proppatchMultistatus(href: string, results: ReadonlyArray<{ name: PropName; status: number }>): string {
  const groups = new Map<number, PropValue[]>();
  for (const r of results) {
    let group = groups.get(r.status);
    if (group === undefined) {
      group = [];
      groups.set(r.status, group);
    }
    group.push({ name: r.name });
  }
  const writer = new MultistatusWriter();
  writer.addPropstats(href, [...groups].map(([status, props]) => ({ status, props })));
  return writer.toString();
}

/** What the lock writers need of a lock (locks.ts ActiveLock has it all but the remaining time). */
export interface LockDescription {
  readonly token: string;
  readonly scope: 'exclusive' | 'shared';
  readonly depth: '0' | 'infinity';
  readonly ownerXml: string | undefined;
  readonly rootHref: string;
  /** Seconds left; undefined for Infinite. */
  readonly timeoutSec: number | undefined;
}

/** One DAV:activelock (RFC 4918 §14.1); scope and type are in the DAV: namespace (docs/client-quirks.md §0). */
export function activeLockXml(lock: LockDescription): string {
  return (
    '<D:activelock>' +
    `<D:locktype><D:write/></D:locktype><D:lockscope><D:${lock.scope}/></D:lockscope>` +
    `<D:depth>${lock.depth}</D:depth>` +
    (lock.ownerXml ?? '') +
    `<D:timeout>${lock.timeoutSec === undefined ? 'Infinite' : `Second-${lock.timeoutSec}`}</D:timeout>` +
    `<D:locktoken><D:href>${escapeXmlText(lock.token)}</D:href></D:locktoken>` +
    `<D:lockroot><D:href>${escapeXmlText(lock.rootHref)}</D:href></D:lockroot>` +
    '</D:activelock>'
  );
}

/** The content of DAV:lockdiscovery (RFC 4918 §15.8), for PropValue.innerXml. */
export function lockDiscoveryInnerXml(locks: readonly LockDescription[]): string {
  let out = '';
  for (const lock of locks) out += activeLockXml(lock);
  return out;
}

/** The content of DAV:supportedlock (RFC 4918 §15.10): exclusive and shared write locks. */
export const SUPPORTED_LOCK_INNER_XML =
  '<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>' +
  '<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>';

/**
 * The body of a successful LOCK (RFC 4918 §9.10.1): DAV:prop with the lockdiscovery of the lock
 * just taken or refreshed. Pass only that lock: clients (neon, Finder) read the token from it.
 */
export function lockResponseBody(locks: readonly LockDescription[]): string {
  return `${XML_DECLARATION}<D:prop xmlns:D="DAV:"><D:lockdiscovery>${lockDiscoveryInnerXml(locks)}</D:lockdiscovery></D:prop>`;
}

/** Precondition / postcondition codes the bridge reports (RFC 4918 §16, RFC 4331 §6). */
export type DavCondition =
  | 'propfind-finite-depth'
  | 'lock-token-submitted'
  | 'lock-token-matches-request-uri'
  | 'no-conflicting-lock'
  | 'cannot-modify-protected-property'
  | 'preserved-live-properties'
  | 'no-external-entities'
  | 'quota-not-exceeded'
  // RFC 5323 §3.1: SEARCH preconditions.
  | 'search-grammar-supported'
  | 'search-scope-valid'
  | 'search-multiple-scope-supported';

/** A condition element with optional hrefs, for embedding in DAV:error (`D:` must be declared). */
export function errorXml(condition: DavCondition, hrefs: readonly string[] = []): string {
  if (hrefs.length === 0) return `<D:${condition}/>`;
  let out = `<D:${condition}>`;
  for (const href of hrefs) out += `<D:href>${escapeXmlText(href)}</D:href>`;
  return `${out}</D:${condition}>`;
}

/** A whole DAV:error body (RFC 4918 §16), e.g. 423 with lock-token-submitted and the lock roots. */
export function errorBody(condition: DavCondition, hrefs: readonly string[] = []): string {
  return `${XML_DECLARATION}<D:error xmlns:D="DAV:">${errorXml(condition, hrefs)}</D:error>`;
}

/** A condition of a SEARCH's DAV:where (RFC 5323 §5.5), as Nextcloud's dialect uses them. */
export type DavSearchCondition =
  | { op: 'and' | 'or'; of: DavSearchCondition[] }
  | { op: 'not'; of: DavSearchCondition }
  | { op: 'eq' | 'gt' | 'gte' | 'lt' | 'lte' | 'like'; prop: PropName; literal: string }
  | { op: 'is-collection' }
  | { op: 'is-defined'; prop: PropName };

export interface SearchRequest {
  select: PropfindRequest;
  /** DAV:from's scopes: the href as sent, and the depth. */
  scopes: Array<{ href: string; depth: string }>;
  where: DavSearchCondition | undefined;
  orderBy: Array<{ prop: PropName; descending: boolean }>;
  /** DAV:limit's DAV:nresults. */
  nresults: number | undefined;
  /** Nextcloud's offset (`<nc:firstresult>` inside DAV:limit, any namespace). */
  firstResult: number | undefined;
}

const COMPARISONS: ReadonlySet<string> = new Set(['eq', 'gt', 'gte', 'lt', 'lte', 'like']);

function searchCondition(el: XmlElement): DavSearchCondition {
  if (el.ns !== DAV_NS) throw new DavXmlError('invalid', `unsupported search operator {${el.ns}}${el.local}`);
  const args = childElements(el);
  switch (el.local) {
    case 'and':
    case 'or':
      return { op: el.local, of: args.map(searchCondition) };
    case 'not': {
      if (args.length !== 1) throw new DavXmlError('invalid', 'DAV:not takes one operand');
      return { op: 'not', of: searchCondition(args[0] as XmlElement) };
    }
    case 'is-collection':
      return { op: 'is-collection' };
    case 'is-defined': {
      const prop = args.find((a) => isDav(a, 'prop'));
      const name = prop && childElements(prop)[0];
      if (!name) throw new DavXmlError('invalid', 'DAV:is-defined needs a DAV:prop');
      return { op: 'is-defined', prop: { ns: name.ns, local: name.local } };
    }
    default: {
      if (!COMPARISONS.has(el.local)) throw new DavXmlError('invalid', `unsupported search operator DAV:${el.local}`);
      const prop = args.find((a) => isDav(a, 'prop'));
      const name = prop && childElements(prop)[0];
      const literal = args.find((a) => isDav(a, 'literal') || isDav(a, 'typed-literal'));
      if (!name || !literal) throw new DavXmlError('invalid', `DAV:${el.local} needs a DAV:prop and a DAV:literal`);
      return { op: el.local as 'eq', prop: { ns: name.ns, local: name.local }, literal: textContent(literal) };
    }
  }
}

function nonNegative(text: string, what: string): number {
  const trimmed = text.trim();
  if (!/^\d{1,9}$/.test(trimmed)) throw new DavXmlError('invalid', `${what} must be a non-negative integer`);
  return Number(trimmed);
}

/**
 * Parses a SEARCH body (RFC 5323 §5: DAV:searchrequest holding DAV:basicsearch): select, from
 * (scopes), where, orderby, limit (with Nextcloud's firstresult). Throws DavXmlError: malformed
 * XML, another grammar than basicsearch, an operator or a limit it cannot read.
 */
export function parseSearchRequest(body: Buffer | string, limits: XmlLimits = DEFAULT_XML_LIMITS): SearchRequest {
  const root = parseDocument(body, limits);
  if (root === undefined) throw new DavXmlError('invalid', 'a SEARCH needs a DAV:searchrequest body');
  requireRoot(root, 'searchrequest');
  const basic = childElements(root).find((c) => isDav(c, 'basicsearch'));
  if (!basic) throw new DavXmlError('invalid', 'only DAV:basicsearch is supported');
  const part = (local: string): XmlElement | undefined => childElements(basic).find((c) => isDav(c, local));
  const selectEl = part('select');
  let select: PropfindRequest = { kind: 'allprop', include: [] };
  const selectProp = selectEl && childElements(selectEl).find((c) => isDav(c, 'prop'));
  if (selectProp) select = { kind: 'prop', props: propNames(selectProp) };
  const scopes: SearchRequest['scopes'] = [];
  for (const scope of childElements(part('from') ?? root).filter((c) => isDav(c, 'scope'))) {
    const href = childElements(scope).find((c) => isDav(c, 'href'));
    const depth = childElements(scope).find((c) => isDav(c, 'depth'));
    if (!href) throw new DavXmlError('invalid', 'a DAV:scope needs a DAV:href');
    scopes.push({ href: textContent(href).trim(), depth: depth ? textContent(depth).trim().toLowerCase() : 'infinity' });
  }
  const whereEl = part('where');
  const whereArgs = whereEl ? childElements(whereEl) : [];
  if (whereArgs.length > 1) throw new DavXmlError('invalid', 'DAV:where holds one operator');
  const orderBy: SearchRequest['orderBy'] = [];
  for (const order of childElements(part('orderby') ?? root).filter((c) => isDav(c, 'order'))) {
    const prop = childElements(order).find((c) => isDav(c, 'prop'));
    const name = prop && childElements(prop)[0];
    if (!name) throw new DavXmlError('invalid', 'a DAV:order needs a DAV:prop');
    orderBy.push({ prop: { ns: name.ns, local: name.local }, descending: childElements(order).some((c) => isDav(c, 'descending')) });
  }
  const limitEl = part('limit');
  const nresultsEl = limitEl && childElements(limitEl).find((c) => isDav(c, 'nresults'));
  const firstEl = limitEl && childElements(limitEl).find((c) => c.local === 'firstresult');
  return {
    select,
    scopes,
    where: whereArgs[0] ? searchCondition(whereArgs[0]) : undefined,
    orderBy,
    nresults: nresultsEl ? nonNegative(textContent(nresultsEl), 'DAV:nresults') : undefined,
    firstResult: firstEl ? nonNegative(textContent(firstEl), 'firstresult') : undefined,
  };
}
