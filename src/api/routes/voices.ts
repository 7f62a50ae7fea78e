// Endpoint 9 and the voice samples it links to. Samples are synthesised once per process with the
// same engine as recordings (espeak-ng when installed, else tones) and served without the key, by an
// unguessable token per voice (src/voices/sample-tokens.ts): a voice's id alone fetches nothing.
import Router from '@koa/router';
import type { z } from 'zod';
import { synthesizeSpeechWav } from '../../audio';
import { Voice } from '../../data/models/voice';
import { SAMPLE_TOKEN, type VoiceSampleTokens } from '../../voices/sample-tokens';
import { requireScope } from '../auth';
import { notFound } from '../errors';
import type { voiceViewSchema } from '../../schemas/responses';
import type { RequestState } from '../state';

export function createVoicesRouter(deps: { publicBaseUrl: string; sampleTokens: VoiceSampleTokens }): Router {
  const router = new Router<RequestState>({ prefix: '/v1/voices' });
  router.get('/', requireScope('voices:read'), async (ctx) => {
    const voices = await Voice.find().sort({ id: 1 }).lean();
    ctx.body = {
      data: voices.map((v): z.output<typeof voiceViewSchema> => ({
        id: v.id,
        voiceSampleUrl: `${deps.publicBaseUrl}/voices/${deps.sampleTokens.tokenOf(v.id)}/sample.wav`,
        voiceName: v.voiceName,
        gender: v.gender,
        isRecommended: v.isRecommended,
      })),
    };
  });
  return router;
}

export function createVoiceSamplesRouter(deps: { sampleTokens: VoiceSampleTokens }): Router {
  const router = new Router<RequestState>();
  const samples = new Map<number, Promise<Buffer>>();
  router.get('/voices/:token/sample.wav', async (ctx) => {
    const { token } = ctx.params;
    // A catalogue of a few dozen voices: trying each costs less than the lookup it saves.
    const voices = SAMPLE_TOKEN.test(token) ? await Voice.find().lean() : [];
    const voice = voices.find((v) => deps.sampleTokens.isTokenOf(v.id, token));
    if (!voice) throw notFound('voice sample not found');
    let sample = samples.get(voice.id);
    if (!sample) {
      sample = synthesizeSpeechWav(voice.sampleText, { voice: voice.espeakVoice });
      samples.set(voice.id, sample);
      sample.catch(() => samples.delete(voice.id));
    }
    ctx.type = 'audio/wav';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = await sample;
  });
  return router;
}
