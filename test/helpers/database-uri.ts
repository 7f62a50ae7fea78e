// Test files share one MongoDB server and keep to databases of their own.

/** `uri` with its database (the path) replaced by `database`, its options kept. */
export function withDatabase(uri: string, database: string): string {
  return uri.replace(/\/[^/?]*(\?|$)/, `/${database}$1`);
}
