import { Schema, model, type InferSchemaType, type Types } from 'mongoose';
import { CALL_STATUSES } from '../../contracts/call-status';
import { ANSWERED_BY } from '../../contracts/machine-detection';
import { PROVIDERS } from '../../contracts/providers';

export const CALL_ORIGINS = ['api', 'batch', 'file'] as const;
export type CallOrigin = (typeof CALL_ORIGINS)[number];

const phoneCallSchema = new Schema(
  {
    teamId: { type: Schema.Types.ObjectId, ref: 'Team', required: true },
    callTemplateId: { type: Schema.Types.ObjectId, ref: 'CallTemplate', required: true },
    nameOfHuman: { type: String },
    toPhoneNumber: { type: String, required: true },
    promptVariableValues: {
      type: [
        new Schema(
          {
            key: { type: String, required: true },
            // It may be empty: a variable the template does not require may be given blank (it is dropped
            // from the prompt). Mongoose's `required` refuses an empty string; the API makes it present.
            value: { type: String, default: '' },
          },
          { _id: false },
        ),
      ],
      default: [],
    },
    phoneNumberId: { type: Schema.Types.ObjectId, ref: 'PhoneNumber' },
    fromPhoneNumber: { type: String, required: true },
    toEmailAddress: { type: String },
    status: { type: String, enum: CALL_STATUSES, required: true, default: 'queued' },
    telephonyProvider: { type: String, enum: PROVIDERS, required: true },
    record: { type: Boolean, required: true, default: false },
    callDelayedUntil: { type: Date },
    /** The callee's zone as the client gave it on create (IANA); overrides the number's zones. */
    calleeTimeZone: { type: String },
    phoneCallWebhooks: {
      type: [
        new Schema(
          {
            url: { type: String, required: true },
            subscribedEvent: { type: String, required: true },
            /** Sealed with ENCRYPTION_KEY; never returned. */
            secretSealed: { type: String, required: true },
          },
          { _id: false },
        ),
      ],
      default: [],
    },
    resultValues: {
      type: [
        new Schema(
          { columnName: { type: String, required: true }, value: { type: String, default: '' } },
          { _id: false },
        ),
      ],
      default: [],
    },
    fileId: { type: String },
    fileName: { type: String },
    callTriggeredAt: { type: Date },
    callStartedAt: { type: Date },
    callEndedAt: { type: Date },
    statusExtraInfo: {
      type: new Schema(
        { statusCode: { type: String, required: true }, dateTime: { type: Date, required: true } },
        { _id: false },
      ),
    },
    fixedMeetingTime: { type: Date },
    recordingUrl: { type: String },
    callDuration: { type: Number },
    /** Answering-machine detection's verdict on the last attempt (absent when detection is off). */
    answeredBy: { type: String, enum: ANSWERED_BY },
    callOrigin: { type: String, enum: CALL_ORIGINS, required: true },
    customTagsHitOnCall: { type: [String], default: [] },
    /** Each dial attempt that has ended, in order (the last one's outcome is also the call's while it is final). */
    attempts: {
      type: [
        new Schema(
          {
            attempt: { type: Number, required: true },
            providerCallId: { type: String, default: null },
            callTriggeredAt: { type: Date, required: true },
            callStartedAt: { type: Date, default: null },
            callEndedAt: { type: Date, required: true },
            status: { type: String, required: true },
            statusCode: { type: String, required: true },
            answeredBy: { type: String, enum: ANSWERED_BY, default: null },
          },
          { _id: false },
        ),
      ],
      default: [],
    },
    // Internal fields, never part of an answer:
    /** The provider's id for the call once dialled. */
    providerCallId: { type: String },
    /** The dispatch batch (src/data/models/dispatch-batch.ts) whose workflow starts cover this call. */
    dispatchBatchId: { type: Schema.Types.ObjectId, required: true },
    /** Zones the calling window is checked in: calleeTimeZone, else the number's, else the template's. */
    calleeTimeZones: { type: [String], default: [] },
    /** Its place in the team's newest-first list (src/data/call-list-positions.ts). */
    listSeq: { type: Number, required: true },
    /** The list slices it belongs to, one per slice size: what a page reads by. */
    listKeys: { type: [String], default: undefined, required: true },
  },
  { timestamps: true },
);

// List queries (src/data/call-list-query.ts) read one slice at a time: on MongoDB each read is an index
// range scan, by list key or, for the rest of a team under a filter, by that filter; FerretDB 1.x
// ignores these and uses the PostgreSQL indexes src/local/ferretdb-indexes.ts adds.
phoneCallSchema.index({ teamId: 1, listKeys: 1, listSeq: -1 });
phoneCallSchema.index({ teamId: 1, status: 1, listSeq: -1 });
phoneCallSchema.index({ teamId: 1, callTemplateId: 1, listSeq: -1 });
phoneCallSchema.index({ teamId: 1, phoneNumberId: 1, listSeq: -1 });
phoneCallSchema.index({ teamId: 1, toPhoneNumber: 1, listSeq: -1 });
phoneCallSchema.index({ teamId: 1, fileId: 1, listSeq: -1 });
// The reconciler's lookup of a pending batch's calls.
phoneCallSchema.index({ dispatchBatchId: 1 });

export type PhoneCallDoc = InferSchemaType<typeof phoneCallSchema> & {
  _id: Types.ObjectId;
  createdAt: Date;
  updatedAt: Date;
};
export const PhoneCall = model('PhoneCall', phoneCallSchema);
