/**
 * The numeric file ids the bridge shows (docs/extensions.md "Numeric file ids"): oc:fileid,
 * oc:id, OC-FileId and the `versions/<fileid>` space. A node the store numbers (driveway's
 * `file_id`) shows the store's number; everything else, the collections the bridge makes up
 * (`/`, `/groups/`, a group's folder, the top-level folders, whose entries the bridge may make
 * without asking the store) and every node of a store without the extension, a number from the
 * bridge's own map (contracts/file-ids.ts), keyed by the resource's global key (the last of its
 * chain: a node's UUID, `root:<user>`, `home:<group>`), so the same for every request and instance.
 */
import { ocIdOf, parseFileId, BRIDGE_FILE_ID_BASE, type FileIdRepository } from '../contracts/file-ids.js';
import { StoreError, type NodeDetails, type NodeId, type StoreClient, type StoreSession } from '../store-client/contract.js';
import type { BridgeUser } from './sessions.js';
import type { Resource } from './tree/resource.js';
import { withSession } from './tree/context.js';

/** The key a resource's number hangs on: the last of its chain (what dead properties hang on too). */
function keyOf(resource: Resource): string {
  return resource.chain[resource.chain.length - 1] as string;
}

export class FileIds {
  constructor(
    private readonly repository: FileIdRepository,
    private readonly client: StoreClient,
  ) {}

  /** The number of each resource, by its key (one read of the bridge's map for those the store does not number). */
  async of(resources: readonly Resource[]): Promise<Map<string, number>> {
    const numbers = new Map<string, number>();
    const mapped: string[] = [];
    for (const resource of resources) {
      const key = keyOf(resource);
      if (resource.kind === 'node' && resource.entry.fileId !== undefined) numbers.set(key, resource.entry.fileId);
      else mapped.push(key);
    }
    if (mapped.length > 0) for (const [key, n] of await this.repository.numbersOf(mapped)) numbers.set(key, n);
    return numbers;
  }

  /** Nextcloud's instance id (the tail of every oc:id) and oc:data-fingerprint. */
  instance(): Promise<{ instanceId: string; dataFingerprint: string }> {
    return this.repository.instance();
  }

  /** oc:id of one resource (OC-FileId). */
  async ocIdOf(resource: Resource): Promise<string> {
    const [numbers, { instanceId }] = await Promise.all([this.of([resource]), this.instance()]);
    return ocIdOf(numbers.get(keyOf(resource)) as number, instanceId);
  }

  /**
   * The node a `versions/<fileid>` segment names for `user`: a number (or an oc:id) through the
   * store's lookup (driveway's) or the bridge's map, else the segment as a node id (the UUID form
   * clients of earlier releases kept). Undefined when the number names nothing the user may read.
   */
  async nodeOf(user: BridgeUser, segment: string): Promise<NodeId | undefined> {
    return (await this.detailsOf(user, segment))?.id;
  }

  /** nodeOf's node with its details (name, kind): what the apps' previews by `fileId` look up (nextcloud/preview.ts). */
  async detailsOf(user: BridgeUser, segment: string): Promise<NodeDetails | undefined> {
    const n = parseFileId(segment);
    // The bridge's map and the UUID form name any node of anyone's: the store says whether this
    // caller may read it (one rule for every number, as the store's own lookup applies it).
    if (n === undefined) return this.readable(user, (s) => this.client.details(s, segment as NodeId));
    if (n > BRIDGE_FILE_ID_BASE) {
      const key = await this.repository.keyOf(n);
      return key === undefined ? undefined : this.readable(user, (s) => this.client.details(s, key as NodeId));
    }
    return this.readable(user, (s) => this.client.detailsByFileId(s, n));
  }

  private async readable(user: BridgeUser, details: (s: StoreSession) => Promise<NodeDetails>): Promise<NodeDetails | undefined> {
    try {
      return await withSession(user, details);
    } catch (err) {
      // Not the caller's to read, or (a store without the lookup, a made-up collection's key) no node at all.
      if (err instanceof StoreError && (err.kind === 'not-found' || err.kind === 'invalid' || err.kind === 'forbidden')) return undefined;
      throw err;
    }
  }
}
