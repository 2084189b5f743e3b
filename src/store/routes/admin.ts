/** TODO: route group 'admin' (being written). */
import type { FastifyInstance } from 'fastify';
import type { StoreContext } from '../context.js';

export async function adminRoutes(_app: FastifyInstance, _ctx: StoreContext): Promise<void> {}
