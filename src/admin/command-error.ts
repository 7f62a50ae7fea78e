// The error of a refused input (exit code 2), in a module of its own: the runner and the commands
// that only talk to the API need it without loading commands.ts, which loads mongoose and the models.
export class CommandError extends Error {
  override readonly name = 'CommandError';
}
