# Loaded by scripts/schemathesis.ts (SCHEMATHESIS_HOOKS). The API answers a reused Idempotency-Key
# with another body with 400, as decisions.md requires; the generator reuses short values such as
# "0" across unrelated requests, which the document cannot forbid. So every valid key it generates
# is made unique per request; invalid ones (empty, too long) are left as they are, to be refused.
import uuid

import schemathesis


@schemathesis.hook
def map_headers(ctx, headers):
    if headers is None:
        return headers
    for name in list(headers):
        if name.lower() != "idempotency-key":
            continue
        value = headers[name]
        if isinstance(value, str) and 1 <= len(value) <= 200:
            headers[name] = f"{value}-{uuid.uuid4()}"
    return headers
