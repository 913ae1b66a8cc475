import * as z from 'zod';
import { type AuthKind, headerClash, staticView } from './kind.ts';
import { authorizationAuthorizer, bearerHeader } from './static-auth.ts';

const config = z.strictObject({
  type: z.literal('bearer'),
  /** The token, sent as `Authorization: Bearer …`; use ${SECRET}. */
  token: z.string().min(1),
});

type BearerConfig = z.output<typeof config>;

/** `type = "bearer"`: a fixed token, sent as `Authorization: Bearer …`. */
export const bearer = {
  config,
  example: 'auth = { type = "bearer", token = "${UPSTREAM_TOKEN}" }',
  summary: 'bearer: a token from the config, sent as it is (nothing to renew)',
  renews: false,
  toUpstream: true,
  problems: (_auth, source) => headerClash('authorization', source),
  reach: () => [],
  view: () => staticView('bearer'),
  authorizer: (auth) => authorizationAuthorizer(bearerHeader(auth.token)),
} satisfies AuthKind<BearerConfig>;
