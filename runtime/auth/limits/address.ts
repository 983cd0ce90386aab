import { isIPv6 } from 'node:net';

/**
 * The client a login limit or a remembered login belongs to, from its
 * address: an IPv4 address as it is; an IPv6 address by its /64, which one
 * subscriber is routinely given whole (RFC 6177), so that its 2^64
 * addresses count as one client; an IPv4-mapped IPv6 address
 * (`::ffff:192.0.2.1`, how a dual-stack socket shows an IPv4 client) as the
 * IPv4 address. Anything else (a proxy's header may hold any text) is its
 * own group.
 */
export function addressGroup(address: string): string {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  // A zone (`fe80::1%eth0`) names the server's interface, not the client.
  const zone = bare.indexOf('%');
  const ip = zone === -1 ? bare : bare.slice(0, zone);
  if (!isIPv6(ip)) return address;
  const words = ipv6Words(ip);
  if (words.slice(0, 5).every((word) => word === 0) && words[5] === 0xffff) {
    return [words[6]! >> 8, words[6]! & 0xff, words[7]! >> 8, words[7]! & 0xff].join('.');
  }
  return `${words
    .slice(0, 4)
    .map((word) => word.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit words of a valid IPv6 address (`::` expanded, a dotted IPv4 tail as two words). */
function ipv6Words(ip: string): number[] {
  let text = ip.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const words = (part: string) => (part === '' ? [] : part.split(':').map((word) => Number.parseInt(word, 16)));
  const left = words(head);
  const right = tail === undefined ? [] : words(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}
