export class RecoveryCodesResponseDto {
  /**
   * Ten single-use codes, each good for one login (or one second-factor check) in place of a
   * TOTP. Shown only in this answer; the service keeps digests. Any earlier codes no longer work.
   * @example ["7k2mq-x9d4r", "p3vhn-0wct8"]
   */
  readonly recoveryCodes: string[];
}
