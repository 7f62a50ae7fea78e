// What the worker registers.
export { phoneCallWorkflow } from './call';
export { deliverWebhookEventsWorkflow } from './deliver-webhook';
export { teamPacerWorkflow } from './team-pacer';
