// `secrets reseal`: seals every stored secret again under the current ENCRYPTION_KEY, so that the
// previous key can be dropped (README, "Rotating ENCRYPTION_KEY"). Each document is rewritten by one
// conditional update on its updatedAt, so a concurrent change is never overwritten (it is read
// again); running it twice changes nothing the second time.
import { SecretBoxError, type SecretBox } from '../crypto/secret-box';
import { PhoneCall, type PhoneCallDoc } from '../data/models/phone-call';
import { Team, type TeamDoc } from '../data/models/team';
import { Webhook, type WebhookDoc } from '../data/models/webhook';

export interface ResealCounts {
  /** Documents holding at least one sealed value. */
  examined: number;
  /** Documents rewritten: some value was sealed under a previous key. */
  resealed: number;
  /** Documents with a value that opens under none of the keys (left as they are). */
  unreadable: number;
}

const ATTEMPTS = 3;

interface Collection<T> {
  /** Documents that may hold sealed values. */
  docs: AsyncIterable<T>;
  reload(doc: T): Promise<T | null>;
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
  const counts: ResealCounts = { examined: 0, resealed: 0, unreadable: 0 };
  const reseal = (sealed: string) => (box.sealedWithCurrentKey(sealed) ? sealed : box.seal(box.open(sealed)));
  for await (const first of collection.docs) {
    counts.examined += 1;
    let doc: T | null = first;
    for (let attempt = 1; doc && attempt <= ATTEMPTS; attempt++) {
      let set: Record<string, unknown> | null;
      try {
        set = rewrite(doc, reseal);
      } catch (err) {
        if (!(err instanceof SecretBoxError)) throw err;
        counts.unreadable += 1;
        break;
      }
      if (!set) break;
      if (await collection.writeIfUnchanged(doc, set)) {
        counts.resealed += 1;
        break;
      }
      doc = await collection.reload(doc); // changed meanwhile: read it again
    }
  }
  return counts;
}

export async function resealSecrets(box: SecretBox) {
  // Optimistic concurrency on updatedAt, which every update of these models moves.
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
