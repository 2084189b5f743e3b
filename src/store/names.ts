/**
 * The node name rule (docs/store-semantics.md): 1–255 bytes of UTF-8, no `/`, no NUL, not `.`
 * or `..`. Names are kept byte for byte as given: no trimming, no Unicode normalisation.
 */
import { invalid } from './envelope.js';

export function nameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return 'name must be a string';
  if (name.length === 0) return 'name must not be empty';
  if (Buffer.byteLength(name, 'utf8') > 255) return 'name must be at most 255 bytes of UTF-8';
  if (name.includes('/')) return 'name must not contain "/"';
  if (name.includes('\0')) return 'name must not contain NUL';
  if (name === '.' || name === '..') return 'name must not be "." or ".."';
  if (/[\uD800-\uDFFF]/.test(name.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''))) return 'name must be valid UTF-8';
  return undefined;
}

/** Throws 400 `invalid_name` unless `name` satisfies the rule; returns it typed. */
export function assertValidName(name: unknown): string {
  const problem = nameProblem(name);
  if (problem) throw invalid(problem, 'invalid_name');
  return name as string;
}
