import type { FastifyInstance } from "fastify";
import { authRoutes } from "../features/auth/auth.routes.js";
import type { Container } from "./container.js";

/** A feature's route plugin. */
export type RoutePlugin = (app: FastifyInstance, opts: { container: Container }) => Promise<void>;

/** Every feature's routes, registered by build-server in this order. Add new features here. */
export const featureRoutes: RoutePlugin[] = [authRoutes];
