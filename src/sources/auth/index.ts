import type { AuthConfig } from '../../config/schema.ts';
import type { HttpFetch } from '../http-source.ts';
import type { Authorizer } from './authorizer.ts';
import { OAuth2Authorizer, type TokenVault } from './oauth2.ts';
import { basicHeader, bearerHeader, staticAuthorizer } from './static-auth.ts';

export type { AuthHeader, Authorizer, AuthView } from './authorizer.ts';
export type { StoredTokens, TokenVault } from './oauth2.ts';

/** What every kind of source.auth may need to build its authorizer. */
export interface AuthTools {
  fetcher: HttpFetch;
  /** The poller's token storage: only oauth2 asks for it (null: SECRETS_KEY is not set). */
  vault: () => TokenVault | null;
  now: () => number;
  timeout: number;
  maxWait: number;
  secrets: readonly string[];
  /** source.url's origin: where the header goes (oauth2 binds its tokens to it, R18). */
  origin: string;
  /** What gives the poller a new oauth2 refresh token, for "reconnect needed". */
  reconnect: string;
}

/** Each `source.auth.type`, as a builder: a new kind is a module and a line here. */
const kinds: {
  [K in AuthConfig['type']]: (
    config: Extract<AuthConfig, { type: K }>,
    tools: AuthTools,
  ) => Authorizer | string;
} = {
  bearer: (config) => staticAuthorizer(bearerHeader(config.token)),
  basic: (config) => staticAuthorizer(basicHeader(config.username, config.password)),
  oauth2: (config, tools) => {
    const vault = tools.vault();
    if (vault === null) {
      return 'source.auth: oauth2 keeps its tokens sealed under SECRETS_KEY, which is not set (see "Per-poller secrets")';
    }
    return new OAuth2Authorizer(config, vault, tools.fetcher, tools);
  },
};

/** The authorizer of `source.auth`, or why it cannot be built. */
export function authorizerOf(config: AuthConfig, tools: AuthTools): Authorizer | string {
  const build = kinds[config.type] as (config: AuthConfig, tools: AuthTools) => Authorizer | string;
  return build(config, tools);
}
