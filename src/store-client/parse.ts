/** Decoding helpers shared by the operation files: schema parse -> StoreError, timestamp units, kinds. */
import type { z } from 'zod';
import { StoreError } from './errors.js';
import type { NodeKind } from './types.js';

export function parseWith<T extends z.ZodType>(schema: T, body: unknown, operation: string, status?: number): z.infer<T> {
  const result = schema.safeParse(body);
  if (!result.success) {
    const where = result.error.issues[0];
    throw new StoreError('bad-response', operation, status, `unexpected response shape at ${where?.path.join('.') || '(root)'}: ${where?.message ?? ''}`);
  }
  return result.data;
}

/** Epoch milliseconds; tolerates servers that send seconds. */
export function toMs(value: number | undefined): number | undefined {
  if (value === undefined || !Number.isFinite(value)) return undefined;
  return value > 0 && value < 100_000_000_000 ? value * 1000 : value;
}

export function kindOf(type: string): NodeKind {
  return type.toLowerCase() === 'dir' || type.toLowerCase() === 'folder' ? 'folder' : 'file';
}

/** Encodes one path segment of a store URL (node ids contain ':' which stays readable). */
export function seg(value: string): string {
  return encodeURIComponent(value).replace(/%3A/gi, ':');
}
