// The ways a run ends other than with a verdict, and how their messages read: apart since every part of the run
// throws or reports them.

/** A run that cannot begin: a wrong command line, a project or a server that is not what it must be. Nothing was sent, no user made. */
export class VerifyUsage extends Error {}

/** A run that began and cannot go on (the login limits refused a sign-in): what it proved so far proves nothing. */
export class CouldNotFinish extends Error {}

/** The temporary users could not be removed (the database went away): said, with who they are, never as removed. */
export class RemovalFailed extends Error {}

/** An error's message, with its cause's (fetch says "fetch failed", and why in its cause). */
export function messageOfError(error: unknown): string {
  const cause = (error as { cause?: { message?: string } }).cause?.message;
  return `${(error as Error).message}${cause ? ` (${cause})` : ''}`;
}
