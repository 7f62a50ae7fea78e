// `secrets reseal`: seals every stored secret again under the current ENCRYPTION_KEY, so that the
// previous key can be dropped (README, "Rotating ENCRYPTION_KEY"). Each document is rewritten by one
// conditional update on its updatedAt: a change made since it was read makes the update miss, and the
// document is read again. That holds on MongoDB; FerretDB 1.x applies an update by reading the document
// and writing it back whole, so two updates racing there can both apply, the later undoing the other.
// A call's record is written by its workflow at any moment while the call lives, so there it is
// rewritten only once nothing writes it any more (`settledCall`); the others are counted as `live`,
// for a later run. A run after one that left nothing live changes nothing.
import { isTerminal, type CallStatus } from '../contracts/call-status';
import { SecretBoxError, type SecretBox } from '../crypto/secret-box';
import { isFerretdb } from '../data/connection';
import { PhoneCall, type PhoneCallDoc } from '../data/models/phone-call';
import { Team, type TeamDoc } from '../data/models/team';
import { Webhook, type WebhookDoc } from '../data/models/webhook';

export interface ResealCounts {
  /** Documents holding at least one sealed value. */
  examined: number;
  /** Documents rewritten: some value was sealed under a previous key. */
  resealed: number;
  /**
   * Documents with a value that opens under none of the keys: that value is left as it is, the
   * document's others are resealed (so a document may count here and in `resealed` too).
   */
  unreadable: number;
  /**
   * Documents with a value under a previous key left as they are, for a later run: calls still live
   * or ended too recently (`settledCall`, on FerretDB), and documents changed under every try.
   */
  live: number;
}

/**
 * How long an ended call's record must have gone unchanged before it is resealed. After the final
 * status only activity attempts still running write the record: the capture stores its results on a
 * call that ended otherwise (activities/capture.ts), and an attempt Temporal has given up on (a capture
 * past its 2-minute timeout, a dial past its 20 seconds) is not stopped, only ignored, so it may still
 * write: this leaves it an hour.
 */
export const ENDED_CALL_QUIET_MS = 60 * 60 * 1000;

/**
 * Whether nothing writes the call any more: ended, unchanged for ENDED_CALL_QUIET_MS, and given its
 * list position (calls stored before positions existed get theirs when an API starts:
 * src/data/call-list-backfill.ts).
 */
function settledCall(
  call: Pick<PhoneCallDoc, 'status' | 'updatedAt'> & { listSeq?: number },
  now = new Date(),
): boolean {
  return (
    isTerminal(call.status as CallStatus) &&
    call.updatedAt.getTime() <= now.getTime() - ENDED_CALL_QUIET_MS &&
    call.listSeq !== undefined
  );
}

/** What an operator is told about the calls a run left `live`. */
export function liveCallsNote(live: number): string {
  return (
    `${live} call(s) not ended, or ended less than ${ENDED_CALL_QUIET_MS / 60_000} minutes ago, keep webhook ` +
    'secrets under a previous key (their records may still be written): run this again once they have ended, ' +
    'and drop the previous key only after a run leaves no call live.'
  );
}

/**
 * What an operator is told when values open under none of the keys (null: none did). The rotation's
 * next step drops the previous key: a value sealed under a key missing from this configuration is
 * lost for good once that key is gone everywhere.
 */
export function unreadableNote(counts: Record<'teams' | 'webhooks' | 'phoneCalls', ResealCounts>): string | null {
  const total = counts.teams.unreadable + counts.webhooks.unreadable + counts.phoneCalls.unreadable;
  if (total === 0) return null;
  return (
    `Warning: ${total} document(s) hold a secret that opens under none of the keys given ` +
    `(teams ${counts.teams.unreadable}, webhooks ${counts.webhooks.unreadable}, phoneCalls ${counts.phoneCalls.unreadable}; ` +
    'left as they are, see "unreadable"): the service cannot use them either. If they were sealed under a key ' +
    'missing from ENCRYPTION_KEY and ENCRYPTION_KEYS_PREVIOUS, add that key and run this again before dropping ' +
    'any key; otherwise set those secrets again (team set-provider --credentials, the webhook endpoint).'
  );
}

const ATTEMPTS = 3;

interface Collection<T> {
  /** Documents that may hold sealed values. */
  docs: AsyncIterable<T>;
  reload(doc: T): Promise<T | null>;
  /** Whether the document may be rewritten now (else counted as `live` and left as it is); always when absent. */
  writable?(doc: T): boolean;
  /** Applies `set` only if the document is unchanged since read; answers whether it did. */
  writeIfUnchanged(doc: T, set: Record<string, unknown>): Promise<boolean>;
}

/**
 * Re-seals the values `rewrite` finds in each document; `rewrite` answers the `$set` to apply, or
 * null when every value is under the current key already.
 */
