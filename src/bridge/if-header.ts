/**
 * The WebDAV If header (RFC 4918 §10.4): a linear-time parser and the evaluation of the parsed
 * lists against resource state the caller supplies. Owns the grammar and the RFC semantics only:
 * it does not look up locks or etags itself (the caller's `resolve` does) and does not decide
 * statuses beyond "the header is true / false" (412 when false, §10.4.1; 400 on IfHeaderError).
 *
 * Replaces webdav-server 2.6.3's IfParser, which kills the process on an untagged `(<token>)`
 * (what Finder sends on every locked PUT) and inverts the tagged-list test (docs/client-quirks.md §0).
 * davfs2 sends one header of ~21 KB listing every lock token it holds; headers of several
 * hundred KiB with thousands of lists parse in one pass.
 */

export class IfHeaderError extends Error {
  readonly code = 'if-header-invalid';
  constructor(
    readonly reason: string,
    readonly offset: number,
  ) {
    super(`invalid If header: ${reason} (at offset ${offset})`);
    this.name = 'IfHeaderError';
  }
}

/** `<DAV:no-lock>`: a state token no resource ever has (RFC 4918 §10.4.8). */
export const NO_LOCK = 'DAV:no-lock';

export type IfCondition =
  | { readonly kind: 'token'; readonly not: boolean; readonly token: string }
  /** `etag` is the entity-tag as sent, quoted (`"x"` or `W/"x"`); an unquoted `[x]` is read as `"x"`. */
  | { readonly kind: 'etag'; readonly not: boolean; readonly etag: string };

export interface IfList {
  /** The resource tag as sent (a path or an absolute URL); undefined for an untagged list. */
  readonly resourceTag: string | undefined;
  readonly conditions: readonly IfCondition[];
}

export interface IfHeader {
  readonly tagged: boolean;
  readonly lists: readonly IfList[];
  /**
   * Every state token in the header except DAV:no-lock, in order of first appearance. These are
   * the lock tokens the request "submits" (RFC 4918 §10.4.1, §7.5): a lock is satisfied when its
   * token is among them, whatever list it stands in and whatever that list evaluated to.
   */
  readonly lockTokens: readonly string[];
}

/** Longest header parsed; the HTTP server's own limit (maxHeaderSize) is below it. */
export const MAX_IF_HEADER_LENGTH = 1024 * 1024;

/**
 * Parses an If header value. Throws only IfHeaderError, for any input. Leniencies, each for a
 * real client or for Node: commas between lists are skipped (Node joins repeated headers with
 * ", "), `Not` is case-insensitive and needs no space before `<` or `[`, and an unquoted entity
 * tag `[x]` is read as `"x"`. Mixing tagged and untagged lists is refused, as the grammar does.
 */
export function parseIfHeader(value: string): IfHeader {
  try {
    return new IfParser(value).parse();
  } catch (err) {
    if (err instanceof IfHeaderError) throw err;
    throw new IfHeaderError('unparseable', 0);
  }
}

function isSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0d || code === 0x0a;
}

class IfParser {
  private pos = 0;
  private readonly lists: IfList[] = [];
  private readonly tokens = new Set<string>();

  constructor(private readonly text: string) {}

  parse(): IfHeader {
    if (this.text.length > MAX_IF_HEADER_LENGTH) throw new IfHeaderError('header too long', MAX_IF_HEADER_LENGTH);
    let tagged: boolean | undefined;
    let currentTag: string | undefined;
    let listsForTag = 0;
    for (;;) {
      this.skipSeparators();
      if (this.pos >= this.text.length) break;
      const ch = this.text[this.pos];
      if (ch === '<') {
        if (tagged === false) throw this.error('a resource tag after untagged lists');
        if (tagged === true && listsForTag === 0) throw this.error('a resource tag without a list');
        tagged = true;
        currentTag = this.readAngle('resource tag');
        listsForTag = 0;
      } else if (ch === '(') {
        if (tagged === undefined) tagged = false;
        this.lists.push({ resourceTag: currentTag, conditions: this.readList() });
        listsForTag++;
      } else {
        throw this.error(`unexpected ${JSON.stringify(ch)}`);
      }
    }
    if (tagged === undefined) throw new IfHeaderError('no list', 0);
    if (tagged && listsForTag === 0) throw this.error('a resource tag without a list');
    return { tagged, lists: this.lists, lockTokens: [...this.tokens] };
  }

  private readList(): IfCondition[] {
    this.pos++; // '('
    const conditions: IfCondition[] = [];
    let not = false;
    for (;;) {
      this.skipSpaces();
      if (this.pos >= this.text.length) throw this.error('unclosed list');
      const ch = this.text[this.pos];
      if (ch === ')') {
        if (not) throw this.error('"Not" without a condition');
        if (conditions.length === 0) throw this.error('empty list');
        this.pos++;
        return conditions;
      }
      if (ch === '<') {
        const token = this.readAngle('state token');
        if (token.toLowerCase() === NO_LOCK.toLowerCase()) {
          conditions.push({ kind: 'token', not, token: NO_LOCK });
        } else {
          conditions.push({ kind: 'token', not, token });
          this.tokens.add(token);
        }
        not = false;
      } else if (ch === '[') {
        conditions.push({ kind: 'etag', not, etag: this.readEntityTag() });
        not = false;
      } else if ((ch === 'N' || ch === 'n') && this.text.slice(this.pos, this.pos + 3).toLowerCase() === 'not') {
        if (not) throw this.error('"Not" twice');
        const next = this.text.charCodeAt(this.pos + 3);
        if (!(isSpace(next) || next === 0x3c || next === 0x5b)) throw this.error('"Not" must precede a condition');
        not = true;
        this.pos += 3;
      } else {
        throw this.error(`unexpected ${JSON.stringify(ch)} in a list`);
      }
    }
  }

