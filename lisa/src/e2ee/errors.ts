import { LisaError, type LisaErrorOptions } from "../errors.ts";

/** Stable codes of the encrypted-room machinery. */
export const E2EE_ERROR_CODES = {
  /** The crypto store file opened, but the passphrase does not decrypt it. */
  passphraseWrong: "crypto_store_passphrase_wrong",
  /** The crypto store file is not one Lisa wrote, or a record fails its integrity check. */
  unreadable: "crypto_store_unreadable",
  /** SQLite refused to open or write the crypto store file (permissions, disk). */
  io: "crypto_store_io",
  /** The crypto store holds the account of another user or device id than the configuration's. */
  accountMismatch: "crypto_store_account_mismatch",
} as const;

/** A failure of the crypto store or the device lifecycle. */
export class E2eeError extends LisaError {
  constructor(code: string, message: string, options: LisaErrorOptions = {}) {
    super(code, message, options);
  }
}
