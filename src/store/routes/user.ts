/** TODO: route group 'user' (being written). */
import type { FastifyInstance } from 'fastify';
import type { StoreContext } from '../context.js';

export async function userRoutes(_app: FastifyInstance, _ctx: StoreContext): Promise<void> {}
