/**
 * The demo OAuth provider's one client, as both sides know it: the provider
 * (oauth-routes.ts) and `npm start`, which points the demo poller at it
 * (scripts/demo-oauth.ts). Its secret is DEMO_CLIENT_SECRET.
 */
export const DEMO_CLIENT_ID = 'tidemark-demo';

/** The provider's token endpoint, on the Worker's own origin. */
export const DEMO_TOKEN_PATH = '/demo/oauth/token';
