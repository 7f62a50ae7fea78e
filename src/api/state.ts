// What the API's middleware puts on `ctx.state`, typed once (Koa's router recipes' typed state):
// routers are `new Router<RequestState>()`, so handlers read `ctx.state.log` without casts.
import type { Middleware, ParameterizedContext } from 'koa';
import type { AuthenticatedKey } from '../auth/api-keys';
import type { Logger } from '../logger';

export interface RequestState {
  /** Set first, by request-context.ts, on every request. */
  requestId: string;
  /** The request's logger: carries the request id (and the key's team once authenticated). */
  log: Logger;
  /** Set by requireApiKey on /v1 routes. */
  auth?: AuthenticatedKey;
}

export type ApiContext = ParameterizedContext<RequestState>;
export type ApiMiddleware = Middleware<RequestState>;
