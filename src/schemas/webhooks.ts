import { z } from 'zod';
import { ALL_EVENTS, isEventName } from '../contracts/events';
import { httpUrl, objectId } from './common';

const subscribedEvents = z
  .array(
    z
      .string({ error: 'must be a string' })
      .refine((v) => v === ALL_EVENTS || isEventName(v), 'must be a known event name or *'),
    { error: 'must be an array' },
  )
  .min(1, 'must not be empty')
  .max(20, 'must have at most 20 entries')
  .transform((events) => [...new Set(events)]);
const method = z.enum(['GET', 'POST'], { error: 'must be GET or POST' });

export const webhookCreateSchema = z.strictObject({ teamId: objectId, url: httpUrl, subscribedEvents, method });

export const webhookUpdateSchema = z
  .strictObject({ url: httpUrl.optional(), subscribedEvents: subscribedEvents.optional(), method: method.optional() })
  .refine((value) => Object.keys(value).length > 0, 'must contain at least one of url, subscribedEvents, method');
