// Results of a conversation, computed from its transcript once the call has ended: the custom
// tags hit, the meeting time the human agreed to, and the template's result columns filled in.
import { findCustomTagsHit, type CustomTag } from './custom-tags';
import { findFixedMeetingTime } from './meeting-time';
import { fillResultValues, type ResultValue } from './result-values';
import type { Utterance } from './text';

export { findCustomTagsHit, type CustomTag } from './custom-tags';
export { findFixedMeetingTime, type MeetingTimeOptions } from './meeting-time';
export { fillResultValues, columnMeaning, type ResultContext, type ResultValue } from './result-values';
export type { Speaker, Utterance } from './text';

export interface ResultsTemplate {
  customTags: readonly CustomTag[];
  resultColumns: readonly string[];
}

export interface CallResultsOptions {
  /** When the call took place: "tomorrow" and "Tuesday" are read from here. */
  callTime: Date;
  /** The callee's IANA time zone. Default 'UTC'. */
  timeZone?: string;
  nameOfHuman?: string;
  callDurationSeconds?: number;
}

export interface CallResults {
  customTagsHitOnCall: string[];
  fixedMeetingTime: string | null;
  resultValues: ResultValue[];
}

export function computeCallResults(
  template: ResultsTemplate,
  utterances: readonly Utterance[],
  opts: CallResultsOptions,
): CallResults {
  const customTagsHitOnCall = findCustomTagsHit(template.customTags, utterances);
  const fixedMeetingTime = findFixedMeetingTime(utterances, { callTime: opts.callTime, timeZone: opts.timeZone });
  const resultValues = fillResultValues(template.resultColumns, {
    utterances,
    customTagsHit: customTagsHitOnCall,
    fixedMeetingTime,
    nameOfHuman: opts.nameOfHuman,
    callDurationSeconds: opts.callDurationSeconds,
  });
  return { customTagsHitOnCall, fixedMeetingTime, resultValues };
}
