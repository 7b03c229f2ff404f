export const UsersMessages = {
  notFound: 'Usuario no encontrado.',
  emailTaken: 'Ya existe una cuenta con ese email.',
  deactivated: 'Cuenta desactivada.',
  emailNotVerified: 'Email no verificado.',
} as const;
