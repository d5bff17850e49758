/**
 * The installation's encryption keys, in the state directory (/var/lib/objstore): the key file
 * (`objstore.key`, 32 random bytes, 0600) that wraps every encrypted volume's key, and the recovery
 * passphrase, generated here and kept sealed under the key file (`recovery-passphrase.json`, 0600;
 * formats in crypto-format.ts). What it decides:
 *
 * - The key file is made at start only when no encrypted volume exists (on an attached disk or in
 *   the records): a new key would orphan them. Then the store starts without one, says so (error
 *   log, GET /$/encryption), serves its plain volumes, and leaves the encrypted ones locked until
 *   the key file is restored or recovered with the passphrase (POST /$/encryption/recover).
 * - The passphrase is shown once (POST /$/encryption/recovery-passphrase/reveal), and rotated on
 *   request (…/rotate: a new one, every encrypted volume's passphrase slot rewrapped).
 *
 * The volume keys themselves never stay here: they are made, wrapped onto the disk, and dropped; the
 * volume actor unwraps its own with the key file.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import {
  decodeKeyFile,
  decodeSealedPassphrase,
  encodeSealedPassphrase,
  formatPassphrase,
  keyId,
  KEY_BYTES,
  makeKeySlots,
  openPassphrase,
  openWithKeyFile,
  openWithPassphrase,
  PASSPHRASE_BYTES,
  rewrapKeyFile,
  rewrapPassphrase,
  sealPassphrase,
  SealError,
  type KeySlots,
  type SealedPassphrase,
} from '../../protocols/objstore/crypto-format.js';
import { StoreError } from './store/context.js';

export const KEY_FILE = 'objstore.key';
export const RECOVERY_FILE = 'recovery-passphrase.json';

/** Write a small file durably and atomically (temp, fsync, rename), mode 0600. */
function writePrivate(path: string, data: string | Uint8Array): void {
  const temp = `${path}.tmp`;
  const fd = openSync(temp, 'w', 0o600);
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, path);
}

export interface KeysView {
  keyFile: { path: string; present: boolean; keyId: string | null; problem: string | null };
  recoveryPassphrase: { present: boolean; createdAt: string | null; revealedAt: string | null };
}

export class Keys {
  readonly keyFile: string;
  private readonly recoveryFile: string;
  private kek: Uint8Array | null = null;
  private sealed: SealedPassphrase | null = null;
  /** Why there is no usable key file (null when there is one). */
  problem: string | null = null;

  constructor(
    stateDir: string,
    private readonly instanceId: string,
    private readonly log: Logger,
  ) {
    this.keyFile = join(stateDir, KEY_FILE);
    this.recoveryFile = join(stateDir, RECOVERY_FILE);
  }

  /**
   * Load the key file, or make it (and a recovery passphrase) when it is absent and `encrypted`
   * (the ids of encrypted volumes, on disks found or in records) is empty. Never throws: a key file
   * that cannot be used is `problem`, logged as an error.
   */
  init(encrypted: number[]): void {
    if (!existsSync(this.keyFile)) {
      if (encrypted.length) {
        this.problem = `the key file ${this.keyFile} is missing and volume(s) ${encrypted.join(', ')} are encrypted: a new key file would orphan them, so none was made. Restore the key file from its backup, or recover with the passphrase: POST /$/encryption/recover {"passphrase": "..."}`;
        this.log.error({ keyFile: this.keyFile, encryptedVolumes: encrypted }, this.problem);
        return;
      }
      writePrivate(this.keyFile, randomBytes(KEY_BYTES));
      this.log.info({ keyFile: this.keyFile }, 'made the key file for volume encryption: back it up off this machine, apart from the recovery passphrase');
    }
    try {
      chmodSync(this.keyFile, 0o600);
      this.kek = decodeKeyFile(new Uint8Array(readFileSync(this.keyFile)));
    } catch (err) {
      this.problem = `the key file ${this.keyFile} cannot be used: ${(err as Error).message}`;
      this.log.error({ keyFile: this.keyFile }, this.problem);
      return;
    }
    this.loadPassphrase(encrypted);
  }

  private loadPassphrase(encrypted: number[]): void {
    const kek = this.kek!;
    if (existsSync(this.recoveryFile)) {
      try {
        this.sealed = decodeSealedPassphrase(readFileSync(this.recoveryFile, 'utf8'));
        openPassphrase(kek, this.sealed);
        return;
      } catch (err) {
        this.log.error({ file: this.recoveryFile, err: (err as Error).message }, 'the sealed recovery passphrase does not open with this key file: a new one is made; rotate it to rewrap the encrypted volumes');
      }
    } else if (encrypted.length) {
      this.log.warn({ file: this.recoveryFile }, 'the sealed recovery passphrase is missing: a new one is made; rotate it (POST /$/encryption/recovery-passphrase/rotate) so the encrypted volumes take it');
    }
    this.newPassphrase(null);
  }

  private newPassphrase(revealedAt: number | null): string {
    const passphrase = formatPassphrase(randomBytes(PASSPHRASE_BYTES));
    this.sealed = { ...sealPassphrase(this.kek!, this.instanceId, passphrase, randomBytes(16), randomBytes(12), Date.now()), revealedAt };
    writePrivate(this.recoveryFile, encodeSealedPassphrase(this.sealed));
    return passphrase;
  }

  /** The key file's key, or the refusal that says why there is none. */
  private requireKek(): Uint8Array {
    if (!this.kek) throw new StoreError(409, 'KEY_FILE_MISSING', this.problem ?? 'there is no key file');
    return this.kek;
  }

