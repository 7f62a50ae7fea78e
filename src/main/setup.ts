// `npm run setup`: builds the Temporal CLI and FerretDB and fetches the time-skipping test server into
// the cache on their own (npm start and the tests do it too when missing).
import { ensureBinaries } from '../local/binaries';
import { ensureTimeSkippingServer } from '../local/time-skipping-server';

ensureBinaries({ temporal: true, ferretdb: true })
  .then(async (bins) => ({ ...bins, timeSkippingServer: await ensureTimeSkippingServer() }))
  .then((bins) => {
    process.stdout.write(`${JSON.stringify(bins, null, 2)}\n`);
  })
  .catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
