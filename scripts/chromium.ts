import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Debian's Chromium for browser tests, installed with apt-get when missing (never a browser download). */
export const CHROMIUM = '/usr/bin/chromium';

export function ensureChromium(log: (line: string) => void = () => {}): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0) throw new Error('Chromium is not installed: run `sudo apt-get install -y chromium`');
  log('installing chromium with apt-get (once per machine)...');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  execFileSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  return CHROMIUM;
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
