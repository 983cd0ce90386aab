import { hash } from 'node:crypto';
import { VERSION_VALUE } from '../contract.js';

/**
 * Entity tags (RFC 9110 §8.8.3) in the two forms docs/internals/contract.md §15 gives, and the two comparisons of
 * §13.1: If-None-Match compares weakly (`W/"x"` holds `"x"`), If-Match strongly (a weak tag never holds).
 */

/** A digest tag: the first 160 bits of a SHA-256 of `text`, in base64url (27 characters), quoted. */
export function digestTag(text: string): string {
  return `"${hash('sha256', text, 'base64url').slice(0, 27)}"`;
}

/** A version tag: the version's canonical digits, quoted (`"7"`). */
export function versionTag(version: string | number | bigint): string {
  return `"${String(version)}"`;
}

/** The opaque text of each entity tag of a list (`"a", W/"b"`), weak or not; `*` as itself. Malformed members are left out. */
function members(header: string): { tag: string; weak: boolean }[] {
  const found: { tag: string; weak: boolean }[] = [];
  for (const part of header.split(',')) {
    const member = part.trim();
    if (member === '*') found.push({ tag: '*', weak: false });
    else if (/^(W\/)?"[\x21\x23-\x7e\x80-\xff]*"$/.test(member)) {
      const weak = member.startsWith('W/');
      found.push({ tag: weak ? member.slice(2) : member, weak });
    }
  }
  return found;
}

/** Whether an If-None-Match header holds `tag` (weak comparison): the answer is then 304. */
export function noneMatchHolds(header: string | undefined, tag: string): boolean {
  if (header === undefined || header === '') return false;
  // What a client sends back most: the one tag it was given.
  if (header === tag) return true;
  return members(header).some((member) => member.tag === '*' || member.tag === tag);
}

/**
 * What an If-Match header names, for a versioned write: `absent`, `any` (`*`), the one version it names, or `other`
 * (a weak tag, a digest, several tags, anything malformed), which can never match a version.
 */
export type IfMatch = { kind: 'absent' } | { kind: 'any' } | { kind: 'version'; version: string } | { kind: 'other' };

export function readIfMatch(header: string | undefined): IfMatch {
  if (header === undefined || header.trim() === '') return { kind: 'absent' };
  const found = members(header);
  if (found.length !== 1 || header.split(',').length !== 1) return { kind: 'other' };
  const [only] = found as [{ tag: string; weak: boolean }];
  if (only.tag === '*') return { kind: 'any' };
  if (only.weak) return { kind: 'other' };
  const value = only.tag.slice(1, -1);
  return VERSION_VALUE.test(value) && BigInt(value) <= 18446744073709551615n ? { kind: 'version', version: value } : { kind: 'other' };
}
