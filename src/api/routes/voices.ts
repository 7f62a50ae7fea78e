// Endpoint 9 and the voice samples it links to. Samples are synthesised once per process with the
// same engine as recordings (espeak-ng when installed, else tones) and served without the key.
import Router from '@koa/router';
import type { z } from 'zod';
import { synthesizeSpeechWav } from '../../audio';
import { Voice } from '../../data/models/voice';
import { requireScope } from '../auth';
import { notFound } from '../errors';
import type { voiceViewSchema } from '../../schemas/responses';
import type { RequestState } from '../state';

export function createVoicesRouter(deps: { publicBaseUrl: string }): Router {
  const router = new Router<RequestState>({ prefix: '/v1/voices' });
  router.get('/', requireScope('voices:read'), async (ctx) => {
    const voices = await Voice.find().sort({ id: 1 }).lean();
    ctx.body = {
      data: voices.map((v): z.output<typeof voiceViewSchema> => ({
        id: v.id,
        voiceSampleUrl: `${deps.publicBaseUrl}/voices/${v.id}/sample.wav`,
        voiceName: v.voiceName,
        gender: v.gender,
        isRecommended: v.isRecommended,
      })),
    };
  });
  return router;
}

export function createVoiceSamplesRouter(): Router {
  const router = new Router<RequestState>();
  const samples = new Map<number, Promise<Buffer>>();
  router.get('/voices/:id/sample.wav', async (ctx) => {
    const id = Number(ctx.params.id);
    const voice = Number.isInteger(id) ? await Voice.findOne({ id }).lean() : null;
    if (!voice) throw notFound('voice not found');
    let sample = samples.get(id);
    if (!sample) {
      sample = synthesizeSpeechWav(voice.sampleText, { voice: voice.espeakVoice });
      samples.set(id, sample);
      sample.catch(() => samples.delete(id));
    }
    ctx.type = 'audio/wav';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = await sample;
  });
  return router;
}
