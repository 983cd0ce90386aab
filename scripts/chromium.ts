import { CHROMIUM, ensurePackages } from './system-packages.js';

/** Debian's Chromium for browser tests, installed with apt-get when missing (never a browser download). */
export function ensureChromium(log: (line: string) => void = () => {}): string {
  ensurePackages([CHROMIUM], log);
  return CHROMIUM.binaries[0]!;
}

/** The flags this machine needs: no sandbox as root, and no background calls to hosts it cannot reach. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
