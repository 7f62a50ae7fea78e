// The call template reads activities need.
import type { Types } from 'mongoose';
import { CallTemplate, type CallTemplateDoc } from './models/call-template';

export interface TemplateStore {
  findById(templateId: string | Types.ObjectId): Promise<CallTemplateDoc | null>;
}

export function createTemplateStore(): TemplateStore {
  return {
    findById: (templateId) => CallTemplate.findById(templateId).lean<CallTemplateDoc>().exec(),
  };
}
