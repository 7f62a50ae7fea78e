// Authentication and tenancy per decisions.md: 401 for a missing, unknown, revoked or expired key;
// 403 for a missing scope or a body teamId of another team. The key itself is never logged.
import { authenticateApiKey, lastValidKey, type AuthenticatedKey } from '../auth/api-keys';
import type { TeamDoc } from '../data/models/team';
import type { Scope } from '../contracts/scopes';
import { forbidden, unauthorized } from './errors';
import type { ApiContext, ApiMiddleware } from './state';
import { API_KEY_HEADER } from '../contracts/api-key-header';

export { API_KEY_HEADER };

const INVALID_KEY = 'the API key is invalid, revoked or expired';
/** Requests that change nothing: one may run while its key is checked, as its answer can wait. */
const READ_ONLY = new Set(['GET', 'HEAD']);

export function requireApiKey(): ApiMiddleware {
  return async (ctx, next) => {
    const header = ctx.get(API_KEY_HEADER);
    if (!header) throw unauthorized('the service-api-key header is missing');
    const checking = authenticateApiKey(header);
    const validBefore = READ_ONLY.has(ctx.method) ? lastValidKey(header) : null;
    if (!validBefore) {
      const auth = await checking;
      if (!auth) throw unauthorized(INVALID_KEY);
      admit(ctx, auth);
      return next();
    }
    // A read with a key this process found valid before runs while the key is checked again, so the
    // check's round trip is not added to the read's; its answer waits for the check. The check reads
    // the key after the request arrived, so a key revoked (or a team removed) before it still gets 401,
    // and a read has nothing to undo.
    admit(ctx, {
      ...validBefore,
      get team(): TeamDoc {
        throw new Error('a read-only request runs before its key is checked again: it cannot use the team record');
      },
    });
    const [check, handled] = await Promise.allSettled([checking, next()]);
    if (check.status === 'rejected') throw check.reason;
    // The read's answer (its body, or its error with the error's headers) is dropped.
    if (!check.value) throw unauthorized(INVALID_KEY);
    ctx.state.auth = check.value;
    if (handled.status === 'rejected') throw handled.reason;
  };
}

function admit(ctx: ApiContext, auth: AuthenticatedKey): void {
  ctx.state.auth = auth;
  ctx.state.log = ctx.state.log.child({ teamId: auth.teamId, keyId: auth.keyId });
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
