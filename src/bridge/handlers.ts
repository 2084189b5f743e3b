/**
 * Method name -> handler for the drive's URLs, as the doors (server.ts, remote-spaces.ts,
 * nextcloud-restore.ts) dispatch them: the DAV verbs (verbs/index.ts) and tus's creation, a
 * POST to a folder (uploads/tus.ts). Verbs and uploads stand beside each other; only a door
 * puts them in one table.
 */
import type { VerbHandler } from './request/context.js';
import { tusCreate } from './uploads/tus.js';
import { verbHandlers } from './verbs/index.js';

export const driveHandlers: Record<string, VerbHandler> = { ...verbHandlers, POST: tusCreate };
