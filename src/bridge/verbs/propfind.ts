/**
 * PROPFIND (RFC 4918 §9.1): Depth 0 and 1 (infinity is refused with 403 and
 * DAV:propfind-finite-depth, §9.1 / §16), allprop (with DAV:include), propname and prop. Owns
 * which live properties exist and how each is written; reads the store only through the tree
 * (one listing per folder, from the metadata cache when fresh) and never per child: a Depth 1
 * answer costs at most one dirlist, one batch read of dead properties and one of client mtimes
 * (docs/client-quirks.md §0: webdav-server answers per child and took 3.2 s on 10 000 entries).
 *
 * Hrefs echo the path as the client sent it (its own Unicode form, re-encoded segment by
 * segment), so children always sit under the requested href (rclone drops items that do not:
 * docs/client-quirks.md §3); WebDAVFS gets NFD (§1). DAV:displayname is always the href's last segment,
 * never anything else (older Windows clients take it as the name: §2).
 */
import { ocIdOf } from '../../contracts/file-ids.js';
import { LRUCache } from 'lru-cache';
import { DavStatusError } from '../dav-errors.js';
import {
  DAV_NS,
  lockDiscoveryInnerXml,
  MultistatusWriter,
  parsePropfind,
  propKey,
  readBody,
  SUPPORTED_LOCK_INNER_XML,
  type PropfindRequest,
  type PropName,
  type PropValue,
} from '../dav-xml.js';
import type { DeadProperty } from '../dead-properties.js';
import { childHref, encodeHref } from '../href.js';
import { remainingSec, type LockView } from '../locks.js';
import type { Listing } from '../metadata-cache.js';
import type { NodeEntry } from '../../store-client/contract.js';
import { ALL_PRIVILEGES, type Privilege, type Quota, type Resource } from '../store-tree.js';
import { UNLIMITED_AVAILABLE_BYTES } from '../tree/grants.js';
import type { DavContext, VerbHandler } from '../request/context.js';
import { contentTypeOf } from './get.js';
import { isMountRoot, ocPermissions } from '../oc-permissions.js';
import { etagOf } from '../request/preconditions.js';
import { formatOcChecksums } from '../../common/oc-checksum.js';
import { XML_TYPE } from '../request/respond.js';

/** Live properties in the DAV: namespace, all protected (PROPPATCH answers 403 for them). */
export const LIVE_PROPERTIES = [
  'resourcetype',
  'displayname',
  'getcontentlength',
  'getlastmodified',
  'creationdate',
  'getetag',
  'getcontenttype',
  'supportedlock',
  'lockdiscovery',
  'quota-available-bytes',
  'quota-used-bytes',
  'current-user-privilege-set',
] as const;

/** ownCloud's namespace (oc:checksums, oc:fileid, oc:permissions) and rclone's fastmail vendor's (ME:sha1hex). */
export const OC_NS = 'http://owncloud.org/ns';
export const FASTMAIL_NS = 'ME:';
/** Nextcloud's namespace: its trash properties (TrashbinPlugin), which Cyberduck and Mountain Duck read. */
export const NC_NS = 'http://nextcloud.org/ns';

/**
 * Nextcloud's favorite mark (its TagsPlugin): `1` when the caller starred the node in the store
 * (NodeEntry.isStarred, the web app's Favorites), `0` otherwise; set by PROPPATCH. Shown only
 * when asked by name, as Nextcloud does: never in allprop or propname.
 */
export const OC_FAVORITE = { ns: OC_NS, local: 'favorite' } as const satisfies PropName;

/**
 * Live properties outside DAV: that sync clients read (docs/extensions.md "Checksums"): the
 * latest revision's checksums as ownCloud writes them (`SHA1:<hex> MD5:<hex>`, rclone's
 * owncloud/nextcloud vendors) and as Fastmail does (rclone's fastmail vendor), the node UUID,
 * and ownCloud's permission letters. Shown only when known: a file whose checksums the store
 * does not publish (a foreign store, a revision the backfill has not reached) has none.
 */
const CLIENT_PROPERTIES = {
  'oc:checksums': { ns: OC_NS, local: 'checksums' },
  'oc:fileid': { ns: OC_NS, local: 'fileid' },
  'oc:id': { ns: OC_NS, local: 'id' },
  'oc:data-fingerprint': { ns: OC_NS, local: 'data-fingerprint' },
  'oc:permissions': { ns: OC_NS, local: 'permissions' },
  'nc:is-mount-root': { ns: NC_NS, local: 'is-mount-root' },
  'oc:size': { ns: OC_NS, local: 'size' },
  'ME:sha1hex': { ns: FASTMAIL_NS, local: 'sha1hex' },
  'nc:trashbin-filename': { ns: NC_NS, local: 'trashbin-filename' },
  'nc:trashbin-original-location': { ns: NC_NS, local: 'trashbin-original-location' },
  'nc:trashbin-deletion-time': { ns: NC_NS, local: 'trashbin-deletion-time' },
  'nc:has-preview': { ns: NC_NS, local: 'has-preview' },
  'oc:favorite': OC_FAVORITE,
} as const satisfies Record<string, PropName>;
type ClientProperty = keyof typeof CLIENT_PROPERTIES;
const CLIENT_PROPERTY_NAMES = Object.keys(CLIENT_PROPERTIES) as ClientProperty[];
const CLIENT_BY_KEY = new Map<string, ClientProperty>(CLIENT_PROPERTY_NAMES.map((p) => [propKey(CLIENT_PROPERTIES[p]), p]));

