// PCM WAV (RIFF) encoding and decoding. We only ever produce 16-bit little-endian mono, which
// every player and the `audio/wav` MIME type handle; decoding also accepts what espeak-ng streams.

export interface WavHeader {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  durationSeconds: number;
}

/** Mono signed 16-bit samples at a sample rate: the working form for mixing and resampling. */
export interface PcmAudio {
  samples: Int16Array;
  sampleRate: number;
}

interface WavLayout extends WavHeader {
  dataOffset: number;
  dataBytes: number;
}

const RIFF_HEADER_BYTES = 44;
const PCM_FORMAT = 1;
const EXTENSIBLE_FORMAT = 0xfffe;

export function encodeWav({ samples, sampleRate }: PcmAudio): Buffer {
  const dataBytes = samples.length * 2;
  const buf = Buffer.alloc(RIFF_HEADER_BYTES + dataBytes);
  buf.write('RIFF', 0, 'ascii');
  buf.writeUInt32LE(36 + dataBytes, 4);
  buf.write('WAVE', 8, 'ascii');
  buf.write('fmt ', 12, 'ascii');
  buf.writeUInt32LE(16, 16);
  buf.writeUInt16LE(PCM_FORMAT, 20);
  buf.writeUInt16LE(1, 22);
  buf.writeUInt32LE(sampleRate, 24);
  buf.writeUInt32LE(sampleRate * 2, 28);
  buf.writeUInt16LE(2, 32);
  buf.writeUInt16LE(16, 34);
  buf.write('data', 36, 'ascii');
  buf.writeUInt32LE(dataBytes, 40);
  for (let i = 0; i < samples.length; i += 1) buf.writeInt16LE(samples[i], RIFF_HEADER_BYTES + i * 2);
  return buf;
}

function readLayout(buf: Buffer): WavLayout {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') {
    throw new Error('not a RIFF/WAVE file');
  }
  let format: Omit<WavHeader, 'durationSeconds'> | undefined;
  let offset = 12;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('ascii', offset, offset + 4);
    const declared = buf.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (declared < 16 || body + 16 > buf.length) throw new Error('truncated fmt chunk');
      const audioFormat = buf.readUInt16LE(body);
      if (audioFormat !== PCM_FORMAT && audioFormat !== EXTENSIBLE_FORMAT) {
        throw new Error(`unsupported WAV encoding ${audioFormat} (PCM only)`);
      }
      format = {
        channels: buf.readUInt16LE(body + 2),
        sampleRate: buf.readUInt32LE(body + 4),
        bitsPerSample: buf.readUInt16LE(body + 14),
      };
    } else if (id === 'data') {
      if (!format) throw new Error('data chunk before fmt chunk');
      // A WAV written to a pipe (espeak-ng --stdout) cannot seek back to fix its sizes, so it
      // announces a placeholder: trust the bytes that are actually there.
      const dataBytes = Math.min(declared, buf.length - body);
      const bytesPerSecond = format.sampleRate * format.channels * (format.bitsPerSample / 8);
      if (bytesPerSecond <= 0) throw new Error('WAV format has a zero byte rate');
      return { ...format, dataOffset: body, dataBytes, durationSeconds: dataBytes / bytesPerSecond };
    }
    offset = body + declared + (declared % 2);
  }
  throw new Error('WAV has no data chunk');
}

export function parseWavHeader(buf: Buffer): WavHeader {
  const { sampleRate, channels, bitsPerSample, durationSeconds } = readLayout(buf);
  return { sampleRate, channels, bitsPerSample, durationSeconds };
}

/** Decodes 16-bit PCM, averaging channels down to mono. */
export function decodeWav(buf: Buffer): PcmAudio {
  const layout = readLayout(buf);
  if (layout.bitsPerSample !== 16) throw new Error(`unsupported sample size ${layout.bitsPerSample} (16-bit only)`);
  const frames = Math.floor(layout.dataBytes / (2 * layout.channels));
  const samples = new Int16Array(frames);
  for (let frame = 0; frame < frames; frame += 1) {
    let sum = 0;
    for (let ch = 0; ch < layout.channels; ch += 1) {
      sum += buf.readInt16LE(layout.dataOffset + (frame * layout.channels + ch) * 2);
    }
    samples[frame] = Math.round(sum / layout.channels);
  }
  return { samples, sampleRate: layout.sampleRate };
}

/** Linear-interpolation resampling: plenty for speech headed to a phone-quality recording. */
export function resample(audio: PcmAudio, sampleRate: number): PcmAudio {
  if (audio.sampleRate === sampleRate || audio.samples.length === 0) return { samples: audio.samples, sampleRate };
  const ratio = audio.sampleRate / sampleRate;
  const length = Math.max(1, Math.floor(audio.samples.length / ratio));
  const out = new Int16Array(length);
  for (let i = 0; i < length; i += 1) {
    const position = i * ratio;
    const left = Math.floor(position);
    const right = Math.min(left + 1, audio.samples.length - 1);
    const fraction = position - left;
    out[i] = Math.round(audio.samples[left] * (1 - fraction) + audio.samples[right] * fraction);
  }
  return { samples: out, sampleRate };
}
