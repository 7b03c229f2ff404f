export class TotpEnrolmentResponseDto {
  /**
   * The shared secret, base32, for typing into an authenticator app by hand. Shown only in this
   * answer, never again. @example "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
   */
  readonly secret: string;

  /**
   * The same secret as a Key URI, which authenticator apps read from the QR code.
   * @example "otpauth://totp/Keygate:alice%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Keygate&algorithm=SHA1&digits=6&period=30"
   */
  readonly otpauthUri: string;

  /** `otpauthUri` as a QR code: a PNG data URL, ready for an `<img src>`. @example "data:image/png;base64,iVBORw0KGgo..." */
  readonly qrCode: string;
}
