// `npm run setup`: builds the Temporal CLI and FerretDB and fetches the time-skipping test server into
// the cache on their own (npm start and the tests do it too when missing). `npm run setup --
// --temporal-server` also builds the real Temporal server and its SQL tool, which only
// `npm run bench -- --temporal-postgres` uses (about 2 minutes more, so not by default).
import { ensureBinaries, ensureTemporalServerBinaries } from '../local/binaries';
import { ensureTimeSkippingServer } from '../local/time-skipping-server';

const withTemporalServer = process.argv.slice(2).includes('--temporal-server');

ensureBinaries({ temporal: true, ferretdb: true })
  .then(async (bins) => ({ ...bins, timeSkippingServer: await ensureTimeSkippingServer() }))
  .then(async (bins) => (withTemporalServer ? { ...bins, temporalServer: await ensureTemporalServerBinaries() } : bins))
  .then((bins) => {
    process.stdout.write(`${JSON.stringify(bins, null, 2)}\n`);
  })
  .catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
