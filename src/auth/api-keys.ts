// API keys: `oco_<keyId>_<secret>`. Only SHA-256 of the secret is stored; lookups go by keyId and
// the hashes are compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Types } from 'mongoose';
import { OBJECT_ID_HEX } from '../contracts/ids';
import { SCOPES, type Scope } from '../contracts/scopes';
import { ApiKey } from '../data/models/api-key';
import type { TeamDoc } from '../data/models/team';
import { readTeam } from '../data/team-reads';
import { rememberedValues } from '../data/remembered-values';
import { readTogether } from '../concurrency/send-together';

const KEY_PATTERN = new RegExp(`^oco_(${OBJECT_ID_HEX})_([A-Za-z0-9_-]{43})$`);
// Compared against when the key id is unknown, so that a miss costs the same as a hit.
const DUMMY_HASH = Buffer.alloc(32);

export interface IssuedKey {
  keyId: string;
  key: string;
}

export interface AuthenticatedKey {
  keyId: string;
  teamId: string;
  scopes: ReadonlySet<Scope>;
  /** The team as it stood when the key was checked: a create reads its settings from here. */
  team: TeamDoc;
}

function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

export async function issueApiKey(input: {
  teamId: string;
  scopes?: readonly Scope[];
  expiresAt?: Date | null;
  name?: string;
}): Promise<IssuedKey> {
  const keyId = new Types.ObjectId();
  const secret = randomBytes(32).toString('base64url');
  await ApiKey.create({
    _id: keyId,
    teamId: input.teamId,
    name: input.name ?? '',
    secretHash: hashSecret(secret).toString('hex'),
    scopes: [...(input.scopes ?? SCOPES)],
    expiresAt: input.expiresAt ?? null,
  });
  return { keyId: keyId.toHexString(), key: `oco_${keyId.toHexString()}_${secret}` };
}

export async function revokeApiKey(keyId: string): Promise<boolean> {
  if (!Types.ObjectId.isValid(keyId)) return false;
  const result = await ApiKey.updateOne({ _id: keyId }, { $set: { revokedAt: new Date() } });
  return result.matchedCount === 1;
}

/**
 * What never changes of a key once issued (its team, scopes, expiry and secret's hash), as this process
 * last found the key valid. A key never moves to another team, so its next check reads the key and the
 * team at once rather than one after the other (a round trip fewer per request); and a read-only request
 * may run while its key is checked again (lastValidKey). For 10,000 keys; past that it starts again
 * (each key's next check reads in turn, and its next read waits for it).
 */
interface KnownKey {
  teamId: string;
  scopes: readonly Scope[];
  secretHash: Buffer;
  expiresAt: number | null;
}
const knownKeys = rememberedValues<KnownKey>({ maxEntries: 10_000 });

/**
 * Reads of a key (and of its team: readTeam), each shared by the requests that ask for the same one
 * while the read before it is under way (a client's burst through one key): a read each begins after
 * its requests arrived, so a revocation made before a request is seen by it. Shared answers, never changed.
 */
const readKey = readTogether((keyId) => ApiKey.findById(keyId).lean().exec());

/** The key's team and scopes, or null for a missing, malformed, unknown, revoked or expired key, or one whose team is gone. */
export async function authenticateApiKey(
  presented: string | undefined,
  now = new Date(),
): Promise<AuthenticatedKey | null> {
  const match = presented ? KEY_PATTERN.exec(presented) : null;
  const keyId = match?.[1];
  const knownTeam = keyId ? knownKeys.get(keyId)?.teamId : undefined;
  const [record, teamAlongside] = keyId
    ? await Promise.all([readKey(keyId), knownTeam ? readTeam(knownTeam) : Promise.resolve(null)])
    : [null, null];
  const expected = record ? Buffer.from(record.secretHash, 'hex') : DUMMY_HASH;
  if (!sameHash(expected, match?.[2] ?? '')) return null;
  if (!record || record.revokedAt) return null;
  if (record.expiresAt && record.expiresAt.getTime() <= now.getTime()) return null;
  const teamId = record.teamId.toHexString();
  // A key outlives nothing: once its team is gone (removed from the database), it is unknown.
  const team = knownTeam === teamId ? teamAlongside : await readTeam(teamId);
  if (!team) return null;
  const scopes = record.scopes as Scope[];
  knownKeys.set(record._id.toHexString(), {
    teamId,
    scopes,
    secretHash: expected,
    expiresAt: record.expiresAt?.getTime() ?? null,
  });
  return { keyId: record._id.toHexString(), teamId, scopes: new Set(scopes), team };
}

/** A key as this process last found it valid, without its team's record (which may have changed since). */
export type ValidBeforeKey = Omit<AuthenticatedKey, 'team'>;

/**
 * The key as this process last found it valid, when the presented secret is its own and the key has not
 * expired since; else null. No read: a revocation, or the team's removal, is seen only by
 * authenticateApiKey, so this is never enough to answer a request (src/api/auth.ts).
 */
export function lastValidKey(presented: string, now = new Date()): ValidBeforeKey | null {
  const match = KEY_PATTERN.exec(presented);
  const known = match ? knownKeys.get(match[1]!) : undefined;
  if (!match || !known || !sameHash(known.secretHash, match[2]!)) return null;
  if (known.expiresAt !== null && known.expiresAt <= now.getTime()) return null;
  return { keyId: match[1]!, teamId: known.teamId, scopes: new Set(known.scopes) };
}

/** Whether `secret` hashes to `expected`, in constant time. */
function sameHash(expected: Buffer, secret: string): boolean {
  const actual = hashSecret(secret);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
