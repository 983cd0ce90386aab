/**
 * Characters that must not reach generated code, or a terminal, as they are:
 * controls (a carriage return ends a string literal, and a template literal
 * turns it into a line feed), the line and paragraph separators, format
 * characters (the bidirectional overrides of "trojan source", zero-width
 * ones), lone surrogates, private-use characters and every space but the
 * plain one. Printable letters of any script stay as they are, so that
 * `'Café'` in a statement still reads as written.
 */
const UNPRINTABLE = /(?! )[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Zl}\p{Zp}\p{Zs}]/gu;

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * `text` with each unprintable character (but those in `keep`) written as a
 * JavaScript escape (`\r`, `\u2028`, `\u{F0000}`): valid in a string or
 * template literal, where it means the character itself, and readable in a
 * comment or an error message. Escape backslashes first where they matter.
 */
export function escapeUnprintable(text: string, keep = ''): string {
  return text.replace(UNPRINTABLE, (character) => {
    if (keep.includes(character)) return character;
    const short = SHORT[character];
    if (short !== undefined) return short;
    const code = character.codePointAt(0)!;
    return code > 0xffff ? `\\u{${code.toString(16).toUpperCase()}}` : `\\u${code.toString(16).toUpperCase().padStart(4, '0')}`;
  });
}
