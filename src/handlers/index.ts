import type { Handler } from './types.ts';

/**
 * Handlers by name, for `deliver.type = "handler"` and `deliver.name = "<name>"`.
 * Register yours here.
 */
export const handlers: Record<string, Handler> = {};

export type { Handler, HandlerContext } from './types.ts';