type LiveProperty = (typeof LIVE_PROPERTIES)[number] | ClientProperty;

const LIVE_SET: ReadonlySet<string> = new Set(LIVE_PROPERTIES);

/** The DAV: live properties (protected from PROPPATCH); the client properties are not among them. */
export function isLiveProperty(name: PropName): boolean {
  return name.ns === DAV_NS && LIVE_SET.has(name.local);
}

const NAMES = new Map<LiveProperty, PropName>([
  ...LIVE_PROPERTIES.map((local): [LiveProperty, PropName] => [local, { ns: DAV_NS, local }]),
  ...CLIENT_PROPERTY_NAMES.map((p): [LiveProperty, PropName] => [p, CLIENT_PROPERTIES[p]]),
]);
/** Every live property, as propname lists them (oc:favorite only when asked: OC_FAVORITE). */
const ALL_LIVE: readonly LiveProperty[] = [...LIVE_PROPERTIES, ...CLIENT_PROPERTY_NAMES.filter((p) => p !== 'oc:favorite')];

function nameOf(prop: LiveProperty): PropName {
  return NAMES.get(prop) as PropName;
}

/**
 * What allprop returns: every live property RFC 4918 defines (§9.1). The RFC 4331 quota
 * properties are left to clients that ask for them (Finder, rclone and davfs2 do, by name),
 * so a listing never costs a profile request.
 */
const ALLPROP: readonly LiveProperty[] = [
  ...LIVE_PROPERTIES.filter((p) => p !== 'quota-available-bytes' && p !== 'quota-used-bytes' && p !== 'current-user-privilege-set'),
  // nc:has-preview and oc:favorite only when asked (the apps ask them by name): not in every listing's weight.
  ...CLIENT_PROPERTY_NAMES.filter((p) => p !== 'nc:has-preview' && p !== 'oc:favorite'),
];

/** Windows' attribute bits (urn:schemas-microsoft-com: Win32FileAttributes, hex): read-only, directory, archive. */
const MICROSOFT_NS = 'urn:schemas-microsoft-com:';
const WIN32_ATTRIBUTES: PropName = { ns: MICROSOFT_NS, local: 'Win32FileAttributes' };
const FILE_ATTRIBUTE_READONLY = 0x01;
const FILE_ATTRIBUTE_DIRECTORY = 0x10;
const FILE_ATTRIBUTE_ARCHIVE = 0x20;

/**
 * RFC 3744 §5.4 privileges from the node permissions (docs/api.md): read -> DAV:read (and
 * read-current-user-privilege-set); write -> write-content, write-properties and bind (create
 * members); delete -> unbind (remove members); all four -> the aggregates DAV:write and DAV:all.
 * `download` has no DAV privilege of its own: DAV:read without it still lists, GET answers 403.
 */
export function privilegeSetXml(granted: ReadonlySet<Privilege>): string {
  const names: string[] = [];
  if (granted.has('read')) names.push('read', 'read-current-user-privilege-set');
  if (granted.has('write')) names.push('write-content', 'write-properties', 'bind');
  if (granted.has('delete')) names.push('unbind');
  if (granted.has('write') && granted.has('delete')) names.push('write');
  if (ALL_PRIVILEGES.size === granted.size) names.push('all');
  return names.map((name) => `<D:privilege><D:${name}/></D:privilege>`).join('');
}

/**
 * The Win32FileAttributes a read-only resource shows (Windows Explorer then shows it read-only):
 * what the client stored, or directory/archive by kind, with the read-only bit set.
 */
function readOnlyAttributes(stored: string | undefined, isCollection: boolean): string {
  const parsed = stored !== undefined && /^[0-9A-Fa-f]{1,8}$/.test(stored.trim()) ? parseInt(stored.trim(), 16) : undefined;
  const base = parsed ?? (isCollection ? FILE_ATTRIBUTE_DIRECTORY : FILE_ATTRIBUTE_ARCHIVE);
  return ((base | FILE_ATTRIBUTE_READONLY) >>> 0).toString(16).toUpperCase().padStart(8, '0');
}

