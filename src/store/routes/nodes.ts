/** TODO: route group 'nodes' (being written). */
import type { FastifyInstance } from 'fastify';
import type { StoreContext } from '../context.js';

export async function nodeRoutes(_app: FastifyInstance, _ctx: StoreContext): Promise<void> {}
