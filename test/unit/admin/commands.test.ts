// What the setup commands refuse before touching the database.
import { describe, expect, it } from 'vitest';
import { CommandError, parseExpiresIn } from '../../../src/admin/commands';
import { mongoServers } from '../../../src/admin/servers';

describe('parseExpiresIn', () => {
  it('reads 90d, 12h, 30m and 30s', () => {
    expect(parseExpiresIn('90d')).toBe(90 * 86_400_000);
    expect(parseExpiresIn('12h')).toBe(12 * 3_600_000);
    expect(parseExpiresIn('30s')).toBe(30_000);
    expect(parseExpiresIn('3650d')).toBe(3650 * 86_400_000);
  });

  it.each(['999999999999d', '3651d', `${'9'.repeat(400)}s`, '0s', '0d'])(
    'refuses %s as input: beyond ten years, no valid date, or expired at once',
    (value) => {
      expect(() => parseExpiresIn(value)).toThrow(CommandError);
      expect(() => parseExpiresIn(value)).toThrow(/^--expires-in must be from 1s to 3650d \(ten years\)/);
    },
  );
});

describe('mongoServers', () => {
  it('names the servers of a URI, never its credentials', () => {
    expect(mongoServers('mongodb://127.0.0.1:27017/oco')).toBe('127.0.0.1:27017');
    expect(mongoServers('mongodb://ops:s3cr%40t@db1:27017,db2:27018/oco?authSource=admin')).toBe('db1:27017,db2:27018');
    expect(mongoServers('mongodb+srv://ops:pw@cluster0.example.net/oco')).toBe('cluster0.example.net');
    // Unescaped, as the driver would refuse it: still only what follows the last @.
    expect(mongoServers('mongodb://ops:p@ss/w?rd@db1:27017/oco')).toBe('db1:27017');
    expect(mongoServers('mongodb://ops:p/w?rd')).toBe("the MONGODB_URI's server");
    expect(mongoServers('not a uri')).toBe("the MONGODB_URI's server");
  });

  it("prefers the driver's own list of servers where its error has one", () => {
    const err = Object.assign(new Error('connect ECONNREFUSED'), {
      reason: { servers: new Map([['db1:27017', {}]]) },
    });
    expect(mongoServers('mongodb://ops:pw@db1/oco', err)).toBe('db1:27017');
  });
});
