/**
 * Method name -> handler for the drive's URLs, as the doors (server.ts, remote-spaces.ts,
 * nextcloud-restore.ts) dispatch them: the DAV verbs (verbs/index.ts), tus's creation, a
 * POST to a folder (uploads/tus.ts), and the legacy `OC-Chunked` PUT (uploads/oc-chunked.ts).
 * Verbs and uploads stand beside each other; only a door puts them in one table.
 */
import type { VerbHandler } from './request/context.js';
import { isOcChunked, ocChunkedPut } from './uploads/oc-chunked.js';
import { tusCreate } from './uploads/tus.js';
import { verbHandlers } from './verbs/index.js';
import { put } from './verbs/put.js';

export const driveHandlers: Record<string, VerbHandler> = {
  ...verbHandlers,
  // A legacy `OC-Chunked` PUT is a chunk of an upload, never a file of its name (uploads/oc-chunked.ts).
  PUT: (ctx) => (isOcChunked(ctx.req) ? ocChunkedPut(ctx) : put(ctx)),
  POST: tusCreate,
};
