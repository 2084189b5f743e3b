/**
 * Input validation for operations: every operation parses what it is given with its zod schema,
 * whichever transport called it (an HTTP route, or the in-process client), so a rule holds the
 * same way for both. A violation is a 400 whose message names the field.
 */
import { z } from 'zod';
import { invalid } from '../envelope.js';
import { firstIssue } from '../schemas/users.js';

export function parseInput<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const parsed = schema.safeParse(value ?? {});
  if (!parsed.success) throw invalid(firstIssue(parsed.error));
  return parsed.data;
}

/** A trimmed line of text of `min` to `max` characters without control characters (names of things). */
export function textLine(min: number, max: number) {
  const length = `must have ${min} to ${max} characters`;
  return z
    .string({ error: 'must be a string' })
    .trim()
    .min(min, length)
    .max(max, length)
    .refine((text) => !/[\u0000-\u001f\u007f]/.test(text), 'must not contain control characters');
}
