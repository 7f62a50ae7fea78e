import { describe, expect, it } from 'vitest';
import {
  decodeWav,
  encodeWav,
  parseWavHeader,
  renderConversationWav,
  speechEngine,
  synthesizeSpeechWav,
} from '../../../src/audio';
import { findEspeak } from '../../../src/audio/espeak';

function sine(seconds: number, sampleRate: number): Int16Array {
  return Int16Array.from({ length: Math.round(seconds * sampleRate) }, (_, i) =>
    Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / sampleRate)),
  );
}

function requireEspeak(): void {
  if (findEspeak() === null)
    throw new Error('espeak-ng is not on PATH: `apt-get install espeak-ng` (Debian) to run the tests');
}

/** How many samples are clearly above silence. */
function loudSamples(wav: Buffer): number {
  return decodeWav(wav).samples.filter((s) => Math.abs(s) > 500).length;
}

describe('WAV encoding', () => {
  it('round-trips 16-bit mono PCM and reports its duration', () => {
    const samples = sine(1.5, 8000);
    const wav = encodeWav({ samples, sampleRate: 8000 });
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(parseWavHeader(wav)).toEqual({ sampleRate: 8000, channels: 1, bitsPerSample: 16, durationSeconds: 1.5 });
    expect(decodeWav(wav).samples).toEqual(samples);
  });

  it('trusts the bytes present when a streamed WAV announces placeholder sizes (espeak-ng --stdout)', () => {
    const wav = encodeWav({ samples: sine(0.5, 22050), sampleRate: 22050 });
    wav.writeUInt32LE(0x7ffff024, 4);
    wav.writeUInt32LE(0x7ffff000, 40);
    expect(parseWavHeader(wav).durationSeconds).toBeCloseTo(0.5, 3);
  });

  it('skips chunks it does not need and refuses what is not a PCM WAV', () => {
    const plain = encodeWav({ samples: sine(0.25, 16000), sampleRate: 16000 });
    const list = Buffer.alloc(8 + 4);
    list.write('LIST', 0, 'ascii');
    list.writeUInt32LE(4, 4);
    list.write('INFO', 8, 'ascii');
    const withList = Buffer.concat([plain.subarray(0, 36), list, plain.subarray(36)]);
    expect(parseWavHeader(withList).durationSeconds).toBeCloseTo(0.25, 3);
    expect(() => parseWavHeader(Buffer.from('ID3 not a wav file at all'))).toThrow(/RIFF/);
  });
});

describe('synthesizeSpeechWav', () => {
  it('voices text as tones when asked (the fallback without espeak-ng)', async () => {
    const wav = await synthesizeSpeechWav('Tuesday at 3pm works for me.', { engine: 'tone' });
    const header = parseWavHeader(wav);
    expect(header).toMatchObject({ sampleRate: 16000, channels: 1, bitsPerSample: 16 });
    expect(header.durationSeconds).toBeGreaterThan(1);
    expect(loudSamples(wav)).toBeGreaterThan(8000);
  });

  it('gives longer audio for longer text', async () => {
    const short = parseWavHeader(await synthesizeSpeechWav('Hello.', { engine: 'tone' })).durationSeconds;
    const long = parseWavHeader(
      await synthesizeSpeechWav('Hello there, could you call me back later this week?', { engine: 'tone' }),
    ).durationSeconds;
    expect(long).toBeGreaterThan(short * 2);
  });

  // The tests need espeak-ng (`.ci/run` installs it): without it they fail, never skip.
  it('speaks with espeak-ng, resampled to the rate asked', async () => {
    requireEspeak();
    expect(speechEngine()).toBe('espeak-ng');
    const wav = await synthesizeSpeechWav('How about tomorrow at 10:30?', {
      engine: 'espeak-ng',
      sampleRate: 8000,
      voice: 'en-gb',
    });
    const header = parseWavHeader(wav);
    expect(header).toMatchObject({ sampleRate: 8000, channels: 1, bitsPerSample: 16 });
    expect(header.durationSeconds).toBeGreaterThan(0.8);
    expect(loudSamples(wav)).toBeGreaterThan(1000);
  });

  it('reads text that looks like an option as text', async () => {
    requireEspeak();
    // espeak-ng itself, not `auto`: an option read as one prints no WAV, which must fail here, not fall back to tones.
    const wav = await synthesizeSpeechWav('--version', { engine: 'espeak-ng' });
    expect(parseWavHeader(wav).durationSeconds).toBeGreaterThan(0.5);
    expect(loudSamples(wav)).toBeGreaterThan(1000);
  });
});

describe('renderConversationWav', () => {
  it('places each speaker at its start time and lasts the whole call', async () => {
    const wav = await renderConversationWav(
      [
        { text: 'Hello, this is Ada.', startSeconds: 0.5, speech: { engine: 'tone' } },
        { text: 'Hi Ada.', startSeconds: 4, speech: { engine: 'tone', pitch: 20 } },
      ],
      { minDurationSeconds: 7, sampleRate: 8000 },
    );
    const header = parseWavHeader(wav);
    expect(header.durationSeconds).toBeCloseTo(7, 1);
    const { samples } = decodeWav(wav);
    const loudIn = (from: number, to: number): boolean =>
      samples.slice(from * 8000, to * 8000).some((s) => Math.abs(s) > 500);
    expect(loudIn(0, 0.5)).toBe(false);
    expect(loudIn(0.5, 2)).toBe(true);
    expect(loudIn(4, 5)).toBe(true);
  });

  it('cuts the recording where the call was hung up', async () => {
    const wav = await renderConversationWav(
      [{ text: 'This sentence is cut short by a hang-up.', startSeconds: 0, speech: { engine: 'tone' } }],
      {
        maxDurationSeconds: 1,
      },
    );
    expect(parseWavHeader(wav).durationSeconds).toBeCloseTo(1, 2);
  });
});
