// A team's record, read by id and shared by the callers that ask for the same team while its read is
// under way (readTogether): the API's key checks and creates, the worker's dials. Callers only read
// the answer.
import { readTogether } from '../concurrency/send-together';
import { Team, type TeamDoc } from './models/team';

export const readTeam: (teamId: string) => Promise<TeamDoc | null> = readTogether((teamId) =>
  Team.findById(teamId).lean<TeamDoc>().exec(),
);
