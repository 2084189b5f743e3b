/**
 * The notifications API of the bridge over a store without the notifications extension (the
 * in-memory server of the interface answers its routes 404, as a foreign server would): the list
 * is empty (no ETag change, the status header still sent), a notification by id is 404, and the
 * deletes answer as Nextcloud's do for nothing to delete.
 */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { notificationsEndpoints } from '../../../src/bridge/nextcloud/notifications.js';
import { OcsRefusal, type EndpointCall, type NextcloudDoorOptions, type OcsEndpoint } from '../../../src/bridge/nextcloud/ocs-endpoint.js';
import { MemoryStore } from '../../helpers/memory-store.js';
import { bridgeUserOf } from '../../helpers/memory-tree.js';

function endpoint(method: string, path: string): OcsEndpoint {
  const found = notificationsEndpoints.find((e) => (e.method ?? 'GET') === method && e.path.endsWith(path));
  if (!found) throw new Error(`no ${method} ${path}`);
  return found;
}

describe('the notifications API over a store without notifications', () => {
  const store = new MemoryStore();
  const user = bridgeUserOf(store, store.admin.addUser());
  const call = (params: Record<string, string>): EndpointCall => ({
    req: { headers: {} } as IncomingMessage,
    user,
    options: { client: store.client } as unknown as NextcloudDoorOptions,
    params,
    fields: new URLSearchParams(),
    reply: { headers: {} },
  });

  it('lists nothing, with the status header and the ETag of an empty list', async () => {
    const listing = call({ apiVersion: 'v2' });
    expect(await endpoint('GET', '/notifications').answer(listing)).toEqual([]);
    expect(listing.reply.headers).toEqual({ 'X-Nextcloud-User-Status': 'online', ETag: '"d751713988987e9331980363e24189ce"' });
  });

  it('finds no notification by id, and deletes as if there were nothing to delete', async () => {
    await expect(Promise.resolve(endpoint('GET', '/{id}').answer(call({ apiVersion: 'v2', id: '5' })))).rejects.toEqual(new OcsRefusal(404, 'Notification not found'));
    expect(await endpoint('DELETE', '/{id}').answer(call({ apiVersion: 'v2', id: '5' }))).toEqual([]);
    expect(await endpoint('DELETE', '/notifications').answer(call({ apiVersion: 'v2' }))).toEqual([]);
  });
});
