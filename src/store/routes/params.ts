/** Path variables as the operations take them: strings, checked (UUID or not) by the operation. */
import type { FastifyRequest } from 'fastify';

/** A reader of path variable `name` (an empty string when the route has none). */
export function pathParam(name: string): (request: FastifyRequest) => string {
  return (request) => {
    const value = (request.params as Record<string, unknown> | undefined)?.[name];
    return typeof value === 'string' ? value : '';
  };
}
