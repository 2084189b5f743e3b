/**
 * Input validation for operations: every operation parses what it is given with its zod schema,
 * whichever transport called it (an HTTP route, or the in-process client), so a rule holds the
 * same way for both. A violation is a 400 whose message names the field.
 */
import type { z } from 'zod';
import { invalid } from '../envelope.js';
import { firstIssue } from '../schemas/users.js';

export function parseInput<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) throw invalid(firstIssue(parsed.error));
  return parsed.data;
}