async function resealCollection<T>(
  collection: Collection<T>,
  rewrite: (doc: T, reseal: (sealed: string) => string) => Record<string, unknown> | null,
  box: SecretBox,
): Promise<ResealCounts> {
  const counts: ResealCounts = { examined: 0, resealed: 0, unreadable: 0, live: 0 };
  // A value no key opens stays as it is; the document's other values are still resealed, or they would
  // be lost with the previous key (a team's Twilio credentials beside Vonage ones nobody can open).
  let unreadableHere: boolean;
  const reseal = (sealed: string) => {
    if (box.sealedWithCurrentKey(sealed)) return sealed;
    try {
      return box.seal(box.open(sealed));
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err;
      unreadableHere = true;
      return sealed;
    }
  };
  for await (const first of collection.docs) {
    counts.examined += 1;
    let doc: T | null = first;
    // Whether the document as last read holds a value no key opens (counted once, whatever the tries).
    let unreadable = false;
    for (let attempt = 1; doc; attempt++) {
      if (attempt > ATTEMPTS) {
        // Changed under every try (a call being written as it runs): left for a later run, and said so.
        counts.live += 1;
        break;
      }
      unreadableHere = false;
      const set = rewrite(doc, reseal);
      unreadable = unreadableHere;
      if (!set) break;
      if (collection.writable && !collection.writable(doc)) {
        counts.live += 1;
        break;
      }
      if (await collection.writeIfUnchanged(doc, set)) {
        counts.resealed += 1;
        break;
      }
      doc = await collection.reload(doc); // changed meanwhile: read it again
    }
    if (unreadable) counts.unreadable += 1;
  }
  return counts;
}

export async function resealSecrets(box: SecretBox, now = new Date()) {
  // Optimistic concurrency on updatedAt, which every update of these models moves. On MongoDB that
  // holds against a call's workflow too (each update is atomic, and sets only its own fields); only
  // FerretDB 1.x needs the calls to be settled.
  const callsSettleFirst = await isFerretdb();
  const teams = await resealCollection<TeamDoc>(
    {
      docs: Team.find({ 'providerSettings.credentialsSealed': { $exists: true } })
        .lean<TeamDoc>()
        .cursor(),
      reload: (doc) => Team.findById(doc._id).lean<TeamDoc>(),
      writeIfUnchanged: async (doc, set) =>
        (await Team.updateOne({ _id: doc._id, updatedAt: doc.updatedAt }, { $set: set })).modifiedCount === 1,
    },
    (team, reseal) => {
      const settings = team.providerSettings.map((s) => ({
        provider: s.provider,
        fromNumbers: [...s.fromNumbers],
        ...(s.credentialsSealed ? { credentialsSealed: reseal(s.credentialsSealed) } : {}),
      }));
      const changed = settings.some((s, i) => s.credentialsSealed !== team.providerSettings[i]!.credentialsSealed);
      return changed ? { providerSettings: settings } : null;
    },
    box,
  );
  const webhooks = await resealCollection<WebhookDoc>(
    {
      docs: Webhook.find({}).lean<WebhookDoc>().cursor(),
      reload: (doc) => Webhook.findById(doc._id).lean<WebhookDoc>(),
      writeIfUnchanged: async (doc, set) =>
        (await Webhook.where({ _id: doc._id, updatedAt: doc.updatedAt }).updateOne({}, { $set: set })).modifiedCount ===
        1,
    },
    (hook, reseal) => {
      const sealed = reseal(hook.secretSealed);
      return sealed !== hook.secretSealed ? { secretSealed: sealed } : null;
    },
    box,
  );
  const phoneCalls = await resealCollection<PhoneCallDoc>(
    {
      docs: PhoneCall.find({ phoneCallWebhooks: { $ne: [] } })
        .lean<PhoneCallDoc>()
        .cursor(),
      reload: (doc) => PhoneCall.findById(doc._id).lean<PhoneCallDoc>(),
      writable: (call) => !callsSettleFirst || settledCall(call, now),
      writeIfUnchanged: async (doc, set) =>
        (await PhoneCall.updateOne({ _id: doc._id, updatedAt: doc.updatedAt }, { $set: set })).modifiedCount === 1,
    },
    (call, reseal) => {
      const hooks = call.phoneCallWebhooks.map((h) => ({
        url: h.url,
        subscribedEvent: h.subscribedEvent,
        secretSealed: reseal(h.secretSealed),
      }));
      const changed = hooks.some((h, i) => h.secretSealed !== call.phoneCallWebhooks[i]!.secretSealed);
      return changed ? { phoneCallWebhooks: hooks } : null;
    },
    box,
  );
  return { teams, webhooks, phoneCalls };
}
