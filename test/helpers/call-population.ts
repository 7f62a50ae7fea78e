// Many stored calls in a team, written the way the API writes them (a block of list positions per
// create, then one insert) but without workflows: for list tests and the list benchmark, where only
// the records matter. Deterministic for a seed. Written raw (no Mongoose defaults), so every field a
// view reads is set here.
import { Types } from 'mongoose';
import { CALL_STATUSES, type CallStatus } from '../../src/contracts/call-status';
import { placeInTeamList } from '../../src/data/call-list-positions';
import { PhoneCall } from '../../src/data/models/phone-call';
import { mulberry32 } from '../../src/emulator/faults';

/** The same population for the same seed. */
export const seededRandom = mulberry32;

export interface PopulationOptions {
  teamId: string;
  templateIds: string[];
  phoneNumberIds: string[];
  count: number;
  /** Creates are blocks of 1 to this many calls (single creates and batches). */
  maxBlock: number;
  /** How many distinct callee numbers the calls go to. */
  numbers: number;
  random: () => number;
}

/** Common statuses often, `failed` rarely, `cancelled` very rarely. */
function pickStatus(random: () => number): CallStatus {
  const r = random();
  if (r < 0.002) return 'cancelled';
  if (r < 0.012) return 'failed';
  if (r < 0.08) return 'queued';
  if (r < 0.15) return 'busy';
  if (r < 0.22) return 'noAnswer';
  return 'completed';
}

/** Writes the calls block by block; returns their ids in creation order. */
export async function seedCalls(options: PopulationOptions): Promise<Types.ObjectId[]> {
  const { random } = options;
  const team = new Types.ObjectId(options.teamId);
  const ids: Types.ObjectId[] = [];
  let fileNumber = 0;
  while (ids.length < options.count) {
    const size = Math.min(options.count - ids.length, 1 + Math.floor(random() * options.maxBlock));
    const fromFile = size > 1 && random() < 0.5;
    if (fromFile) fileNumber++;
    const dispatchBatchId = new Types.ObjectId();
    const docs = Array.from({ length: size }, () => {
      const status = pickStatus(random);
      const ended = status !== 'queued';
      const at = new Date();
      return {
        _id: new Types.ObjectId(),
        teamId: team,
        callTemplateId: new Types.ObjectId(options.templateIds[Math.floor(random() * options.templateIds.length)]),
        phoneNumberId: new Types.ObjectId(options.phoneNumberIds[Math.floor(random() * options.phoneNumberIds.length)]),
        nameOfHuman: 'Ada Lovelace',
        toPhoneNumber: `+1415555${String(Math.floor(random() * options.numbers)).padStart(4, '0')}`,
        fromPhoneNumber: '+14155550100',
        promptVariableValues: [
          { key: 'firstName', value: 'Ada' },
          { key: 'appointment', value: 'Tuesday 10:30' },
        ],
        status,
        telephonyProvider: 'twilio',
        record: random() < 0.3,
        callOrigin: fromFile ? 'file' : size > 1 ? 'batch' : 'api',
        ...(fromFile && { fileId: `file-${fileNumber}`, fileName: `contacts-${fileNumber}.csv` }),
        dispatchBatchId,
        phoneCallWebhooks: [],
        resultValues: [] as Array<{ columnName: string; value: string }>,
        customTagsHitOnCall: [] as string[],
        attempts: [],
        calleeTimeZones: ['America/Los_Angeles'],
        statusExtraInfo: { statusCode: ended ? 'answered' : 'waiting-for-slot', dateTime: at },
        ...(ended && {
          callTriggeredAt: at,
          callStartedAt: at,
          callEndedAt: at,
          callDuration: 42.5,
          resultValues: [{ columnName: 'outcome', value: 'booked' }],
          customTagsHitOnCall: ['interested'],
        }),
      };
    });
    await placeInTeamList(team, docs);
    await PhoneCall.insertMany(docs, { ordered: false, timestamps: false, lean: true });
    ids.push(...docs.map((doc) => doc._id));
  }
  return ids;
}

export const ALL_STATUSES = CALL_STATUSES;
