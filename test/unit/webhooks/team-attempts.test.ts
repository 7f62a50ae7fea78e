import { describe, expect, it } from 'vitest';
import { createTeamAttempts } from '../../../src/webhooks/team-attempts';

describe('createTeamAttempts', () => {
  it("refuses a team's attempt past its cap, counts other teams apart, and frees the room an attempt ends", () => {
    const attempts = createTeamAttempts(2);
    const a1 = attempts.tryStart('a');
    const a2 = attempts.tryStart('a');
    expect(a1).not.toBeNull();
    expect(a2).not.toBeNull();
    expect(attempts.tryStart('a')).toBeNull();
    expect(attempts.tryStart('b')).not.toBeNull();
    a1!();
    a1!(); // ending twice frees one place only
    const a3 = attempts.tryStart('a');
    expect(a3).not.toBeNull();
    expect(attempts.tryStart('a')).toBeNull();
  });

  it('counts attempts made whatever the cap (streams from before it), and has no cap at 0', () => {
    const attempts = createTeamAttempts(1);
    const old = attempts.start('a');
    attempts.start('a');
    expect(attempts.tryStart('a')).toBeNull();
    old();
    expect(attempts.tryStart('a')).toBeNull();
    const uncapped = createTeamAttempts(0);
    for (let i = 0; i < 100; i += 1) expect(uncapped.tryStart('a')).not.toBeNull();
  });
});
