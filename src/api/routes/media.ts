// Recordings are fetchable without the API key: the unguessable token in the URL is the secret.
import Router from '@koa/router';
import { Recording } from '../../data/models/recording';
import { notFound } from '../errors';
import type { RequestState } from '../state';

export function createMediaRouter(): Router {
  const router = new Router<RequestState>();
  router.get('/recordings/:file', async (ctx) => {
    const match = /^([A-Za-z0-9_-]{32})\.wav$/.exec(ctx.params.file);
    const recording = match ? await Recording.findOne({ token: match[1] }).lean() : null;
    if (!recording) throw notFound('recording not found');
    ctx.type = recording.contentType;
    ctx.set('Cache-Control', 'private, max-age=3600');
    ctx.body = Buffer.from(recording.audio.buffer ?? recording.audio);
  });
  return router;
}
