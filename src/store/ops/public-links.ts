/**
 * Using a public or upload link without a session (docs/extensions.md "Share links and private
 * shares"): the token (only its SHA-256 is stored) names the share; an expired link answers 410
 * `link_expired`, a removed or unknown one, one whose node lies in trash, and one whose creator
 * no longer holds `read` and `download` (an upload link: `write`) on its node, 404. A password
 * comes as HTTP Basic (any username) or, from the app's page, as an unlock cookie
 * (link-unlock.ts); wrong ones are counted per link, and per link and address, like failed
 * logins (429 while blocked). A public link reads its node (a folder: its listing, and
 * the files and folders below by path); an upload link only takes new files into its folder,
 * never overwriting (a clash gets a numbered name), counted against the folder owner's quota.
 */
import { contentTypeOf } from '../../common/content-security.js';
import { logFailedLogin } from '../../common/login-log.js';
import { withSql } from '../context.js';
import { creatorAccess, type Permission } from '../access.js';
import type { StoreContext } from '../context.js';
import { remainingBytes, getRevision, insertNewFile, type UploadResult } from '../storage/revisions.js';
import { getChildByName, getNode, listChildren, type NodeRow } from '../storage/nodes.js';
import { isMacSideEntry } from '../../common/side-files.js';
import { getShare, shareByTokenHash, type ShareRow } from '../storage/shares.js';
import type { FileVersion } from './download.js';
import { assertRoom, freeName, isInTrash } from './tree.js';
import { forbidden, notFound, StoreHttpError } from '../envelope.js';
import { verifyPassword } from '../passwords.js';
import { hashLinkToken } from './shares.js';
import type { LinkInfo, LinkListing } from '../schemas/public-links.js';

export type { LinkInfo, LinkListing };

export interface OpenedLink {
  share: ShareRow;
  node: NodeRow;
}

const linkNotFound = () => notFound('no such link');

/** The live share and node behind a link (404 removed, unknown or in trash; 410 expired). */
async function liveLink(ctx: StoreContext, share: ShareRow | undefined): Promise<OpenedLink> {
  if (!share || share.type === 'private') throw linkNotFound();
  const node = await getNode(ctx.storage.sql, share.node_uuid);
  if (!node || (await isInTrash(ctx.storage.sql, node))) throw linkNotFound();
  if (share.expires !== null && ctx.clock.now() >= share.expires) throw new StoreHttpError(410, 'link_expired', 'this link has expired');
  // A link gives at most what its creator holds now (access.ts): one whose creator lost it is as gone.
  const held = await creatorAccess(ctx.storage.sql, share.creator_uuid, node);
  const needed = share.type === 'upload' ? ['write'] : ['read', 'download'];
  if (!needed.every((p) => held.includes(p as Permission))) throw linkNotFound();
  return { share, node };
}

function basicPassword(authorization: string | undefined): string | undefined {
  const match = /^Basic\s+(\S+)$/i.exec(authorization ?? '');
  if (!match) return undefined;
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? undefined : decoded.slice(colon + 1);
}

const CHALLENGE = { 'WWW-Authenticate': 'Basic realm="driveway link", charset="UTF-8"' };

/** How a request proves a link's password: HTTP Basic, or the page's unlock cookie (link-unlock.ts). */
export interface LinkProof {
  authorization: string | undefined;
  /** Whether the page's unlock cookie for this link is valid (checked by the caller, which reads cookies). */
  unlocked: (link: OpenedLink) => Promise<boolean>;
  /** A 401 carries a Basic challenge (programs); never to the app's page, or the browser shows its Basic box. */
  challenge: boolean;
}

/** The link `token` as it stands, before any password (404 removed or unknown, 410 expired). */
export async function findLink(ctx: StoreContext, token: string): Promise<OpenedLink> {
  return liveLink(ctx, await shareByTokenHash(ctx.storage.sql, hashLinkToken(token)));
}

/**
 * Opens the link `token` for a request from `ip`, checking its password when it has one: a valid
 * unlock cookie, else HTTP Basic; 401 (with a Basic challenge when `proof.challenge`) when
 * missing or wrong, 429 `rate_limited` while wrong passwords for this link from this address (or
 * for this link from anywhere) are blocked.
 */
export async function openLink(ctx: StoreContext, token: string, proof: LinkProof, ip: string): Promise<OpenedLink> {
  const link = await findLink(ctx, token);
  if (link.share.password_hash === null || (await proof.unlocked(link))) return link;
  return checkLinkPassword(ctx, link, basicPassword(proof.authorization), ip, proof.challenge ? CHALLENGE : {});
}

/**
 * `password` against the link's: the one check behind Basic and the page's unlock, counted
 * against the same limiter. Counted per link, and per link and address: one address's guesses
 * block it on this link only. Counted before the password is checked (login-limiter.ts), so
 * parallel guesses never get more checks than the limit. Answers the link as it stands after.
 */
