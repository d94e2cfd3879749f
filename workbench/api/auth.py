"""Who is calling: the global key (``X-Auth-Email`` + ``X-Auth-Key``) or a Bearer token.

Formats are checked before values, as the platform does: a malformed header is
a 400 with an ``error_chain``, a well-formed but wrong one a 403.

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=0)
    >>> who = authenticate(wb, {"x-auth-email": wb.account.email, "x-auth-key": wb.account.api_key})
    >>> who.kind, who.may_use("any-zone")
    ('key', True)
"""

from __future__ import annotations

import re
import secrets
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .errors import AccessDenied, InvalidHeaders, MissingCredentials, UnknownKey

if TYPE_CHECKING:
    from ..core.platform import ApiToken, Workbench

EMAIL = re.compile(r"^[^@\s]{1,64}@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,63}$")
API_KEY = re.compile(r"^[A-Za-z0-9]{37}$")
TOKEN = re.compile(r"^[A-Za-z0-9_-]{40}$")
_KEY_ALPHABET = string.ascii_letters + string.digits


@dataclass(frozen=True)
class Caller:
    """An authenticated caller: the global key, or one token with its zone scope."""

    kind: str
    token: ApiToken | None = None

    def may_use(self, zone_id: str) -> bool:
        """True when the caller may act on ``zone_id``."""
        return self.token is None or self.token.allows(zone_id)

    @property
    def all_zones(self) -> bool:
        """True when the caller is not limited to some zones."""
        return self.token is None or self.token.zone_ids is None


def authentication_error() -> AccessDenied:
    """The 403 ``10000`` error of a bad token or a token without access to a zone."""
    return AccessDenied()


def authenticate(wb: Workbench, headers: Mapping[str, str]) -> Caller:
    """Check the credentials in ``headers`` (lower-case names) against ``wb.account``."""
    email, key = headers.get("x-auth-email"), headers.get("x-auth-key")
    authorization = headers.get("authorization")
    if email is not None and key is not None:
        if not EMAIL.match(email):
            raise InvalidHeaders("X-Auth-Email")
        if not API_KEY.match(key):
            raise InvalidHeaders("X-Auth-Key")
        account = wb.account
        if email.lower() != account.email.lower() or key != account.api_key:
            raise UnknownKey()
        return Caller("key")
    if authorization is None:
        raise MissingCredentials()
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() != "bearer" or not TOKEN.match(value.strip()):
        raise InvalidHeaders("Authorization")
    for token in wb.account.tokens:
        if token.value == value.strip():
            return Caller("token", token)
    raise authentication_error()


def check_credentials(email: str | None, key: str | None, token: str | None) -> list[str]:
    """Problems with credentials given on a command line (empty when all are fine)."""
    problems = []
    if email is not None and not EMAIL.match(email):
        problems.append(f"--email {email!r} is not a well-formed email address")
    if key is not None and not API_KEY.match(key):
        problems.append("--key must be 37 letters or digits")
    if token is not None and not TOKEN.match(token):
        problems.append("--token must be 40 letters, digits, '-' or '_'")
    return problems


def random_credentials() -> tuple[str, str]:
    """A fresh global key and API token from :mod:`secrets`, in the platform's formats.

    >>> key, token = random_credentials()
    >>> bool(API_KEY.match(key) and TOKEN.match(token)), random_credentials() != (key, token)
    (True, True)
    """
    key = "".join(secrets.choice(_KEY_ALPHABET) for _ in range(37))
    return key, secrets.token_urlsafe(30)  # 30 bytes: 40 characters of A-Z a-z 0-9 - _
