#!/usr/bin/env node
// `oco`: the operator command line (src/main/admin.ts), run from its TypeScript through tsx, the
// same way as `npm run admin`. `npm link` (or installing the package) puts it on the PATH.
require('tsx/cjs');
require('../src/main/admin.ts');