export async function checkLinkPassword(ctx: StoreContext, link: OpenedLink, password: string | undefined, ip: string, challenge: Record<string, string> = {}): Promise<OpenedLink> {
  const shareUuid = link.share.uuid;
  const passwordHash = link.share.password_hash;
  if (passwordHash === null) return link;
  const reservation = await ctx.linkLimiter.reserve(shareUuid, `${shareUuid} ${ip}`);
  if (!reservation.allowed) {
    logFailedLogin(ctx.log, 'link', shareUuid, ip, 'rate limited');
    throw new StoreHttpError(429, 'rate_limited', 'too many wrong passwords for this link; try again later', { 'Retry-After': String(reservation.retryAfterSec) });
  }
  const { attempt } = reservation;
  try {
    if (password === undefined) {
      await attempt.released();
      throw new StoreHttpError(401, 'unauthenticated', 'this link needs its password (HTTP Basic, any username)', challenge);
    }
    if (!(await verifyPassword(password, passwordHash))) {
      await attempt.failed();
      logFailedLogin(ctx.log, 'link', shareUuid, ip, 'wrong password');
      throw new StoreHttpError(401, 'unauthenticated', 'wrong password for this link', challenge);
    }
    await attempt.succeeded();
  } finally {
    await attempt.failed();
  }
  // The password check awaited: the link may have been removed meanwhile.
  return liveLink(ctx, await getShare(ctx.storage.sql, shareUuid));
}

/** The node a public link reads at `segments` below its node (names, decoded); 404 when there is none. */
export async function nodeInLink(ctx: StoreContext, link: OpenedLink, segments: readonly string[]): Promise<NodeRow> {
  if (link.share.type !== 'public') throw forbidden('this link accepts uploads only');
  let node = link.node;
  for (const name of segments) {
    const child = node.type === 'Dir' ? (await getChildByName(ctx.storage.sql, node.uuid, name)) : undefined;
    // macOS side files are the owner's Finder's, never a visitor's (common/side-files.ts).
    if (!child || hidesSideFile(ctx, child)) throw notFound('nothing of that name behind this link');
    node = child;
  }
  return node;
}

function hidesSideFile(ctx: StoreContext, node: NodeRow): boolean {
  return ctx.config.store.hideMacSideFiles && isMacSideEntry({ name: node.name, isFile: node.type === 'File' });
}

/** What a folder behind a public link shows: its children, folders first, by name, macOS side files left out. */
export async function linkChildren(ctx: StoreContext, folder: NodeRow): Promise<NodeRow[]> {
  return (await listChildren(ctx.storage.sql, folder.uuid)).filter((n) => !hidesSideFile(ctx, n));
}

/** A folder behind a public link: its entries, folders first, by name, macOS side files left out. No UUIDs. */
export async function listLinkFolder(ctx: StoreContext, folder: NodeRow): Promise<LinkListing> {
  const entries = (await linkChildren(ctx, folder)).map((n) => {
    const entry: LinkListing['entries'][number] = { name: n.name, type: n.type, size: n.type === 'File' ? n.size : 0, updated: n.updated };
    if (n.type === 'File' && n.revision !== null) entry.revision = n.revision;
    return entry;
  });
  return { name: folder.name, type: 'Dir', entries };
}

/** The latest revision of a file behind a link, as a download answers it; 404 for a file with none. */
export async function linkFileVersion(ctx: StoreContext, node: NodeRow): Promise<FileVersion> {
  const revision = node.revision === null ? undefined : await getRevision(ctx.storage.sql, node.uuid, node.revision);
  if (!revision) throw notFound('nothing of that name behind this link');
  return { node, revision, etag: `"${node.uuid}-${revision.revision}"` };
}

/** Throws unless `link` takes uploads (403 for a public link); answers the bytes its folder's owner may still add. */
export async function uploadRoom(ctx: StoreContext, link: OpenedLink): Promise<number> {
  if (link.share.type !== 'upload') throw forbidden('this link does not accept uploads');
  return remainingBytes(ctx.storage.sql, link.node.owner_type, link.node.owner_uuid);
}

/**
 * Records an anonymous upload through `shareUuid` in ONE transaction, after checking the link
 * again (removed, expired, folder trashed meanwhile), under a free name (`name (2).ext` on a
 * clash), within the folder owner's quota (507).
 */
export async function commitLinkUpload(ctx: StoreContext, shareUuid: string, name: string, blob: { hash: string; sizeBytes: number; inline?: Buffer; sha1?: string; md5?: string }): Promise<UploadResult> {
  const { storage: { sql }, clock } = ctx;
  return await sql.transaction(async (tx) => {
    const txCtx = withSql(ctx, tx);
    const { node: folder } = await liveLink(txCtx, await getShare(tx, shareUuid));
    await assertRoom(tx, folder, blob.sizeBytes);
    // A small blob's bytes go into its row here, or they would be lost (blobs/staging.ts stage()).
    return insertNewFile(tx, folder, await freeName(tx, folder.uuid, name, 'File'), { hash: blob.hash, sizeBytes: blob.sizeBytes, now: clock.now(), inline: blob.inline, sha1: blob.sha1, md5: blob.md5 }, null);
  });
}

/** What a link's page shows (GET /public/{token}[/{path}]?info; schemas/public-links.ts). */
export async function linkInfo(ctx: StoreContext, link: OpenedLink, segments: readonly string[]): Promise<LinkInfo> {
  const { expires } = link.share;
  if (link.share.type === 'upload') {
    if (segments.length > 0) throw notFound('nothing of that name behind this link');
    return { type: 'Upload', expires };
  }
  const node = await nodeInLink(ctx, link, segments);
  if (node.type === 'Dir') return { ...(await listLinkFolder(ctx, node)), expires };
  const { revision } = await linkFileVersion(ctx, node);
  return { type: 'File', name: node.name, size: revision.size, updated: node.updated, content_type: contentTypeOf(node.name), expires };
}