export { UNLIMITED_AVAILABLE_BYTES };

/** One requested property, classified once per request instead of once per resource. */
type Wanted = { live: LiveProperty; name: PropName } | { live: undefined; name: PropName; key: string };

function classify(names: readonly PropName[]): Wanted[] {
  return names.map((name) => {
    if (name.ns === DAV_NS && LIVE_SET.has(name.local)) return { live: name.local as LiveProperty, name };
    const key = propKey(name);
    const client = CLIENT_BY_KEY.get(key);
    return client !== undefined ? { live: client, name } : { live: undefined, name, key };
  });
}

/** What the per-resource writer needs, gathered before the loop. */
interface Sources {
  /** Dead properties by node key; undefined when the request needs none. */
  dead: Map<string, DeadProperty[]> | undefined;
  /** Client mtimes by node key; undefined when getlastmodified is not asked. */
  mtimes: Map<string, number> | undefined;
  quota: Quota | undefined;
  /** The locks lockdiscovery shows, read once per request; undefined when none is shown. */
  locks: LockView | undefined;
  /** Privileges by resource (its tree's), when the request needs them. */
  privileges: Map<string, ReadonlySet<Privilege>> | undefined;
  /** Whether the caller may share the resource on (ownCloud's R), when oc:permissions is shown. */
  sharing: Map<string, boolean> | undefined;
  /** Numeric file ids by resource key (file-ids.ts) and the instance's names, when the request shows them. */
  fileIds: { numbers: Map<string, number>; instanceId: string; dataFingerprint: string } | undefined;
  ctx: DavContext;
  nowMs: number;
}

export const propfind: VerbHandler = async (ctx) => {
  const user = ctx.user();
  const depth = depthOf(ctx);
  const request: PropfindRequest = hasBody(ctx) ? parsePropfind(await readBody(ctx.req)) : { kind: 'allprop', include: [] };
  const { tree, props, locks } = ctx.services;

  const resource = await tree.tryStat(user, ctx.path, true);
  // A plain 404, not a 207 holding one: Windows probes every name before creating it (docs/client-quirks.md §2).
  if (!resource) throw new DavStatusError(404, 'no such resource');
  const isCollection = resource.entry.kind === 'folder';

  const wanted = request.kind === 'prop' ? classify(request.props) : request.kind === 'allprop' ? classify(request.include) : [];
  const asks = (prop: LiveProperty): boolean => wanted.some((w) => w.live === prop);
  // One read of the locks on the resource and its members (never one per entry); the body
  // cache below is used only when none is shown, as lockdiscovery counts its timeout down.
  const lockView =
    request.kind === 'allprop' || asks('lockdiscovery') ? await locks.view(resource.chain, depth === 1 && isCollection) : undefined;
  const needsLocks = lockView !== undefined && !lockView.isEmpty;
  const needsQuota =
    isCollection && (request.kind === 'propname' || asks('quota-available-bytes') || asks('quota-used-bytes')) && quotaShownTo(ctx);
  const quota = needsQuota ? await tree.quota(user, resource) : undefined;

  const rawSegments = ctx.target.rawSegments;
  const selfHref = ctx.hrefBase + encodeHref(rawSegments, { collection: isCollection, nfd: ctx.nfd });

  const showsLetters = request.kind !== 'prop' || asks('oc:permissions');
  let cacheKey: string | undefined;
  let keyedListing: { listing: Listing; changes: number } | undefined;
  if (depth === 1 && isCollection && resource.kind !== 'root' && !needsLocks) {
    const listing = await tree.listing(user, resource.entry.id);
    // What the members' oc:permissions follow from: the folder's privileges, and whether its
    // nodes may be shared on (a member's share permission changes without the listing changing).
    const [privileges, sharesOn] = await Promise.all([tree.privileges(user, resource), showsLetters && tree.mayShare(user, { ...resource, kind: 'node' })]);
    const granted = `${[...privileges].sort().join(',')}${sharesOn ? '+R' : ''}`;
    cacheKey = `${bodyCacheKey(listing, props.version, request, wanted, selfHref, ctx.nfd, resource, quota)}\0${granted}\0${user.hidesMacSideFiles ? 'hides' : 'all'}${user.clientView ? '\0view' : ''}\0${ctx.services.previews.stateKey}`;
    keyedListing = { listing, changes: listing.changes };
    const cached = bodies.get(cacheKey);
    if (cached !== undefined) {
      sendBody(ctx, cached);
      return;
    }
  }

  const children = depth === 1 && isCollection ? await tree.list(user, resource) : [];
  const selfName = rawSegments[rawSegments.length - 1] ?? '';
  const items: AnsweredResource[] = [{ resource, href: selfHref, name: ctx.nfd ? selfName.normalize('NFD') : selfName }];
  for (const child of children) {
    const name = ctx.nfd ? child.entry.name.normalize('NFD') : child.entry.name;
    items.push({ resource: child, href: childHref(selfHref, name, { collection: child.entry.kind === 'folder' }), name });
  }
  const writer = await writeResources(ctx, request, items, { quota, locks: needsLocks ? lockView : undefined });
  const body = Buffer.from(writer.toString(), 'utf8');
  // Kept only while the listing it was made from is unchanged and still cached.
  if (cacheKey !== undefined && keyedListing && keyedListing.listing.changes === keyedListing.changes) {
    rememberBody(keyedListing.listing, cacheKey, body);
  }
  sendBody(ctx, body);
};


