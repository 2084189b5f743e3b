/**
 * Notification settings of the current user (docs/api.md "Notification settings": GET/PUT
 * /api/user/notifications): the eight booleans, every one true by default. The row keeps only
 * what the user set; a PUT changes the keys it names and keeps the others. Unknown keys and
 * values that are not booleans are refused (400 naming the key).
 */
import { z } from 'zod';
import { withSql } from '../context.js';
import type { StoreContext } from '../context.js';
import { notificationsOf, setNotifications } from '../storage/users.js';
import type { Sql } from '../storage/sql.js';
import type { AuthenticatedUser } from '../sessions.js';
import { callerRow } from './caller.js';
import { parseInput } from './input.js';

const flag = z.boolean({ error: 'must be true or false' }).optional();
const shape = {
  email_alert_owned: flag,
  email_alert_group_owned: flag,
  email_alert_shared_with_me: flag,
  email_alert_shared_with_my_groups: flag,
  realtime_alert_owned: flag,
  realtime_alert_group_owned: flag,
  realtime_alert_shared_with_me: flag,
  realtime_alert_shared_with_my_groups: flag,
};
export type NotificationKey = keyof typeof shape;
export type NotificationSettings = Record<NotificationKey, boolean>;
export const NOTIFICATION_KEYS = Object.keys(shape) as NotificationKey[];

/** Everything on: a new user misses nothing, and each alert can be turned off. */
export const NOTIFICATION_DEFAULTS: Readonly<NotificationSettings> = Object.fromEntries(NOTIFICATION_KEYS.map((key) => [key, true])) as NotificationSettings;

const updateSchema = z.strictObject(shape, {
  error: (issue) =>
    issue.code === 'unrecognized_keys'
      ? `unknown key ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}; the settings are ${NOTIFICATION_KEYS.join(', ')}`
      : undefined,
});

/** What the row holds: the keys the user set, read tolerantly (anything else is ignored). */
export function storedSettings(json: string): Partial<NotificationSettings> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return {};
  }
  const stored: Partial<NotificationSettings> = {};
  if (typeof parsed !== 'object' || parsed === null) return stored;
  for (const key of NOTIFICATION_KEYS) {
    const value = (parsed as Record<string, unknown>)[key];
    if (typeof value === 'boolean') stored[key] = value;
  }
  return stored;
}

async function storedOf(ctx: StoreContext, caller: AuthenticatedUser): Promise<Partial<NotificationSettings>> {
  return storedSettings((await callerRow(ctx, caller)).notifications);
}

/** Whether the user wants alerts of this kind (their setting, or the default). */
export function wantsAlert(ctx: StoreContext, userUuid: string, key: NotificationKey): Promise<boolean> {
  return wantsAlertOf(ctx.storage.sql, userUuid, key);
}

/** wantsAlert on a transaction's handle. */
export async function wantsAlertOf(sql: Sql, userUuid: string, key: NotificationKey): Promise<boolean> {
  const stored = await notificationsOf(sql, userUuid);
  return (stored === undefined ? undefined : storedSettings(stored)[key]) ?? NOTIFICATION_DEFAULTS[key];
}

export async function getNotifications(ctx: StoreContext, caller: AuthenticatedUser): Promise<NotificationSettings> {
  return { ...NOTIFICATION_DEFAULTS, ...(await storedOf(ctx, caller)) };
}

/** Sets the named keys; answers every setting after the change. */
export async function updateNotifications(ctx: StoreContext, caller: AuthenticatedUser, body: unknown): Promise<NotificationSettings> {
  const input = parseInput(updateSchema, body);
  const changes = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as Partial<NotificationSettings>;
  return await ctx.storage.sql.transaction(async (tx) => {
    const txCtx = withSql(ctx, tx);
    const stored = { ...(await storedOf(txCtx, caller)), ...changes };
    if (Object.keys(changes).length > 0) await setNotifications(tx, caller.userUuid, JSON.stringify(stored), ctx.clock.now());
    return { ...NOTIFICATION_DEFAULTS, ...stored };
  });
}
