/**
 * The HMAC key of the local job tokens (protocols/deploy/job-tokens.ts): the setting
 * DEPLOYER_JOB_TOKEN_KEY (base64 or base64url of at least 32 bytes) when given, else a key of 32
 * random bytes generated once and kept in `<stateDir>/deployer-job-token.key` (mode 0600), so
 * that tokens minted before a restart stay valid after it.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MIN_KEY_BYTES } from '../../protocols/deploy/job-tokens.js';

export const JOB_KEY_FILE = 'deployer-job-token.key';

/** The bytes of a key given as base64 or base64url text, or null when it is not one of at least 32 bytes. */
export function decodeJobKey(text: string): Buffer | null {
  const t = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) return null;
  const key = Buffer.from(t.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''), 'base64url');
  return key.byteLength >= MIN_KEY_BYTES ? key : null;
}

export function loadJobKey(stateDir: string, given: string): Buffer {
  if (given !== '') {
    const key = decodeJobKey(given);
    if (key === null) throw new Error(`DEPLOYER_JOB_TOKEN_KEY must be base64 of at least ${MIN_KEY_BYTES} bytes`);
    return key;
  }
  const path = join(stateDir, JOB_KEY_FILE);
  try {
    const key = decodeJobKey(readFileSync(path, 'utf8'));
    if (key === null) throw new Error(`${path} does not hold a key of at least ${MIN_KEY_BYTES} bytes (base64url); remove it to generate a new one (tokens already issued stop working)`);
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(stateDir, { recursive: true });
  const key = randomBytes(32);
  // 'wx': two starts racing cannot both write; the loser reads the winner's key
  try {
    writeFileSync(path, `${key.toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return loadJobKey(stateDir, '');
  }
}