  get ready(): boolean {
    return this.kek !== null;
  }

  /** New key slots for a volume being encrypted: a fresh volume key wrapped by the key file and the passphrase. */
  newSlots(volumeId: number, keyGen: number): KeySlots {
    const kek = this.requireKek();
    const passphrase = openPassphrase(kek, this.sealed!);
    return makeKeySlots({ volumeId, instanceId: this.instanceId, keyGen, volumeKey: randomBytes(32), kek, passphrase, ivK: randomBytes(12), ivR: randomBytes(12), salt: randomBytes(16) });
  }

  /** Why these slots do not open with the key file (null: they do). */
  whyLocked(slots: KeySlots): string | null {
    if (!this.kek) return this.problem ?? 'there is no key file';
    try {
      openWithKeyFile(slots, this.kek);
      return null;
    } catch (err) {
      return (err as Error).message;
    }
  }

  /** The passphrase, once: later calls are refused until it is rotated. */
  reveal(): { passphrase: string; createdAt: string; revealedAt: string } {
    const kek = this.requireKek();
    const s = this.sealed!;
    if (s.revealedAt !== null) {
      throw new StoreError(409, 'ALREADY_REVEALED', `the recovery passphrase was revealed at ${new Date(s.revealedAt).toISOString()} and is shown once; to get a new one, rotate it: POST /$/encryption/recovery-passphrase/rotate`);
    }
    const passphrase = openPassphrase(kek, s);
    this.sealed = { ...s, revealedAt: Date.now() };
    writePrivate(this.recoveryFile, encodeSealedPassphrase(this.sealed));
    this.log.warn({ revealedAt: this.sealed.revealedAt }, 'the recovery passphrase was revealed (shown once)');
    return { passphrase, createdAt: new Date(s.createdAt).toISOString(), revealedAt: new Date(this.sealed.revealedAt!).toISOString() };
  }

  /**
   * Rotate the passphrase: a new one, with each given volume's passphrase slot rewrapped under it
   * (`slots`: every encrypted volume's, read from its disk; the caller refuses while one is not
   * present). Returns the slots to write back and `commit`, which seals the new passphrase (not yet
   * revealed). The caller commits first, then writes the disks: a disk whose write fails keeps the
   * old passphrase slot (GET /$/encryption shows which), and a second rotation fixes it.
   */
  rotate(slots: KeySlots[]): { slots: KeySlots[]; commit: () => void } {
    const kek = this.requireKek();
    const passphrase = formatPassphrase(randomBytes(PASSPHRASE_BYTES));
    const out = slots.map((s) => rewrapPassphrase(s, openWithKeyFile(s, kek), passphrase, randomBytes(12), randomBytes(16)));
    return {
      slots: out,
      commit: () => {
        this.sealed = sealPassphrase(kek, this.instanceId, passphrase, randomBytes(16), randomBytes(12), Date.now());
        writePrivate(this.recoveryFile, encodeSealedPassphrase(this.sealed));
        this.log.warn({ volumes: slots.map((s) => s.volumeId) }, 'the recovery passphrase was rotated: reveal the new one and keep it apart from the key file');
      },
    };
  }

  /**
   * Recovery when the key file is lost: the passphrase opens each given volume's key (all of them
   * first: one refusal and nothing is written), a new key file is made, and each volume's key-file
   * slot is rewrapped under it. Returns the slots to write back; `commit` writes the key file and
   * the passphrase, sealed under it (revealed already: the operator typed it).
   */
  recover(passphrase: string, slots: KeySlots[]): { slots: KeySlots[]; commit: () => void } {
    if (this.kek) throw new StoreError(409, 'KEY_FILE_PRESENT', `the key file ${this.keyFile} is present and opens the volumes it can; recovery replaces a lost key file only`);
    if (!slots.length) throw new StoreError(409, 'NO_ENCRYPTED_DISK', 'no encrypted disk is attached: recovery needs the disks the passphrase opens');
    const kek = new Uint8Array(randomBytes(KEY_BYTES));
    const out: KeySlots[] = [];
    for (const s of slots) {
      let volumeKey: Uint8Array;
      try {
        volumeKey = openWithPassphrase(s, passphrase);
      } catch (err) {
        if (err instanceof SealError) throw new StoreError(403, 'PASSPHRASE_REFUSED', `${err.message}: nothing was changed`);
        throw err;
      }
      out.push(rewrapKeyFile(s, volumeKey, kek, randomBytes(12)));
    }
    return {
      slots: out,
      commit: () => {
        writePrivate(this.keyFile, kek);
        this.kek = kek;
        this.problem = null;
        this.sealed = { ...sealPassphrase(kek, this.instanceId, passphrase, randomBytes(16), randomBytes(12), Date.now()), revealedAt: Date.now() };
        writePrivate(this.recoveryFile, encodeSealedPassphrase(this.sealed));
        this.log.warn({ keyFile: this.keyFile, keyId: keyId(kek), volumes: slots.map((s) => s.volumeId) }, 'recovered with the passphrase: a new key file was made and the volumes rewrapped under it; back it up');
      },
    };
  }

  view(): KeysView {
    const iso = (ms: number | null | undefined) => (typeof ms === 'number' ? new Date(ms).toISOString() : null);
    return {
      keyFile: { path: this.keyFile, present: this.kek !== null, keyId: this.kek ? keyId(this.kek) : null, problem: this.problem },
      recoveryPassphrase: { present: this.sealed !== null, createdAt: iso(this.sealed?.createdAt), revealedAt: iso(this.sealed?.revealedAt) },
    };
  }
}