/** A resource of a multistatus answer: its href and the name shown as its displayname. */
export interface AnsweredResource {
  resource: Resource;
  href: string;
  name: string;
}

/**
 * The multistatus of `items` with the properties `request` asks (PROPFIND's, and SEARCH's select:
 * verbs/search.ts): what the properties need is gathered once for all of them (privileges and
 * sharing per tree, dead properties, mtimes and file ids in one read each), then each is written.
 */
export async function writeResources(
  ctx: DavContext,
  request: PropfindRequest,
  items: readonly AnsweredResource[],
  shown: { quota?: Quota | undefined; locks?: LockView | undefined } = {},
): Promise<MultistatusWriter> {
  const wanted = request.kind === 'prop' ? classify(request.props) : request.kind === 'allprop' ? classify(request.include) : [];
  const asks = (prop: LiveProperty): boolean => wanted.some((w) => w.live === prop);
  const needsDead = request.kind !== 'prop' || wanted.some((w) => w.live === undefined);
  const needsMtimes = request.kind === 'allprop' || asks('getlastmodified');
  const showsLetters = request.kind !== 'prop' || asks('oc:permissions');
  const resources = items.map((item) => item.resource);
  const needsPrivileges =
    request.kind !== 'prop' || asks('current-user-privilege-set') || asks('oc:permissions') || wanted.some((w) => w.name.ns === MICROSOFT_NS && w.name.local === WIN32_ATTRIBUTES.local);
  const [privileges, sharing] = await Promise.all([
    needsPrivileges ? privilegesByTree(ctx, resources) : undefined,
    showsLetters ? sharingByTree(ctx, resources) : undefined,
  ]);
  const keys = needsDead || needsMtimes ? resources.map(keyOf) : undefined;
  const needsFileIds = request.kind === 'allprop' || request.kind === 'propname' || asks('oc:fileid') || asks('oc:id') || asks('oc:data-fingerprint');
  const { props, clock } = ctx.services;
  const [dead, mtimes, fileIds] = await Promise.all([
    needsDead ? props.listMany(keys as string[]) : undefined,
    needsMtimes ? props.getMtimes(keys as string[]) : undefined,
    needsFileIds ? fileIdsOf(ctx, resources) : undefined,
  ]);
  const sources: Sources = { dead, mtimes, quota: shown.quota, locks: shown.locks, privileges, sharing, fileIds, ctx, nowMs: clock.now() };
  const writer = new MultistatusWriter();
  for (const item of items) writeResponse(writer, request, wanted, sources, item.resource, item.href, item.name);
  return writer;
}

/** The multistatus body of `request` over `resources` (writeResources, as bytes: the favorites REPORT's answer). */
export async function multistatusOf(
  ctx: DavContext,
  request: PropfindRequest,
  resources: readonly AnsweredResource[],
  shown: { quota?: Quota | undefined; locks?: LockView | undefined } = {},
): Promise<Buffer> {
  return Buffer.from((await writeResources(ctx, request, resources, shown)).toString(), 'utf8');
}

/**
 * Serialized Depth 1 answers, reused while nothing they show can have changed: the folder's
 * listing is the same object at the same `changes` count (the metadata cache replaces it at
 * the end of its TTL and on writes with an unknown outcome, and counts the patches of known
 * ones), no dead property or client mtime changed anywhere through this bridge (the property
 * repository's version), the folder's own entry and the request are the same, and no lock is
 * shown (read afresh for every request, so a lock taken through any instance shows at once;
 * lockdiscovery counts its timeout down). Shared by every bridge in the process: a listing
 * object belongs to one bridge, so its id keeps their entries apart.
 *
 * Several instances over one database: a dead property or client mtime changed through another
 * instance moves the version through the change feed, and a listing changed there is replaced
 * (docs/scale-out.md "Caches across instances"); while the feed is down, within
 * `bridge.cacheTtlMs` (2 s by default).
 */
const bodies = new LRUCache<string, Buffer>({ max: 1024, maxSize: 32 * 1024 * 1024, sizeCalculation: (body) => Math.max(1, body.length) });
const listingIds = new WeakMap<Listing, number>();
let nextListingId = 1;
/** The body keys made from each listing, so they go when the listing does. */
const bodyKeys = new WeakMap<Listing, string[]>();

