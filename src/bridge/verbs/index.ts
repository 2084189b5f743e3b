/** Method name -> our handler. Every DAV verb the bridge serves is replaced here; the doors add tus's POST (handlers.ts). */
import type { VerbHandler } from '../request/context.js';
import { copy } from './copy.js';
import { del } from './delete.js';
import { get } from './get.js';
import { lock } from './lock.js';
import { mkcol } from './mkcol.js';
import { move } from './move.js';
import { options } from './options.js';
import { propfind } from './propfind.js';
import { proppatch } from './proppatch.js';
import { put } from './put.js';
import { search } from './search.js';
import { report } from './report.js';
import { unlock } from './unlock.js';

export const verbHandlers: Record<string, VerbHandler> = {
  OPTIONS: options,
  LOCK: lock,
  UNLOCK: unlock,
  GET: get,
  HEAD: get,
  PUT: put,
  PROPFIND: propfind,
  PROPPATCH: proppatch,
  MKCOL: mkcol,
  DELETE: del,
  MOVE: move,
  COPY: copy,
  SEARCH: search,
  REPORT: report,
};
