"""Verifies Keygate access tokens in a Python API, with PyJWT and Keygate's JWKS."""
import jwt

# Your Keygate's Jwt__SigningAlgorithm, Jwt__Issuer and Jwt__Audience.
ALGORITHM = "ES256"
ISSUER = "keygate"
AUDIENCE = "keygate-clients"


class KeygateVerifier:
    """Fetches the JWKS when first needed, keeps it 5 minutes, and fetches it again for a new kid."""

    def __init__(self, jwks_url, algorithm=ALGORITHM, issuer=ISSUER, audience=AUDIENCE):
        self._keys = jwt.PyJWKClient(jwks_url, lifespan=300)
        self._algorithm = algorithm
        self._issuer = issuer
        self._audience = audience

    def verify(self, token):
        """The token's claims; None for any token that fails, whatever the reason."""
        try:
            key = self._keys.get_signing_key_from_jwt(token)
        except jwt.PyJWTError:
            return None
        return _claims(token, key.key, self._algorithm, self._issuer, self._audience)


class PinnedKeygateVerifier:
    """Offline: the same with a copy of the JWKS pinned in your configuration (a dict)."""

    def __init__(self, jwks, algorithm=ALGORITHM, issuer=ISSUER, audience=AUDIENCE):
        self._keys = {key.key_id: key.key for key in jwt.PyJWKSet.from_dict(jwks).keys}
        self._algorithm = algorithm
        self._issuer = issuer
        self._audience = audience

    def verify(self, token):
        """The token's claims; None for any token that fails, whatever the reason."""
        try:
            key = self._keys.get(jwt.get_unverified_header(token).get("kid"))
        except jwt.PyJWTError:
            return None
        if key is None:
            return None
        return _claims(token, key, self._algorithm, self._issuer, self._audience)


def _claims(token, key, algorithm, issuer, audience):
    # Only the one algorithm Keygate signs with: the token cannot choose another.
    try:
        return jwt.decode(
            token,
            key,
            algorithms=[algorithm],
            issuer=issuer,
            audience=audience,
            options={"require": ["sub", "exp", "iat"]},
        )
    except jwt.PyJWTError:
        return None
