/**
 * What an OCS endpoint is (ocs.ts routes to them): a method and a path below `/ocs/v{1,2}.php`
 * with `{name}` segments, and the function that answers. Endpoints live in the file of their
 * app (`ocs.ts` the core ones; notifications, sharing, … their own) and are listed in ocs.ts.
 * An answer is data for the envelope, or an OcsRefusal thrown with Nextcloud's status code for
 * that refusal (its v2 HTTP status follows from it: ocs-envelope.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { Logger } from '../../common/logger.js';
import type { StoreClient } from '../../store-client/contract.js';
import type { BridgeUser } from '../sessions.js';
import type { FileIds } from '../file-ids.js';
import type { StoreTree } from '../store-tree.js';
import type { OcsValue } from './ocs-envelope.js';

export interface NextcloudDoorOptions {
  client: StoreClient;
  /**
   * The caller of a request: undefined when it sent no credentials; rejects with
   * AuthenticationFailed when they are refused (and logs the refusal, as for DAV).
   */
  authenticate(req: IncomingMessage): Promise<BridgeUser | undefined>;
  /** The bridge's absolute base URL as the caller reached it (BridgeServices.absoluteBase). */
  absoluteBase(req: IncomingMessage): string;
  log: Logger;
  /** To whom `dav.bulkupload` is advertised (config bridge.bulkUploadClients); `fixed` when absent. */
  bulkUploadClients?: 'fixed' | 'all' | 'none';
  /** notify_push's capability for the caller (push.ts), when the bridge serves push. */
  push?: (req: IncomingMessage) => OcsValue;
  /** The drive's tree and numeric file ids (the sharing API names nodes by path and by file id). */
  tree: StoreTree;
  fileIds: FileIds;
  /** The web app's page at an absolute path, when its place is known (a link's page: `/public/<token>`). */
  webAppPage?(req: IncomingMessage, page: string): string | undefined;
}

export type OcsMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** What an endpoint is given. */
export interface EndpointCall {
  req: IncomingMessage;
  /** Undefined only for public endpoints. */
  user: BridgeUser | undefined;
  options: NextcloudDoorOptions;
  /** The path's `{name}` segments, decoded. */
  params: Readonly<Record<string, string>>;
  /**
   * The request's parameters as Nextcloud's controllers see them: the query, overridden by the
   * body's fields (application/x-www-form-urlencoded, or a JSON object's top-level fields, its
   * non-string values as JSON text). At most 64 KiB of body; more is refused (400) unread.
   */
  fields: URLSearchParams;
  /**
   * What the answer adds beside its data: headers (an ETag, …), and `notModified` for a 304
   * without a body (the endpoint compared the request's If-None-Match itself).
   */
  reply: { headers: Record<string, string>; notModified?: boolean };
}

export interface OcsEndpoint {
  /** GET (which also answers HEAD) unless named. */
  method?: OcsMethod;
  /** Below `/ocs/v{1,2}.php`, e.g. `/apps/notifications/api/v2/notifications/{id}`. */
  path: string;
  isPublic?: boolean;
  answer(call: EndpointCall): Promise<OcsValue> | OcsValue;
}

/** A refusal an endpoint decides, with Nextcloud's OCS status for it (404 no such share, 400 a bad field, 403 not allowed). */
export class OcsRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'OcsRefusal';
  }
}
