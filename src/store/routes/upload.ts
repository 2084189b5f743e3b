/**
 * The two-step upload (docs/api.md "Upload", docs/store-semantics.md "Upload"), both editions:
 *   GET  /api/nodes/{node_uuid}/upload  -> {token, status, msg}
 *   POST /upload/{upload_token}         multipart, field `file`, no Authorization
 * Order of step 2: check and consume the token, check the target (before a byte of the body is
 * read), stage the multipart part (receive-file.ts), then ops/upload.ts records it in one
 * transaction. Thin: the operations decide.
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import { admitCaller, requirePolicy } from '../policy.js';
import { z } from 'zod';
import { callerOf } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { invalid, success } from '../envelope.js';
import { issueUploadToken, recordUpload, redeemUploadToken } from '../ops/upload.js';
import { receiveFilePart } from './receive-file.js';

const nodeParams = z.object({ id: z.string().min(1).max(200) });
const tokenParams = z.object({ token: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/) });

export async function uploadRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  // Stream mode only: nothing is buffered or written to the OS temp folder by the plugin.
  // preservePath keeps the name as sent, so "a/b" is refused by the name rule rather than
  // silently shortened to "b".
  await app.register(multipart, {
    preservePath: true,
    throwFileSizeLimit: false,
    limits: { fileSize: Number.POSITIVE_INFINITY, files: 1, fields: 20, fieldSize: 64 * 1024, parts: 25 },
  });

  app.get('/api/nodes/:id/upload', async (request) => {
    const params = nodeParams.safeParse(request.params);
    if (!params.success) throw invalid('invalid node identifier');
    const { token, kind } = await issueUploadToken(ctx, callerOf(request), params.data.id);
    return { token, status: 'success', msg: kind === 'file' ? 'upload token for a new file' : 'upload token for a new revision' };
  });

  app.post('/upload/:token', async (request, reply) => {
    const params = tokenParams.safeParse(request.params);
    // A token that cannot have been issued is unknown, like any other unknown token.
    const policy = requirePolicy(request.method, request.routeOptions.url);
    const { uploader, target, roomBytes } = await redeemUploadToken(ctx, params.success ? params.data.token : '', (who) => admitCaller(ctx, who, policy));
    // OC-Checksum (docs/extensions.md "Checksums"): refused before anything is recorded when the bytes
    // contradict it; a claimed MD5 is computed before the commit, else a large body's comes after it.
    const header = request.headers['oc-checksum'];
    const claim = Array.isArray(header) ? header.join(' ') : header;
    const received = await receiveFilePart(ctx, request, roomBytes, target.type === 'Dir', ctx.md5Later?.thresholdFor(claim));
    const result = await recordUpload(ctx, uploader, { uuid: target.uuid }, received.name ?? target.name, received.staged, claim);
    return reply.code(200).send(success(result.revision === 1 ? 'file uploaded' : 'revision uploaded', result));
  });
}
