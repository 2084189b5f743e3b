/** TODO: route group 'resources' (being written). */
import type { FastifyInstance } from 'fastify';
import type { StoreContext } from '../context.js';

export async function resourceRoutes(_app: FastifyInstance, _ctx: StoreContext): Promise<void> {}