  /** Reads `<...>` and returns the trimmed content; refuses an empty one. */
  private readAngle(what: string): string {
    const close = this.text.indexOf('>', this.pos + 1);
    if (close < 0) throw this.error(`unclosed ${what}`);
    const content = this.text.slice(this.pos + 1, close).trim();
    if (content === '') throw this.error(`empty ${what}`);
    if (content.includes('<')) throw this.error(`"<" inside a ${what}`);
    this.pos = close + 1;
    return content;
  }

  private readEntityTag(): string {
    this.pos++; // '['
    this.skipSpaces();
    let weak = false;
    if (this.text.startsWith('W/', this.pos)) {
      weak = true;
      this.pos += 2;
    }
    let opaque: string;
    if (this.text[this.pos] === '"') {
      const close = this.text.indexOf('"', this.pos + 1);
      if (close < 0) throw this.error('unclosed entity tag');
      opaque = this.text.slice(this.pos, close + 1);
      this.pos = close + 1;
      this.skipSpaces();
      if (this.text[this.pos] !== ']') throw this.error('entity tag not closed by "]"');
    } else {
      const close = this.text.indexOf(']', this.pos);
      if (close < 0) throw this.error('unclosed entity tag');
      const bare = this.text.slice(this.pos, close).trim();
      if (bare === '' || /[\s"[<>()]/.test(bare)) throw this.error('malformed entity tag');
      opaque = `"${bare}"`;
      this.pos = close;
    }
    this.pos++; // ']'
    return weak ? `W/${opaque}` : opaque;
  }

  private skipSpaces(): void {
    while (this.pos < this.text.length && isSpace(this.text.charCodeAt(this.pos))) this.pos++;
  }

  private skipSeparators(): void {
    while (this.pos < this.text.length) {
      const code = this.text.charCodeAt(this.pos);
      if (!isSpace(code) && code !== 0x2c) break;
      this.pos++;
    }
  }

  private error(reason: string): IfHeaderError {
    return new IfHeaderError(reason, this.pos);
  }
}

/** What the caller knows about one resource when the header is evaluated. */
export interface IfResourceState {
  /** The current strong entity tag, quoted as in the ETag header; undefined if it has none. */
  readonly etag: string | undefined;
  /** Tokens of every lock whose scope includes the resource (its own and depth-infinity ancestors'). */
  readonly lockTokens: ReadonlySet<string> | readonly string[];
}

/**
 * Looks up the resource an href names: the request href for untagged lists, the resource tag
 * (path or absolute URL, as sent) for tagged ones. Undefined means unmapped: no token and no
 * entity tag match there (RFC 4918 §10.4.4). It may be async; anything it throws propagates.
 */
export type IfResolver = (href: string) => IfResourceState | undefined | Promise<IfResourceState | undefined>;

/**
 * RFC 4918 §10.4: the header is true when any list is true; a list is true when all its
 * conditions are; a tagged list is evaluated on its tagged resource, an untagged one on the
 * request URI. Lists are evaluated in order and evaluation stops at the first true list, so
 * `resolve` is called at most once per distinct href and often only once.
 */
export async function evaluateIf(header: IfHeader, requestHref: string, resolve: IfResolver): Promise<boolean> {
  const states = new Map<string, IfResourceState | undefined>();
  for (const list of header.lists) {
    const href = list.resourceTag ?? requestHref;
    let state: IfResourceState | undefined;
    if (states.has(href)) {
      state = states.get(href);
    } else {
      state = await resolve(href);
      states.set(href, state);
    }
    if (list.conditions.every((c) => conditionHolds(c, state))) return true;
  }
  return false;
}

function conditionHolds(condition: IfCondition, state: IfResourceState | undefined): boolean {
  let matches: boolean;
  if (state === undefined) {
    matches = false;
  } else if (condition.kind === 'token') {
    matches = condition.token !== NO_LOCK && hasToken(state.lockTokens, condition.token);
  } else {
    matches = state.etag !== undefined && entityTagsMatch(condition.etag, state.etag);
  }
  return condition.not ? !matches : matches;
}

function hasToken(tokens: ReadonlySet<string> | readonly string[], token: string): boolean {
  return tokens instanceof Set ? tokens.has(token) : (tokens as readonly string[]).includes(token);
}

/**
 * Weak comparison (RFC 9110 §8.8.3.2): the opaque tags are equal, whatever the W/ prefixes.
 * RFC 4918 §10.4.4 lets the server choose strong or weak; the bridge's own tags are all strong,
 * so weak comparison only forgives a client that re-sends one of them marked W/.
 */
export function entityTagsMatch(a: string, b: string): boolean {
  return opaqueTag(a) === opaqueTag(b);
}

function opaqueTag(tag: string): string {
  const t = tag.trim();
  const body = t.startsWith('W/') ? t.slice(2) : t;
  return body.startsWith('"') ? body : `"${body}"`;
}

/** The set of lock tokens a request submits in its If header (empty without one). */
export function presentedLockTokens(header: IfHeader | undefined): ReadonlySet<string> {
  return new Set(header?.lockTokens ?? []);
}

/**
 * The token of a Lock-Token header (UNLOCK, RFC 4918 §10.5): `<token>`, or a bare token as
 * Windows' Mini-Redirector sometimes sends (docs/client-quirks.md §2). Undefined when absent or malformed
 * (the verb answers 400).
 */
export function parseLockTokenHeader(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let token = value.trim();
  if (token.startsWith('<')) {
    if (!token.endsWith('>')) return undefined;
    token = token.slice(1, -1).trim();
  }
  if (token === '' || /[\s<>]/.test(token)) return undefined;
  return token;
}
