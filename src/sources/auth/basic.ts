import * as z from 'zod';
import { type AuthKind, headerClash, staticView } from './kind.ts';
import { authorizationAuthorizer, basicHeader } from './static-auth.ts';

const config = z.strictObject({
  type: z.literal('basic'),
  username: z.string().min(1),
  /** Use ${SECRET}. */
  password: z.string(),
});

type BasicConfig = z.output<typeof config>;

/** `type = "basic"`: HTTP Basic, a user and a password (RFC 7617). */
export const basic = {
  config,
  example: 'auth = { type = "basic", username = "sync@example.com", password = "${API_TOKEN}" }',
  summary: 'basic: a username and password from the config (nothing to renew)',
  renews: false,
  toUpstream: true,
  problems: (_auth, source) => headerClash('authorization', source),
  reach: () => [],
  view: () => staticView('basic'),
  authorizer: (auth) => authorizationAuthorizer(basicHeader(auth.username, auth.password)),
} satisfies AuthKind<BasicConfig>;
