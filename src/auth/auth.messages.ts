export const AuthMessages = {
  invalidCredentials: 'Credenciales inválidas.',
  lockedOut: (minutes: number) =>
    `Cuenta bloqueada temporalmente. Intenta en ${minutes} minuto(s).`,
} as const;