function rememberBody(listing: Listing, key: string, body: Buffer): void {
  bodies.set(key, body);
  const keys = bodyKeys.get(listing);
  if (keys) keys.push(key);
  else bodyKeys.set(listing, [key]);
}

/** How many serialized answers are kept (diagnostics and tests). */
export function cachedAnswerCount(): number {
  return bodies.size;
}

/**
 * The metadata cache's `onStale` hook: a listing left the cache (replaced, expired, evicted) or
 * was patched, so no answer made from it can be served again. Dropping those answers at once
 * frees them (a 10,000-entry folder's answer is megabytes) instead of leaving them to the LRU.
 */
export function forgetBodiesOf(listing: Listing): void {
  const keys = bodyKeys.get(listing);
  if (!keys) return;
  bodyKeys.delete(listing);
  for (const key of keys) bodies.delete(key);
}

function bodyCacheKey(
  listing: Listing,
  propsVersion: number,
  request: PropfindRequest,
  wanted: readonly Wanted[],
  selfHref: string,
  nfd: boolean,
  resource: Resource,
  quota: Quota | undefined,
): string {
  let id = listingIds.get(listing);
  if (id === undefined) {
    id = nextListingId++;
    listingIds.set(listing, id);
  }
  let key = `${id}.${listing.changes}\0${propsVersion}\0${nfd ? 'nfd' : 'raw'}\0${selfHref}\0${etagOf(resource)}\0${resource.entry.updatedMs}\0${request.kind}`;
  for (const w of wanted) key += `\0${w.live === undefined ? w.key : w.live}`;
  if (quota !== undefined) key += `\0${quota.usedBytes}/${quota.availableBytes}`;
  return key;
}

function sendBody(ctx: DavContext, body: Buffer): void {
  ctx.res.writeHead(207, { 'Content-Type': XML_TYPE, 'Content-Length': String(body.length) });
  ctx.res.end(body);
}

/** RFC 4918 §10.2: no Depth header means infinity. */
function depthOf(ctx: DavContext): 0 | 1 {
  const header = ctx.req.headers.depth;
  const raw = (Array.isArray(header) ? header.join(',') : header)?.trim();
  if (raw === '0') return 0;
  if (raw === '1') return 1;
  if (raw === undefined || raw.toLowerCase() === 'infinity') {
    throw new DavStatusError(403, 'PROPFIND with Depth infinity is not served', 'propfind-finite-depth');
  }
  throw new DavStatusError(400, 'Depth must be 0, 1 or infinity');
}

/** Most PROPFINDs carry no body (an allprop, RFC 4918 §9.1): skip reading it. */
function hasBody(ctx: DavContext): boolean {
  const length = ctx.req.headers['content-length'];
  if (length !== undefined) return length.trim() !== '0';
  return ctx.req.headers['transfer-encoding'] !== undefined;
}

/**
 * The privileges of every resource of the answer: one lookup per tree they lie in (members of a
 * folder share its tree), so a Depth 1 answer costs at most a myaccess per top-level folder.
 */
async function privilegesByTree(ctx: DavContext, resources: readonly Resource[]): Promise<Map<string, ReadonlySet<Privilege>>> {
  const user = ctx.user();
  // One lookup per distinct tree, then a plain pass over the (possibly 10,000) resources.
  const lookups = new Map<string, Promise<ReadonlySet<Privilege>>>();
  const trees = resources.map((resource) => {
    const tree = treeOf(resource);
    if (!lookups.has(tree)) lookups.set(tree, ctx.services.tree.privileges(user, resource));
    return tree;
  });
  const byTree = new Map<string, ReadonlySet<Privilege>>();
  await Promise.all([...lookups].map(async ([tree, lookup]) => byTree.set(tree, await lookup)));
  const out = new Map<string, ReadonlySet<Privilege>>();
  resources.forEach((resource, i) => out.set(keyOf(resource), byTree.get(trees[i] as string) as ReadonlySet<Privilege>));
  return out;
}

/**
 * Whether the caller may share each resource on: one answer per tree and kind of resource (a
 * top-level folder or the trash's entries never: Grants.mayShare), so a Depth 1 answer costs at
 * most a listGroups, remembered briefly.
 */
async function sharingByTree(ctx: DavContext, resources: readonly Resource[]): Promise<Map<string, boolean>> {
  const user = ctx.user();
  const lookups = new Map<string, Promise<boolean>>();
  const trees = resources.map((resource) => {
    const tree = `${treeOf(resource)}\0${resource.kind}`;
    if (!lookups.has(tree)) lookups.set(tree, ctx.services.tree.mayShare(user, resource));
    return tree;
  });
  const byTree = new Map<string, boolean>();
  await Promise.all([...lookups].map(async ([tree, lookup]) => byTree.set(tree, await lookup)));
  const out = new Map<string, boolean>();
  resources.forEach((resource, i) => out.set(keyOf(resource), byTree.get(trees[i] as string) === true));
  return out;
}

