// What the worker registers.
export { phoneCallWorkflow } from './call';
export { deliverWebhookEventsWorkflow } from './deliver-webhook';
