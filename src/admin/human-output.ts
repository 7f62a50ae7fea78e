// How a command's answer reads without --json: one `key: value` line per field, an array's items one
// per indented line below its key, and an empty array as `[]` so that the next key does not read
// as one of its items.
export function formatHuman(result: object): string {
  return Object.entries(result)
    .map(([key, value]) => {
      if (Array.isArray(value)) {
        if (value.length === 0) return `${key}: []`;
        return `${key}:\n${value.map((v) => `  ${JSON.stringify(v)}`).join('\n')}`;
      }
      return `${key}: ${value !== null && typeof value === 'object' ? JSON.stringify(value) : String(value)}`;
    })
    .join('\n');
}
