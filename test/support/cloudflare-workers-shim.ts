/**
 * `cloudflare:workers` for the engine tests (plain Node), so that a module which declares a
 * Durable Object class can be imported to read what it declares (the app's routes, for the
 * OpenAPI document). Nothing here runs an object: those tests run in workerd.
 */
export class DurableObject<E = unknown> {
  constructor(
    protected readonly ctx: unknown,
    protected readonly env: E,
  ) {}
}

export class WorkerEntrypoint<E = unknown> {
  constructor(
    protected readonly ctx: unknown,
    protected readonly env: E,
  ) {}
}

export const env = {};
