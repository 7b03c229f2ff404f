/** Texts of the admin-keys CLI commands, which operators read (in English, as the CLI's). */
export const AdminKeysMessages = {
  keyNameTaken: (name: string) =>
    `An admin key named ${name} exists already (names are never reused).`,
  keyNotFound: (name: string) => `No unrevoked admin key is named ${name}.`,
} as const;
