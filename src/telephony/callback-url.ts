// Where a call's provider sends its status callbacks: one definition for the dial activity (which
// hands the URL to the provider) and the API route that receives them.
import type { ProviderName } from '../contracts/providers';
import { CALL_ID_PARAM } from './http';

export const CALLBACK_ROUTE = '/telephony/:provider/events';

export function trimBase(publicBaseUrl: string): string {
  return publicBaseUrl.replace(/\/+$/, '');
}

/** The status-callback URL a call's provider is given (the dial activity passes it to placeCall). */
export function callbackUrlFor(publicBaseUrl: string, provider: ProviderName, callId: string): string {
  return `${trimBase(publicBaseUrl)}/telephony/${provider}/events?${CALL_ID_PARAM}=${encodeURIComponent(callId)}`;
}
