/**
 * When a grant ends (docs/internals/contract.md §8, runtime/auth/users/grants.ts), as an
 * operator writes it on either door: `xmlrest role grant USER ROLE --until
 * 2026-12-01T18:00Z | --for 8h`, and the console's grant with `{"until"}` or
 * `{"for"}`. One reading for both, so that the two doors take the same words.
 */

/** The longest a temporary grant may be given for: past it, a grant is meant for good (say so by giving no end). */
const MOST_SECONDS = 10 * 366 * 86_400;
const UNITS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/** `8h`, `90m`, `7d`, `30s` as seconds, or undefined when it is not such a duration. */
export function parseDuration(text: string): number | undefined {
  const match = /^([1-9][0-9]{0,6})([smhd])$/.exec(text.trim());
  return match ? Number(match[1]) * UNITS[match[2] as keyof typeof UNITS] : undefined;
}

/** An ISO time with its zone (`2026-12-01T18:00Z`, `2026-12-01T18:00:00+01:00`) or a date (midnight UTC), as Unix seconds. */
export function parseIsoTime(text: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(text.trim())) return undefined;
  const time = new Date(text.trim()).getTime();
  return Number.isNaN(time) ? undefined : Math.floor(time / 1000);
}

/**
 * A grant's end from `until` (an ISO time) or `for` (a duration from now), at most one of them: Unix seconds,
 * null for a grant without end, or why not.
 */
export function grantEnd(until: unknown, duration: unknown, now = Date.now()): { ok: true; until: number | null } | { ok: false; message: string } {
  if (until !== undefined && until !== null && duration !== undefined && duration !== null) {
    return { ok: false, message: 'a grant ends at one time: give until or for, not both' };
  }
  const nowSeconds = Math.floor(now / 1000);
  let end: number | undefined;
  if (until !== undefined && until !== null) {
    end = typeof until === 'string' ? parseIsoTime(until) : undefined;
    if (end === undefined) return { ok: false, message: `until is an ISO time with its zone, such as 2026-12-01T18:00Z, not ${JSON.stringify(until)}` };
    if (end <= nowSeconds) return { ok: false, message: `until is in the past: ${until}` };
  } else if (duration !== undefined && duration !== null) {
    const seconds = typeof duration === 'string' ? parseDuration(duration) : undefined;
    if (seconds === undefined) return { ok: false, message: `for is a duration such as 8h, 90m, 7d or 30s, not ${JSON.stringify(duration)}` };
    end = nowSeconds + seconds;
  } else return { ok: true, until: null };
  if (end - nowSeconds > MOST_SECONDS) return { ok: false, message: 'a grant that ends more than ten years from now is a grant for good: give no end' };
  return { ok: true, until: end };
}

/** What a history line says of a grant: the role, and its end when it has one. */
export function grantDetail(role: string, until: number | null): string {
  return until === null ? role : `${role} until ${new Date(until * 1000).toISOString().replace('.000Z', 'Z')}`;
}
