// Results of a conversation, computed from its transcript once the call has ended: the custom
// tags hit (and `optOut` when the callee asked not to be called again), the meeting time the human
// agreed to, and the template's result columns filled in.
import { findCustomTagsHit, type CustomTag } from './custom-tags';
import { findFixedMeetingTime } from './meeting-time';
import { askedNotToBeCalled, OPT_OUT_TAG } from './opt-out';
import { fillResultValues, type ResultValue } from './result-values';
import type { Utterance } from './text';

export { findCustomTagsHit, type CustomTag } from './custom-tags';
export { findFixedMeetingTime, type MeetingTimeOptions } from './meeting-time';
export { askedNotToBeCalled, OPT_OUT_TAG } from './opt-out';
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
  /** The callee asked not to be called again: the number belongs on the team's do-not-call list. */
  optedOut: boolean;
}

export function computeCallResults(
  template: ResultsTemplate,
  utterances: readonly Utterance[],
  opts: CallResultsOptions,
): CallResults {
  const optedOut = askedNotToBeCalled(utterances);
  const tagsHit = findCustomTagsHit(template.customTags, utterances);
  // A template tag of the same name is the same fact: listed once.
  const customTagsHitOnCall = optedOut && !tagsHit.includes(OPT_OUT_TAG) ? [...tagsHit, OPT_OUT_TAG] : tagsHit;
  const fixedMeetingTime = findFixedMeetingTime(utterances, { callTime: opts.callTime, timeZone: opts.timeZone });
  const resultValues = fillResultValues(template.resultColumns, {
    utterances,
    customTagsHit: customTagsHitOnCall,
    fixedMeetingTime,
    nameOfHuman: opts.nameOfHuman,
    callDurationSeconds: opts.callDurationSeconds,
  });
  return { customTagsHitOnCall, fixedMeetingTime, resultValues, optedOut };
}
