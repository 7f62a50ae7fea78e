// Twilio's Basic auth and error body, shared by its REST and Voice Intelligence emulation. Any
// AccountSid/AuthToken pair is accepted: each account sees only its own resources.
import { json, type ApiRequest, type ApiResponse, type Route } from './http';

export type TwilioHandler = (
  req: ApiRequest,
  params: Record<string, string>,
  accountSid: string,
  authToken: string,
) => ApiResponse | Promise<ApiResponse>;

export function twilioError(status: number, code: number, message: string): ApiResponse {
  return json(status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });
}

function basicCredentials(req: ApiRequest): { accountSid: string; authToken: string } | null {
  const match = /^Basic\s+(\S+)$/i.exec(String(req.headers.authorization ?? ''));
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0 || colon === decoded.length - 1) return null;
  return { accountSid: decoded.slice(0, colon), authToken: decoded.slice(colon + 1) };
}

export function twilioAuthenticated(handler: TwilioHandler): Route['handle'] {
  return (req, params) => {
    const creds = basicCredentials(req);
    if (!creds) return twilioError(401, 20003, 'Authenticate');
    // The account in the path must be the one authenticating (no reading other accounts).
    if (params.account !== undefined && params.account !== creds.accountSid) {
      return twilioError(401, 20003, 'Authenticate');
    }
    return handler(req, params, creds.accountSid, creds.authToken);
  };
}
