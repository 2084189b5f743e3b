/**
 * View and download (docs/api.md "View and download", edition 3.0 only; docs/store-semantics.md):
 *   GET|HEAD /resources/auth/{view|download}/{file_access_key}/{file_uuid}/{version}/{filename}
 *   GET|HEAD /resources/auth/pending/{file_access_key}/{pending_uuid}/{filename}
 * (the second: an approver's preview of the file of a request waiting for them, inline, issue 31).
 * The fileaccesskey in the path stands for the session (no Authorization header). Which revision
 * a caller may read is ops/download.ts's; sending it with HTTP's conditional and range headers
 * is send-file.ts's. A single range at most; a large file is never read into memory.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { StoreContext } from '../context.js';
import { notFound, unauthenticated } from '../envelope.js';
import { resolveNodeAccess } from '../access.js';
import { planZip, zipNodeList, zipStream } from '../ops/zip.js';
import { listChildren } from '../storage/nodes.js';
import { sendZip } from './send-file.js';
import { fileVersion, pendingFileVersion } from '../ops/download.js';
import { admitCaller, requirePolicy } from '../policy.js';
import { authenticateFileAccessKey } from '../sessions.js';
import { sendFileVersion, type Disposition } from './send-file.js';

const params = z.object({
  key: z.string().min(1).max(200),
  uuid: z.string().min(1).max(200),
  version: z.string(),
});

export async function resourceRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;
  const { storage: { sql }, clock } = ctx;

  const serve = (disposition: Disposition) =>
    app.route({
      method: ['GET', 'HEAD'],
      // `{filename}` is cosmetic (the node's real name goes into Content-Disposition), so any
      // tail is accepted, including an empty one or one with more segments.
      url: `/resources/auth/${disposition}/:key/:uuid/:version/*`,
      handler: async (request, reply) => {
        const parsed = params.safeParse(request.params);
        if (!parsed.success) throw notFound();
        const { key, uuid, version } = parsed.data;
        const caller = await authenticateFileAccessKey(sql, clock, key);
        if (!caller) throw unauthenticated('invalid, expired or revoked file access key');
        admitCaller(ctx, caller, requirePolicy(request.method, request.routeOptions.url));
        return sendFileVersion(ctx, request, reply, await fileVersion(ctx, caller, uuid, version), disposition);
      },
    });

  serve('view');
  serve('download');

  app.get('/resources/auth/zip/:key/*', async (request, reply) => {
    const { key, '*': tail } = request.params as { key: string; '*': string };
    const caller = await authenticateFileAccessKey(sql, clock, key);
    if (!caller) throw unauthenticated('invalid, expired or revoked file access key');
    admitCaller(ctx, caller, requirePolicy(request.method, request.routeOptions.url));
    const uuids = zipNodeList((request.query as { node?: unknown }).node);
    // Every node as a download of it would be admitted (404 unknown or not yours, 403 without `download`), before any byte.
    const roots = [];
    for (const uuid of uuids) roots.push((await resolveNodeAccess(sql, caller, uuid, 'download')).node);
    const items = await planZip(roots, (folder) => listChildren(sql, folder.uuid));
    // Each file asked again when its turn comes, for the revision planned: the download's decision, never more.
    return sendZip(request, reply, tail.split('/').pop() ?? '', () => zipStream(ctx, items, (file) => fileVersion(ctx, caller, file.uuid, String(file.revision))));
  });

  // The approver's preview: the latest revision of the request's file, inline (passive types
  // only, as view), only while the request waits for this approver (access.ts).
  const pendingParams = z.object({ key: z.string().min(1).max(200), pending: z.string().min(1).max(200) });
  app.route({
    method: ['GET', 'HEAD'],
    url: '/resources/auth/pending/:key/:pending/*',
    handler: async (request, reply) => {
      const parsed = pendingParams.safeParse(request.params);
      if (!parsed.success) throw notFound();
      const caller = await authenticateFileAccessKey(sql, clock, parsed.data.key);
      if (!caller) throw unauthenticated('invalid, expired or revoked file access key');
      admitCaller(ctx, caller, requirePolicy(request.method, request.routeOptions.url));
      return sendFileVersion(ctx, request, reply, await pendingFileVersion(ctx, caller, parsed.data.pending), 'view');
    },
  });
}