function treeOf(resource: Resource): string {
  return resource.kind === 'root' || resource.kind === 'virtual' ? `${resource.kind}` : (resource.shareRoot ?? resource.top?.id ?? 'none');
}

/** The numbers of the answer's resources and the instance's names (one read of the bridge's map at most). */
async function fileIdsOf(ctx: DavContext, resources: readonly Resource[]): Promise<NonNullable<Sources['fileIds']>> {
  const [numbers, names] = await Promise.all([ctx.services.fileIds.of(resources), ctx.services.fileIds.instance()]);
  return { numbers, ...names };
}

/** The key dead properties, mtimes and locks hang on: the last of the resource's chain. */
function keyOf(resource: Resource): string {
  return resource.chain[resource.chain.length - 1] as string;
}

const DARWIN = /\bDarwin\/(\d+)(?:\.(\d+))?/;

/**
 * macOS 15.4 and later (Darwin 24.4+) was reported to stall mounting for ~90 s when quota
 * properties are returned (docs/client-quirks.md §1); the `quotaForNewMacOS` setting decides for them.
 */
function quotaShownTo(ctx: DavContext): boolean {
  if (ctx.services.quotaForNewMacOS) return true;
  const match = DARWIN.exec(ctx.req.headers['user-agent'] ?? '');
  if (!match) return true;
  const major = Number(match[1]);
  const minor = Number(match[2] ?? 0);
  return major < 24 || (major === 24 && minor < 4);
}

function writeResponse(
  writer: MultistatusWriter,
  request: PropfindRequest,
  wanted: readonly Wanted[],
  sources: Sources,
  resource: Resource,
  href: string,
  displayName: string,
): void {
  const found: PropValue[] = [];
  const dead = sources.dead?.get(keyOf(resource));
  if (request.kind === 'propname') {
    for (const prop of ALL_LIVE) {
      if (liveValue(prop, resource, displayName, sources) !== undefined) found.push({ name: nameOf(prop) });
    }
    if (dead) for (const p of dead) found.push({ name: { ns: p.ns, local: p.local } });
    writer.addPropstats(href, [{ status: 200, props: found }]);
    return;
  }
  const missing: PropValue[] = [];
  const readOnly = isReadOnly(resource, sources);
  const storedAttributes = dead?.find((p) => p.ns === MICROSOFT_NS && p.local === WIN32_ATTRIBUTES.local);
  const attributes: PropValue | undefined = readOnly
    ? { name: WIN32_ATTRIBUTES, text: readOnlyAttributes(storedAttributes ? textOf(storedAttributes.xml) : undefined, resource.entry.kind === 'folder') }
    : undefined;
  if (request.kind === 'allprop') {
    for (const prop of ALLPROP) {
      const value = liveValue(prop, resource, displayName, sources);
      if (value !== undefined) found.push(value);
    }
    if (dead) for (const p of dead) if (!(attributes && p === storedAttributes)) found.push({ name: p, elementXml: p.xml });
    if (attributes) found.push(attributes);
  }
  for (const w of wanted) {
    if (attributes && w.name.ns === MICROSOFT_NS && w.name.local === WIN32_ATTRIBUTES.local) {
      if (request.kind !== 'allprop') found.push(attributes);
      continue;
    }
    if (w.live !== undefined) {
      // allprop already holds these unless they are the quota properties.
      if (request.kind === 'allprop' && ALLPROP.includes(w.live)) continue;
      const value = liveValue(w.live, resource, displayName, sources);
      if (value !== undefined) found.push(value);
      else missing.push({ name: w.name });
      continue;
    }
    const stored = dead?.find((p) => p.ns === w.name.ns && p.local === w.name.local);
    if (request.kind === 'allprop') {
      if (stored === undefined) missing.push({ name: w.name });
    } else if (stored !== undefined) {
      found.push({ name: w.name, elementXml: stored.xml });
    } else {
      missing.push({ name: w.name });
    }
  }
  writer.addPropstats(href, [
    { status: 200, props: found },
    { status: 404, props: missing },
  ]);
}

