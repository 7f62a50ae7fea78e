// Twilio Voice Intelligence (v2 Transcripts and their Sentences): one transcript per answered
// call, sourced from its recording when it was recorded, otherwise from the call itself.
import type { ProviderContext } from './context';
import { json, type ApiRequest, type ApiResponse, type Route } from './http';
import { speakingSeconds } from './scenarios';
import { twilioSid } from './signing';
import type { TwilioCall } from './twilio';
import { twilioAuthenticated as authenticated, twilioError } from './twilio-auth';

/** `transcribed` lists an account's calls that have a transcript (answered and ended). */
export function createTwilioIntelligenceRoutes(
  ctx: ProviderContext,
  transcribed: (accountSid: string) => TwilioCall[],
): Route[] {
  const resource = (entry: TwilioCall): Record<string, unknown> => {
    const url = `${ctx.publicUrl()}/v2/Transcripts/${entry.transcriptSid ?? ''}`;
    const { call } = entry;
    return {
      sid: entry.transcriptSid,
      account_sid: entry.accountSid,
      service_sid: `GA${entry.accountSid.slice(2).padEnd(32, '0').slice(0, 32)}`,
      status: 'completed',
      language_code: 'en-US',
      customer_key: null,
      redaction: false,
      data_logging: false,
      duration: Math.round(call.talkSeconds ?? 0),
      media_start_time: call.answeredAt?.toISOString() ?? null,
      date_created: (call.endedAt ?? call.createdAt).toISOString(),
      date_updated: (call.endedAt ?? call.createdAt).toISOString(),
      channel: {
        media_properties: { source_sid: entry.recordingSid ?? call.id },
        participants: [
          { channel_participant: 1, role: 'Agent', media_participant_id: call.from, full_name: 'AI agent' },
          { channel_participant: 2, role: 'Customer', media_participant_id: call.to },
        ],
      },
      url,
      links: { sentences: `${url}/Sentences`, media: `${url}/Media`, operator_results: `${url}/OperatorResults` },
    };
  };

  const page = (req: ApiRequest, key: string, items: unknown[], url: string): ApiResponse => {
    const pageSize = Math.min(Math.max(Number(req.query.get('PageSize') ?? 50) || 50, 1), 5000);
    return json(200, {
      [key]: items.slice(0, pageSize),
      meta: {
        page: 0,
        page_size: pageSize,
        first_page_url: url,
        previous_page_url: null,
        url,
        next_page_url: null,
        key,
      },
    });
  };

  const find = (accountSid: string, sid: string): TwilioCall | undefined =>
    transcribed(accountSid).find((e) => e.transcriptSid === sid);
  const notFound = (sid: string): ApiResponse => twilioError(404, 20404, `Transcript ${sid} was not found`);

  const list: Route['handle'] = authenticated((req, _params, accountSid) => {
    const source = req.query.get('SourceSid');
    const found = transcribed(accountSid)
      .filter((e) => !source || (e.recordingSid ?? e.call.id) === source)
      .map(resource)
      .reverse();
    return page(req, 'transcripts', found, `${ctx.publicUrl()}/v2/Transcripts`);
  });

  const fetchOne: Route['handle'] = authenticated((_req, params, accountSid) => {
    const entry = find(accountSid, params.sid);
    return entry ? json(200, resource(entry)) : notFound(params.sid);
  });

  const sentences: Route['handle'] = authenticated((req, params, accountSid) => {
    const entry = find(accountSid, params.sid);
    if (!entry) return notFound(params.sid);
    // Offsets on the wall clock, like every other time the emulator reports: under a speed factor
    // they stay between the answered and completed callbacks (the recording is on emulated time).
    const answeredMs = entry.call.answeredAt?.getTime() ?? entry.call.createdAt.getTime();
    // A mono recording holds both sides in one channel: its sentences cannot say who spoke. The call
    // itself (no recording) is transcribed track by track.
    const oneChannel = entry.recordingSid !== undefined && entry.recordingChannels === 'mono';
    const items = entry.call.spoken.map((u, index) => {
      const start = (u.at.getTime() - answeredMs) / 1000;
      return {
        media_channel: oneChannel || u.speaker === 'agent' ? 1 : 2,
        sentence_index: index,
        start_time: start.toFixed(3),
        end_time: (start + ctx.simulator.scaledMs(speakingSeconds(u.text)) / 1000).toFixed(3),
        transcript: u.text,
        sid: twilioSid('GX'),
        confidence: '0.94',
        words: [],
      };
    });
    return page(req, 'sentences', items, `${ctx.publicUrl()}/v2/Transcripts/${params.sid}/Sentences`);
  });

  return [
    { method: 'GET', pattern: /^\/v2\/Transcripts$/, handle: list },
    { method: 'GET', pattern: /^\/v2\/Transcripts\/(?<sid>[^/]+)$/, handle: fetchOne },
    { method: 'GET', pattern: /^\/v2\/Transcripts\/(?<sid>[^/]+)\/Sentences$/, handle: sentences },
  ];
}
