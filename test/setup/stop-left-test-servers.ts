// Started detached by the global setup when Vitest exits without its teardown (leftover-test-servers.ts):
// `<node> --import tsx test/setup/stop-left-test-servers.ts <the run's folder>`.
import { stopLeftTestServers } from './leftover-test-servers';

const dir = process.argv[2];
if (dir) void stopLeftTestServers(dir, 30_000);