/** A live property's value for a resource, or undefined when it has none (it goes into 404). */
function liveValue(prop: LiveProperty, resource: Resource, displayName: string, sources: Sources): PropValue | undefined {
  const { entry } = resource;
  const isFile = entry.kind === 'file';
  switch (prop) {
    case 'resourcetype':
      return isFile ? { name: nameOf(prop) } : { name: nameOf(prop), innerXml: '<D:collection/>' };
    case 'displayname':
      return { name: nameOf(prop), text: displayName };
    case 'getcontentlength':
      return isFile ? { name: nameOf(prop), text: String(entry.sizeBytes) } : undefined;
    case 'getlastmodified':
      return { name: nameOf(prop), text: httpDate(sources.mtimes?.get(keyOf(resource)) ?? entry.updatedMs) };
    case 'creationdate':
      // The listing carries no creation time (a Directory entry of docs/api.md has only `updated`), and
      // asking node details per child would cost a store call each: `updated` stands in.
      return { name: nameOf(prop), text: rfc3339(entry.updatedMs) };
    case 'getetag':
      return { name: nameOf(prop), text: etagOf(resource) };
    case 'getcontenttype':
      // From the name only: sniffing content would cost a download per file (docs/client-quirks.md §3).
      return isFile ? { name: nameOf(prop), text: contentTypeOf(entry.name) } : undefined;
    case 'supportedlock':
      return { name: nameOf(prop), innerXml: SUPPORTED_LOCK_INNER_XML };
    case 'lockdiscovery':
      return { name: nameOf(prop), innerXml: sources.locks ? lockDiscovery(resource, sources) : '' };
    case 'quota-available-bytes':
      if (isFile || sources.quota === undefined) return undefined;
      return {
        name: nameOf(prop),
        text: String(Number.isFinite(sources.quota.availableBytes) ? sources.quota.availableBytes : UNLIMITED_AVAILABLE_BYTES),
      };
    case 'quota-used-bytes':
      return isFile || sources.quota === undefined ? undefined : { name: nameOf(prop), text: String(sources.quota.usedBytes) };
    case 'current-user-privilege-set': {
      const granted = sources.privileges?.get(keyOf(resource));
      return granted ? { name: nameOf(prop), innerXml: privilegeSetXml(granted) } : undefined;
    }
    case 'oc:checksums': {
      const value = formatOcChecksums(entry.checksums);
      // `oc` is declared on the root: writing this property's own name declares OC_NS there,
      // and dav-xml.ts gives that prefix to OC_NS only (its well-known prefixes).
      return value === undefined ? undefined : { name: nameOf(prop), innerXml: `<oc:checksum>${value}</oc:checksum>` };
    }
    case 'oc:size': {
      // A folder's recursive size where the store publishes it (docs/extensions.md "Tree versions and sizes").
      const size = isFile ? entry.sizeBytes : entry.treeSizeBytes;
      return size === undefined ? undefined : { name: nameOf(prop), text: String(size) };
    }
    case 'ME:sha1hex':
      return entry.checksums ? { name: nameOf(prop), text: entry.checksums.sha1 } : undefined;
    case 'oc:fileid': {
      // Numeric: Nextcloud's Android library reads it as a 64-bit integer (docs/extensions.md "Numeric file ids").
      const n = sources.fileIds?.numbers.get(keyOf(resource));
      return n === undefined ? undefined : { name: nameOf(prop), text: String(n) };
    }
    case 'oc:id': {
      const n = sources.fileIds?.numbers.get(keyOf(resource));
      return n === undefined || sources.fileIds === undefined ? undefined : { name: nameOf(prop), text: ocIdOf(n, sources.fileIds.instanceId) };
    }
    case 'oc:data-fingerprint':
      return resource.kind === 'root' && sources.fileIds ? { name: nameOf(prop), text: sources.fileIds.dataFingerprint } : undefined;
    case 'oc:permissions': {
      const granted = sources.privileges?.get(keyOf(resource));
      return granted ? { name: nameOf(prop), text: ocPermissions(resource, granted, sources.sharing?.get(keyOf(resource)) === true) } : undefined;
    }
    case 'oc:favorite':
      return { name: nameOf(prop), text: resource.kind === 'node' && entry.isStarred ? '1' : '0' };
    case 'nc:is-mount-root':
      return isMountRoot(resource) ? { name: nameOf(prop), text: 'true' } : undefined;
    case 'nc:trashbin-filename': {
      const trashed = trashedOf(resource);
      return trashed ? { name: nameOf(prop), text: trashed.originalName } : undefined;
    }
    case 'nc:trashbin-original-location': {
      const location = originalLocationOf(resource);
      return location === undefined ? undefined : { name: nameOf(prop), text: location };
    }
    case 'nc:trashbin-deletion-time': {
      const deletedMs = trashedOf(resource)?.deletedMs;
      // Seconds since the epoch, as Nextcloud writes it.
      return deletedMs === undefined ? undefined : { name: nameOf(prop), text: String(Math.floor(deletedMs / 1000)) };
    }
    case 'nc:has-preview':
      // From the name and size alone (previews.ts): nothing is read or decoded for a listing.
      return { name: nameOf(prop), text: sources.ctx.services.previews.mayHave(entry) ? 'true' : 'false' };
  }
}

