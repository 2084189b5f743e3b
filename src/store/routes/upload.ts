/** TODO: route group 'upload' (being written). */
import type { FastifyInstance } from 'fastify';
import type { StoreContext } from '../context.js';

export async function uploadRoutes(_app: FastifyInstance, _ctx: StoreContext): Promise<void> {}
