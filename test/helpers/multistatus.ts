/**
 * Reads a DAV:multistatus answer (RFC 4918 §14.16) for assertions: every response with its
 * href, status and propstats, each property keyed by Clark name `{ns}local`. Parsed with saxes
 * in namespace mode, so prefixes do not matter, only namespaces — as a real client reads it.
 */
import { SaxesParser, type SaxesTagNS } from 'saxes';

export interface XmlNode {
  ns: string;
  local: string;
  children: XmlNode[];
  /** Text content, concatenated over descendants. */
  text: string;
}

export interface PropResult {
  status: number;
  node: XmlNode;
  /** Text content of the property. */
  text: string;
  /** `DAV:error` child names of its propstat (e.g. `cannot-modify-protected-property`). */
  errors: string[];
}

export interface DavResponse {
  href: string;
  /** A response-level status (DELETE/COPY members), when there is no propstat. */
  status?: number;
  props: Map<string, PropResult>;
}

const DAV = 'DAV:';

export function parseXml(xml: string): XmlNode {
  const parser = new SaxesParser({ xmlns: true });
  const stack: XmlNode[] = [];
  let root: XmlNode | undefined;
  parser.on('opentag', (tag: SaxesTagNS) => {
    const node: XmlNode = { ns: tag.uri, local: tag.local, children: [], text: '' };
    stack[stack.length - 1]?.children.push(node);
    root ??= node;
    stack.push(node);
  });
  parser.on('text', (text) => {
    for (const node of stack) node.text += text;
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  parser.write(xml).close();
  if (!root) throw new Error('no root element');
  return root;
}

function statusOf(line: string): number {
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(line.trim());
  if (!match) throw new Error(`not a status line: ${line}`);
  return Number(match[1]);
}

function child(node: XmlNode, local: string): XmlNode | undefined {
  return node.children.find((c) => c.ns === DAV && c.local === local);
}

export function parseMultistatus(xml: string): DavResponse[] {
  const root = parseXml(xml);
  if (root.ns !== DAV || root.local !== 'multistatus') throw new Error(`root is {${root.ns}}${root.local}`);
  return root.children
    .filter((c) => c.ns === DAV && c.local === 'response')
    .map((response) => {
      const hrefs = response.children.filter((c) => c.ns === DAV && c.local === 'href');
      if (hrefs.length === 0) throw new Error('a response without href');
      const props = new Map<string, PropResult>();
      for (const propstat of response.children.filter((c) => c.ns === DAV && c.local === 'propstat')) {
        const status = statusOf(child(propstat, 'status')?.text ?? '');
        const errors = child(propstat, 'error')?.children.map((e) => e.local) ?? [];
        for (const prop of child(propstat, 'prop')?.children ?? []) {
          const key = `{${prop.ns}}${prop.local}`;
          if (props.has(key)) throw new Error(`${key} appears twice in one response`);
          props.set(key, { status, node: prop, text: prop.text, errors });
        }
      }
      const statusNode = child(response, 'status');
      return { href: (hrefs[0] as XmlNode).text, ...(statusNode ? { status: statusOf(statusNode.text) } : {}), props };
    });
}

/** The response for `href`; throws when absent (with the hrefs present, for the failure message). */
export function responseFor(responses: readonly DavResponse[], href: string): DavResponse {
  const found = responses.find((r) => r.href === href);
  if (!found) throw new Error(`no response for ${href}; have ${responses.map((r) => r.href).join(', ')}`);
  return found;
}

/** A DAV: property of a response; throws when it is in no propstat. */
export function davProp(response: DavResponse, local: string): PropResult {
  const found = response.props.get(`{DAV:}${local}`);
  if (!found) throw new Error(`no DAV:${local} in the response for ${response.href}`);
  return found;
}