/** What the store tells of an entry of a trash folder (docs/extensions.md "Trash and revisions from a client"); undefined elsewhere. */
function trashedOf(resource: Resource): NodeEntry['trashed'] {
  if (resource.kind !== 'node' || resource.top?.name !== 'trash' || resource.parent?.id !== resource.top.id) return undefined;
  return resource.entry.trashed;
}

/**
 * Where a trash entry was, as a path from the drive's root without the leading slash (Nextcloud
 * gives it relative to the user's files): `home/docs/report.odt`, or for a group's trash
 * `groups/<name>/home/docs/report.odt`. Undefined when the store does not say.
 */
export function originalLocationOf(resource: Resource): string | undefined {
  const trashed = trashedOf(resource);
  if (!trashed?.fromPath) return undefined;
  // The trash entry's path is <prefix>/trash/<name>: the prefix names whose drive it is.
  const prefix = resource.path.split('/').slice(1, -2);
  return [...prefix, ...trashed.fromPath, trashed.originalName].join('/');
}

/** A resource in a tree the user may not write (the root and virtual collections are not: nothing to mark). */
function isReadOnly(resource: Resource, sources: Sources): boolean {
  if (resource.kind === 'root' || resource.kind === 'virtual') return false;
  const granted = sources.privileges?.get(keyOf(resource));
  return granted !== undefined && !granted.has('write');
}

/** The text inside a stored property element (`<Z:Win32FileAttributes ...>00000020</...>`). */
function textOf(elementXml: string): string {
  return /^<[^>]*>([^<]*)<\/[^>]*>$/.exec(elementXml.trim())?.[1] ?? '';
}

function lockDiscovery(resource: Resource, sources: Sources): string {
  const covering = sources.locks?.covering(resource.chain) ?? [];
  if (covering.length === 0) return '';
  return lockDiscoveryInnerXml(covering.map((lock) => ({ ...lock, timeoutSec: remainingSec(lock, sources.nowMs) })));
}

const WEEKDAYS = ['Thu', 'Fri', 'Sat', 'Sun', 'Mon', 'Tue', 'Wed'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => (i < 10 ? `0${i}` : String(i)));
const DAY_MS = 86_400_000;
/** Years formatted by hand; anything else (or not a number) goes through Date. */
const FAST_FROM_MS = Date.UTC(1000, 0, 1);
const FAST_UNTIL_MS = Date.UTC(10000, 0, 1);

interface Civil {
  year: number;
  month: number;
  day: number;
  weekday: number;
  hour: number;
  minute: number;
  second: number;
}

/**
 * UTC calendar fields of a time, by integer arithmetic (Hinnant's civil_from_days): a listing
 * formats two dates per entry, and Date's toUTCString/toISOString cost several times more.
 */
function civilOf(ms: number): Civil {
  const days = Math.floor(ms / DAY_MS);
  const secs = Math.floor(ms / 1000) - days * 86_400;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const month = mp < 10 ? mp + 3 : mp - 9;
  return {
    year: yoe + era * 400 + (month <= 2 ? 1 : 0),
    month,
    day: doy - Math.floor((153 * mp + 2) / 5) + 1,
    weekday: ((days % 7) + 7) % 7,
    hour: Math.floor(secs / 3600),
    minute: Math.floor(secs / 60) % 60,
    second: secs % 60,
  };
}

function isFast(ms: number): boolean {
  return ms >= FAST_FROM_MS && ms < FAST_UNTIL_MS;
}

/** RFC 9110 §5.6.7 IMF-fixdate, as DAV:getlastmodified requires (RFC 4918 §15.7). */
export function httpDate(ms: number): string {
  if (!isFast(ms)) return dateOf(ms).toUTCString();
  const c = civilOf(ms);
  return `${WEEKDAYS[c.weekday]}, ${TWO_DIGITS[c.day]} ${MONTHS[c.month - 1]} ${c.year} ${TWO_DIGITS[c.hour]}:${TWO_DIGITS[c.minute]}:${TWO_DIGITS[c.second]} GMT`;
}

/** RFC 3339 date-time in UTC without fractional seconds (RFC 4918 §15.1). */
export function rfc3339(ms: number): string {
  if (!isFast(ms)) return `${dateOf(ms).toISOString().slice(0, -5)}Z`;
  const c = civilOf(ms);
  return `${c.year}-${TWO_DIGITS[c.month]}-${TWO_DIGITS[c.day]}T${TWO_DIGITS[c.hour]}:${TWO_DIGITS[c.minute]}:${TWO_DIGITS[c.second]}Z`;
}

/** A foreign store may send a time no Date can hold; the epoch is shown rather than failing the listing. */
function dateOf(ms: number): Date {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? new Date(0) : date;
}
