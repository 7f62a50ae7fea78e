// The stores activities use, over the Mongoose models (one connection, made by the entry point).
import { createCallStore } from './call-store';
import { createConversationStore } from './conversation-store';
import { createDoNotCallStore } from './do-not-call-store';
import { createPacingStore } from './pacing-store';
import { createTemplateStore } from './template-store';
import { createWebhookStore } from './webhook-store';

export function createMongoStores() {
  return {
    calls: createCallStore(),
    templates: createTemplateStore(),
    conversations: createConversationStore(),
    webhooks: createWebhookStore(),
    pacing: createPacingStore(),
    doNotCall: createDoNotCallStore(),
  };
}
