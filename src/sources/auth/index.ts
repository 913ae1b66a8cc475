import * as z from 'zod';
import { apiKey } from './api-key.ts';
import type { Authorizer } from './authorizer.ts';
import { basic } from './basic.ts';
import { bearer } from './bearer.ts';
import { jwtBearer } from './jwt-bearer.ts';
import type { AuthKind, AuthProblem, AuthSource, AuthTools } from './kind.ts';
import { oauth2 } from './oauth2.ts';

export type { Authorizer, AuthView, Credential } from './authorizer.ts';
export type { AuthKind, AuthTools, TokenState } from './kind.ts';
export type { StoredTokens, TokenVault } from './token-authorizer.ts';

/** Every kind of source.auth, by its `type`. A new kind is a module and a line here. */
const kinds = { bearer, basic, api_key: apiKey, oauth2, jwt_bearer: jwtBearer };

/** A `source.auth.type`. */
export type AuthType = keyof typeof kinds;

/** The kinds, each checked against the interface and against the name it is registered under. */
export const authKinds = kinds satisfies { [K in AuthType]: AuthKind<{ type: K }> };

type KindConfig = (typeof authKinds)[AuthType]['config'];

/** How the source authenticates, one shape per `type` (each kind's own table). */
export const authSchema = z.discriminatedUnion(
  'type',
  Object.values(authKinds).map((kind) => kind.config) as [KindConfig, ...KindConfig[]],
);

/** A `source.auth` table, parsed. */
export type AuthConfig = z.output<typeof authSchema>;

/** The kind a `source.auth` table asks for. */
export function authKindOf(auth: AuthConfig): AuthKind<AuthConfig> {
  return authKinds[auth.type] as AuthKind<AuthConfig>;
}

/** What the kind cannot work with, in itself or in the rest of `source`, at paths under it. */
export function authProblems(
  source: AuthSource & { auth?: AuthConfig | undefined },
): AuthProblem[] {
  return source.auth === undefined ? [] : authKindOf(source.auth).problems(source.auth, source);
}

/** The authorizer of `source.auth`, or why it cannot be built. */
export function authorizerOf(auth: AuthConfig, tools: AuthTools): Authorizer | string {
  return authKindOf(auth).authorizer(auth, tools);
}
