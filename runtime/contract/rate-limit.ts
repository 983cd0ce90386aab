/** `rate_limit="<n>/<s|m|h>"`: at most `limit` calls per caller in each window of `seconds`. */
export interface RateLimit {
  limit: number;
  seconds: number;
}

const RATE_UNITS = { s: 1, m: 60, h: 3600 } as const;

/** A rate as `rate_limit` and `xmlrest key create --rate` write it (`100/m`), or undefined when it is not one. */
export function parseRateLimit(text: string): RateLimit | undefined {
  const match = /^([1-9][0-9]{0,8})\/([smh])$/.exec(text);
  return match ? { limit: Number(match[1]), seconds: RATE_UNITS[match[2] as keyof typeof RATE_UNITS] } : undefined;
}

/** The text of a rate, as written: `100/m`. */
export function rateText(rate: RateLimit): string {
  const unit = Object.entries(RATE_UNITS).find(([, seconds]) => seconds === rate.seconds)?.[0] ?? 's';
  return `${rate.limit}/${unit}`;
}
