// The fallback voice when espeak-ng is not installed: one soft tone burst per syllable, pitched by
// the letters, with pauses at word and sentence breaks. Not speech, but it has speech's rhythm, so
// a recording still lasts as long as the conversation and is plainly audible in any player.

export interface ToneVoice {
  /** Centre pitch in Hz (a lower one reads as a different speaker). */
  basePitchHz: number;
  sampleRate: number;
}

const SYLLABLE_SECONDS = 0.17;
const WORD_GAP_SECONDS = 0.07;
const SENTENCE_GAP_SECONDS = 0.3;
const EDGE_SECONDS = 0.015;
const AMPLITUDE = 0.32 * 0x7fff;

function syllables(word: string): number {
  const groups = word.toLowerCase().match(/[aeiouy]+/g);
  return Math.max(1, groups ? groups.length : Math.ceil(word.length / 3));
}

function letterSum(word: string): number {
  let sum = 0;
  for (const char of word) sum += char.codePointAt(0) ?? 0;
  return sum;
}

/** Mono 16-bit samples voicing `text` as tones. */
export function synthesizeTones(text: string, voice: ToneVoice): Int16Array {
  const { sampleRate, basePitchHz } = voice;
  const chunks: Float32Array[] = [];
  const silence = (seconds: number): void => {
    chunks.push(new Float32Array(Math.round(seconds * sampleRate)));
  };
  const tokens = text.split(/\s+/).filter((token) => token.length > 0);
  silence(0.05);
  tokens.forEach((token) => {
    const word = token.replace(/[^\p{L}\p{N}]/gu, '');
    const count = word.length > 0 ? syllables(word) : 0;
    for (let s = 0; s < count; s += 1) {
      // Pitch wanders with the letters and falls gently through the word, like an intonation contour.
      const pitch = basePitchHz * (1 + (((letterSum(word) + s * 7) % 9) - 4) * 0.035 - s * 0.02);
      const length = Math.round(SYLLABLE_SECONDS * sampleRate);
      const edge = Math.round(EDGE_SECONDS * sampleRate);
      const burst = new Float32Array(length);
      for (let i = 0; i < length; i += 1) {
        const t = i / sampleRate;
        const envelope = Math.min(1, i / edge, (length - i) / edge);
        const wave = Math.sin(2 * Math.PI * pitch * t) + 0.35 * Math.sin(4 * Math.PI * pitch * t);
        burst[i] = (wave / 1.35) * envelope * AMPLITUDE;
      }
      chunks.push(burst);
    }
    silence(/[.!?,;:]$/.test(token) ? SENTENCE_GAP_SECONDS : WORD_GAP_SECONDS);
  });
  const total = chunks.reduce((n, chunk) => n + chunk.length, 0);
  const samples = new Int16Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    for (let i = 0; i < chunk.length; i += 1) samples[offset + i] = Math.round(chunk[i]);
    offset += chunk.length;
  }
  return samples;
}
