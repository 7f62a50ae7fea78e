// Answering-machine detection: what a call template asks for and what the provider says answered.
// Plain data: safe inside workflows.

/**
 * `off`: no detection (a greeting is taken for a person, as before the setting). `hangUp`: end the
 * call as soon as a machine (or a fax) answers. `leaveMessage`: wait for the greeting to end, speak
 * the template's voicemail message, then hang up.
 */
export const MACHINE_DETECTION_MODES = ['off', 'hangUp', 'leaveMessage'] as const;
export type MachineDetectionMode = (typeof MACHINE_DETECTION_MODES)[number];
/** The modes that ask the provider to detect. */
export type ActiveMachineDetection = Exclude<MachineDetectionMode, 'off'>;

/**
 * Who or what answered, as the provider's detector decided. `unknown`: it could not tell; such a
 * call is treated as a person's, since hanging up on a person is the worse mistake.
 */
export const ANSWERED_BY = ['human', 'machine', 'fax', 'unknown'] as const;
export type AnsweredBy = (typeof ANSWERED_BY)[number];

export function isMachine(answeredBy: AnsweredBy | null | undefined): boolean {
  return answeredBy === 'machine' || answeredBy === 'fax';
}

/** The longest voicemail message a template may carry (characters, before the variables are filled). */
export const MAX_VOICEMAIL_MESSAGE_LENGTH = 2000;
