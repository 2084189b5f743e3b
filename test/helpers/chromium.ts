/**
 * Debian's Chromium, headless, driven by playwright-core (no browser download: the system one),
 * started as the environment needs it here: as root (no sandbox), no GPU, no background
 * networking or component updates (its connections out are refused on this closed network).
 */
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export function launchChromium(executablePath: string): Promise<Browser> {
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS, headless: true });
}
