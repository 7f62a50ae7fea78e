// `npm run setup`: builds the Temporal CLI and FerretDB into the cache on their own (npm start and the
// tests build them too when missing).
import { ensureBinaries } from '../local/binaries';

ensureBinaries({ temporal: true, ferretdb: true })
  .then((bins) => {
    process.stdout.write(`${JSON.stringify(bins, null, 2)}\n`);
  })
  .catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
