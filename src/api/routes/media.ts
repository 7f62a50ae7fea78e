// Recordings are fetchable without the API key: the unguessable token in the URL is the secret.
import { Readable } from 'node:stream';
import Router from '@koa/router';
import { recordingAudio } from '../../data/conversation-store';
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
    // A recording in pieces is sent as read, a piece or two in memory at a time; its first piece is read
    // before the answer starts, so that a store failing at once still answers 500 in the error shape.
    const pieces = recordingAudio(recording);
    const first = await pieces.next();
    if (!recording.chunkCount) {
      ctx.body = first.done ? Buffer.alloc(0) : first.value;
      return;
    }
    if (recording.size) ctx.length = recording.size;
    // One piece buffered ahead at most (Readable.from's default, 16 objects, is 128 MiB of pieces).
    ctx.body = Readable.from(
      (async function* () {
        if (!first.done) yield first.value;
        yield* pieces;
      })(),
      { highWaterMark: 1 },
    );
  });
  return router;
}
