// Authentication and tenancy per decisions.md: 401 for a missing, unknown, revoked or expired key;
// 403 for a missing scope or a body teamId of another team. The key itself is never logged.
import { authenticateApiKey, type AuthenticatedKey } from '../auth/api-keys';
import type { Scope } from '../data/models/api-key';
import { forbidden, unauthorized } from './errors';
import type { ApiContext, ApiMiddleware } from './state';
import { API_KEY_HEADER } from '../contracts/api-key-header';

export { API_KEY_HEADER };

export function requireApiKey(): ApiMiddleware {
  return async (ctx, next) => {
    const header = ctx.get(API_KEY_HEADER);
    if (!header) throw unauthorized('the service-api-key header is missing');
    const auth = await authenticateApiKey(header);
    if (!auth) throw unauthorized('the API key is invalid, revoked or expired');
    ctx.state.auth = auth;
    ctx.state.log = ctx.state.log.child({ teamId: auth.teamId, keyId: auth.keyId });
    await next();
  };
}

export function requireScope(scope: Scope): ApiMiddleware {
  return async (ctx, next) => {
    const auth = ctx.state.auth;
    if (!auth) throw unauthorized();
    if (!auth.scopes.has(scope)) throw forbidden(`the API key lacks the ${scope} scope`);
    await next();
  };
}

export function authOf(ctx: ApiContext): AuthenticatedKey {
  const auth = ctx.state.auth;
  if (!auth) throw unauthorized();
  return auth;
}

/** A body `teamId` must be the key's own team. */
export function assertOwnTeam(auth: AuthenticatedKey, teamId: string, field = 'teamId'): void {
  if (teamId !== auth.teamId) throw forbidden(`${field} is not the team of this API key`);
}
