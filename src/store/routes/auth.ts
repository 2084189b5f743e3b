/** TODO: route group 'auth' (being written). */
import type { FastifyInstance } from 'fastify';
import type { StoreContext } from '../context.js';

export async function authRoutes(_app: FastifyInstance, _ctx: StoreContext): Promise<void> {}
