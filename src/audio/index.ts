// Spoken audio for emulator recordings and the service's voice samples: espeak-ng when it is on
// PATH, otherwise a tone sequence with the same rhythm (README states which one a machine uses).
import { findEspeak, runEspeak } from './espeak';
import { synthesizeTones } from './tone';
import { decodeWav, encodeWav, resample, type PcmAudio } from './wav';

export { decodeWav, encodeWav, parseWavHeader, type PcmAudio, type WavHeader } from './wav';

export type SpeechEngine = 'espeak-ng' | 'tone';

export interface SpeechOptions {
  /** espeak-ng voice, e.g. `en-us`, `en-gb+f3` (a `+f` variant also raises the tone fallback). */
  voice?: string;
  wordsPerMinute?: number;
  /** 0-99 as espeak-ng takes it; 50 is neutral. */
  pitch?: number;
  /** Output sample rate in Hz. */
  sampleRate?: number;
  /** `auto` uses espeak-ng when installed and falls back to tones if it fails. */
  engine?: 'auto' | SpeechEngine;
}

export const DEFAULT_SAMPLE_RATE = 16_000;
const DEFAULTS = { voice: 'en-us', wordsPerMinute: 165, pitch: 50 };

/** The engine `auto` picks on this machine. */
export function speechEngine(): SpeechEngine {
  return findEspeak() === null ? 'tone' : 'espeak-ng';
}

function toneVoice(options: SpeechOptions, sampleRate: number): { basePitchHz: number; sampleRate: number } {
  const pitch = options.pitch ?? DEFAULTS.pitch;
  const female = /\+f\d*$/i.test(options.voice ?? '');
  return { basePitchHz: 110 + pitch * 2.2 + (female ? 80 : 0), sampleRate };
}

/** Mono PCM of `text` spoken, at `options.sampleRate`. */
export async function synthesizeSpeech(text: string, options: SpeechOptions = {}): Promise<PcmAudio> {
  const sampleRate = options.sampleRate ?? DEFAULT_SAMPLE_RATE;
  const engine = options.engine ?? 'auto';
  const binary = engine === 'tone' ? null : findEspeak();
  if (engine === 'espeak-ng' && binary === null) throw new Error('espeak-ng is not on PATH');
  if (binary !== null && text.trim().length > 0) {
    try {
      const wav = await runEspeak(binary, text, {
        voice: options.voice ?? DEFAULTS.voice,
        wordsPerMinute: options.wordsPerMinute ?? DEFAULTS.wordsPerMinute,
        pitch: options.pitch ?? DEFAULTS.pitch,
      });
      return resample(decodeWav(wav), sampleRate);
    } catch (err) {
      if (engine === 'espeak-ng') throw err;
      // auto: an unknown voice or a broken install must not cost the recording; tones still play.
    }
  }
  return { samples: synthesizeTones(text, toneVoice(options, sampleRate)), sampleRate };
}

/** A playable WAV (16-bit PCM mono) of `text` spoken. */
export async function synthesizeSpeechWav(text: string, options: SpeechOptions = {}): Promise<Buffer> {
  return encodeWav(await synthesizeSpeech(text, options));
}

export interface ConversationSegment {
  text: string;
  /** Seconds from the start of the recording. */
  startSeconds: number;
  speech?: Omit<SpeechOptions, 'sampleRate'>;
}

export interface ConversationRenderOptions {
  sampleRate?: number;
  /** The recording lasts at least this long (a call that goes on silently after the last word). */
  minDurationSeconds?: number;
  /** Nothing after this point is kept (a call hung up mid-sentence). */
  maxDurationSeconds?: number;
}

/** One mono WAV of several speakers, each segment placed at its start time (overlaps are mixed). */
export async function renderConversationWav(
  segments: ConversationSegment[],
  options: ConversationRenderOptions = {},
): Promise<Buffer> {
  const sampleRate = options.sampleRate ?? DEFAULT_SAMPLE_RATE;
  const voiced = await Promise.all(
    segments.map(async (segment) => ({
      start: Math.round(Math.max(0, segment.startSeconds) * sampleRate),
      audio: await synthesizeSpeech(segment.text, { ...segment.speech, sampleRate }),
    })),
  );
  const spokenEnd = voiced.reduce((end, v) => Math.max(end, v.start + v.audio.samples.length), 0);
  let length = Math.max(spokenEnd, Math.round((options.minDurationSeconds ?? 0) * sampleRate));
  if (options.maxDurationSeconds !== undefined) {
    length = Math.min(length, Math.round(options.maxDurationSeconds * sampleRate));
  }
  const mix = new Int32Array(Math.max(length, 1));
  for (const { start, audio } of voiced) {
    for (let i = 0; i < audio.samples.length && start + i < mix.length; i += 1) mix[start + i] += audio.samples[i];
  }
  const samples = new Int16Array(mix.length);
  for (let i = 0; i < mix.length; i += 1) samples[i] = Math.max(-0x8000, Math.min(0x7fff, mix[i]));
  return encodeWav({ samples, sampleRate });
}
