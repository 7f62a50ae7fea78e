// The adapter factory: one stateless adapter per use, from a team's credentials and the base URL
// of the provider: the real API (the defaults in src/config.ts), or the emulator's URL (it serves all
// three APIs at its root).
import type { ProviderCredentials, TelephonyProvider } from './provider';
import { createTelnyxProvider } from './telnyx';
import { createTwilioProvider } from './twilio';
import { createVonageProvider } from './vonage';

export interface ProviderBaseUrls {
  twilio: string;
  vonage: string;
  telnyx: string;
}

export function createProvider(credentials: ProviderCredentials, baseUrls: ProviderBaseUrls): TelephonyProvider {
  switch (credentials.provider) {
    case 'twilio':
      return createTwilioProvider(credentials.twilio, baseUrls.twilio);
    case 'vonage':
      return createVonageProvider(credentials.vonage, baseUrls.vonage);
    case 'telnyx':
      return createTelnyxProvider(credentials.telnyx, baseUrls.telnyx);
  }
}

export type { ProviderCredentials, TelephonyProvider } from './provider';
