"""Functions of the Rules language: signatures (as documented) and behaviour.

Where the engine's registrations and the public documentation disagree, the
documentation wins (see ``docs/decisions.md``): ``len`` of arrays,
``url_decode`` options, ``lookup_json_*`` key paths, ``concat`` of integers,
``to_string`` of IPs and Booleans, two-argument ``substring`` and the
documented ``is_timed_hmac_valid_v0`` order (the binding's order is accepted
too: :data:`ALTERNATE_ORDERS`). The engine's rule that a
function's source must be a field (not a literal) is kept.

    >>> FUNCTIONS["lower"].build([None])("ABC")
    'abc'
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ._function_crypto import _hmac_fn, _timed_hmac_build, _uuidv4, timed_hmac_check
from .ast import FieldRef, Literal, Node
from .function_impls import (  # noqa: F401 - some are re-exported for the SQL path
    JSON_MAX_DEPTH,
    URL_DECODE_MAX_PASSES,
    _bit_slice,
    _bool_of,
    _cidr,
    _cidr6,
    _coalesce_build,
    _concat,
    _concat_returns,
    _contains,
    _decode_base64,
    _encode_base64_build,
    _ends_with,
    _fixed,
    _has_key,
    _has_value,
    _hash_in_range,
    _ip_in_range_build,
    _join,
    _len,
    _lookup_json,
    _range_check,
    _regex_replace_build,
    _remove_bytes,
    _remove_query_args,
    _simple,
    _split,
    _starts_with,
    _substring,
    _to_string,
    _trim_build,
    _url_decode_build,
    _wildcard_fn_build,
    _wildcard_replace_build,
    ascii_lower,
    ascii_upper,
    hash_range_check,
    ip_range_check,
    regex_replace_pattern,
    wildcard_replace_regex,
)
from .types import ARRAY, BOOL, BYTES, INT, IP, Type
from .values import to_bytes


@dataclass(frozen=True)
class Param:
    """One parameter: accepted types, kind (field, literal or any), optional, variadic."""

    types: tuple[str, ...]
    kind: str = "any"
    optional: bool = False
    variadic: bool = False


@dataclass
class FunctionDef:
    """A function: its parameters, its return type and a builder of its implementation.

    ``build(literals)`` receives, for each argument, the literal value or None
    (for non-literal arguments) and returns ``fn(*values)``.
    """

    name: str
    params: list[Param]
    returns: Callable[[list[Type]], Type]
    build: Callable[[list[Any]], Callable[..., Any]]
    check: Callable[[list[Any]], str | None] | None = None
    # Another accepted argument order: rewrites the parsed arguments into ``params``' order.
    reorder: Callable[[list[Node]], list[Node]] | None = None
    min_args: int = field(init=False)
    max_args: int | None = field(init=False)

    def __post_init__(self) -> None:
        self.min_args = sum(1 for p in self.params if not p.optional)
        self.max_args = None if any(p.variadic for p in self.params) else len(self.params)

    def param(self, i: int) -> Param:
        """The parameter that argument ``i`` binds to."""
        if i < len(self.params):
            return self.params[i]
        return self.params[-1]


def type_accepts(spec: str, t: Type) -> bool:
    """True when a parameter spelled ``spec`` accepts type ``t``."""
    if spec in ("Array", "Map"):
        return t.kind == spec
    return str(t) == spec


B = ("Bytes",)
BYTES_FIELD = Param(B, "field")
BYTES_LIT = Param(B, "literal")
INT_LIT = Param(("Int",), "literal")

FUNCTIONS: dict[str, FunctionDef] = {
    f.name: f
    for f in [
        FunctionDef("any", [Param(("Array<Bool>",))], _fixed(BOOL), lambda _l: any),
        FunctionDef("all", [Param(("Array<Bool>",))], _fixed(BOOL), lambda _l: all),
        FunctionDef("lower", [BYTES_FIELD], _fixed(BYTES), _simple(ascii_lower)),
        FunctionDef("upper", [BYTES_FIELD], _fixed(BYTES), _simple(ascii_upper)),
        FunctionDef("len", [Param(("Bytes", "Array"), "field")], _fixed(INT), _simple(_len)),
        FunctionDef("starts_with", [BYTES_FIELD, Param(B)], _fixed(BOOL), _simple(_starts_with)),
        FunctionDef("ends_with", [BYTES_FIELD, Param(B)], _fixed(BOOL), _simple(_ends_with)),
        FunctionDef("contains", [BYTES_FIELD, Param(B)], _fixed(BOOL), _simple(_contains)),
        FunctionDef(
            "concat",
            [Param(("Bytes", "Int", "Array")), Param(("Bytes", "Int", "Array"), variadic=True)],
            _concat_returns,
            _simple(_concat),
        ),
        FunctionDef(
            "url_decode",
            [BYTES_FIELD, Param(B, "literal", optional=True)],
            _fixed(BYTES),
            _url_decode_build,
        ),
        FunctionDef(
            "to_string", [Param(("Int", "Bool", "Ip"))], _fixed(BYTES), _simple(_to_string)
        ),
        FunctionDef(
            "remove_bytes", [BYTES_FIELD, BYTES_LIT], _fixed(BYTES), _simple(_remove_bytes)
        ),
        FunctionDef(
            "substring",
            [BYTES_FIELD, INT_LIT, Param(("Int",), "literal", optional=True)],
            _fixed(BYTES),
            _simple(_substring),
        ),
        FunctionDef(
            "lookup_json_string",
            [BYTES_FIELD, Param(("Bytes", "Int"), "literal", variadic=True)],
            _fixed(BYTES),
            _lookup_json(want_int=False),
        ),
        FunctionDef(
            "lookup_json_integer",
            [BYTES_FIELD, Param(("Bytes", "Int"), "literal", variadic=True)],
            _fixed(INT),
            _lookup_json(want_int=True),
        ),
        FunctionDef(
            "regex_replace",
            [BYTES_FIELD, BYTES_LIT, BYTES_LIT],
            _fixed(BYTES),
            _regex_replace_build,
        ),
        FunctionDef(
            "wildcard_replace",
            [BYTES_FIELD, BYTES_LIT, BYTES_LIT, Param(B, "literal", optional=True)],
            _fixed(BYTES),
            _wildcard_replace_build,
        ),
        FunctionDef(
            "encode_base64",
            [BYTES_FIELD, Param(B, "literal", optional=True)],
            _fixed(BYTES),
            _encode_base64_build,
        ),
        FunctionDef("decode_base64", [BYTES_FIELD], _fixed(BYTES), _simple(_decode_base64)),
        FunctionDef(
            "sha256",
            [BYTES_FIELD],
            _fixed(BYTES),
            _simple(lambda v: hashlib.sha256(to_bytes(v)).digest()),
        ),
        FunctionDef(
            "sha512",
            [BYTES_FIELD],
            _fixed(BYTES),
            _simple(lambda v: hashlib.sha512(to_bytes(v)).digest()),
        ),
        FunctionDef(
            "cidr",
            [Param(("Ip",), "field"), INT_LIT, INT_LIT],
            _fixed(IP),
            _simple(_cidr),
            check=lambda lits: (
                _range_check(1, 1, 32, "ipv4_network_bits")(lits)
                or _range_check(2, 1, 128, "ipv6_network_bits")(lits)
            ),
        ),
        FunctionDef(
            "cidr6",
            [Param(("Ip",), "field"), INT_LIT],
            _fixed(IP),
            _simple(_cidr6),
            check=_range_check(1, 1, 128, "ipv6_network_bits"),
        ),
        FunctionDef(
            "join", [Param(("Array<Bytes>",), "field"), BYTES_LIT], _fixed(BYTES), _simple(_join)
        ),
        FunctionDef(
            "split",
            [BYTES_FIELD, BYTES_LIT, INT_LIT],
            _fixed(ARRAY(BYTES)),
            _simple(_split),
            check=lambda lits: (
                ("the separator of split() must not be empty" if lits[1] == b"" else None)
                or _range_check(2, 1, 128, "limit")(lits)
            ),
        ),
        FunctionDef(
            "remove_query_args",
            [BYTES_FIELD, Param(B, "literal", variadic=True)],
            _fixed(BYTES),
            _simple(_remove_query_args),
        ),
        FunctionDef("uuidv4", [BYTES_FIELD], _fixed(BYTES), _simple(_uuidv4)),
        FunctionDef(
            "is_timed_hmac_valid_v0",
            [
                BYTES_LIT,
                Param(B, "field"),
                Param(("Int",)),
                Param(("Int",)),
                Param(("Int",), optional=True),
                Param(B, "literal", optional=True),
            ],
            _fixed(BOOL),
            _timed_hmac_build,
            check=timed_hmac_check,
        ),
        FunctionDef(
            "has_key", [Param(("Map",), "field"), BYTES_LIT], _fixed(BOOL), _simple(_has_key)
        ),
        FunctionDef(
            "has_value",
            [Param(("Array<Bytes>", "Array<Int>"), "field"), Param(("Bytes", "Int"), "literal")],
            _fixed(BOOL),
            _simple(_has_value),
        ),
        FunctionDef("hmac", [BYTES_FIELD, BYTES_LIT, BYTES_LIT], _fixed(BYTES), _simple(_hmac_fn)),
        FunctionDef(
            "coalesce",
            [Param(("Bytes", "Int", "Ip")), Param(("Bytes", "Int", "Ip"), variadic=True)],
            lambda types: types[0],
            _coalesce_build,
        ),
        FunctionDef(
            "hash_in_range",
            [INT_LIT, INT_LIT, Param(B, "field")],
            _fixed(INT),
            _simple(_hash_in_range),
            check=hash_range_check,
        ),
        FunctionDef(
            "ip_in_range",
            [Param(("Ip",), "field"), BYTES_LIT],
            _fixed(BOOL),
            _ip_in_range_build,
            check=ip_range_check,
        ),
        FunctionDef("wildcard", [BYTES_FIELD, BYTES_LIT], _fixed(BOOL), _wildcard_fn_build),
        FunctionDef("bit_slice", [BYTES_FIELD, INT_LIT, INT_LIT], _fixed(INT), _simple(_bit_slice)),
        *(
            FunctionDef(
                name,
                [BYTES_FIELD, Param(B, "literal", optional=True)],
                _fixed(BYTES),
                _trim_build(how),
            )
            for name, how in (("trim", "both"), ("trim_start", "start"), ("trim_end", "end"))
        ),
        FunctionDef("is_jwt_valid", [BYTES_LIT], _fixed(BOOL), _simple(_bool_of)),
        FunctionDef("is_jwt_present", [BYTES_LIT], _fixed(BOOL), _simple(_bool_of)),
    ]
}


# The request time the binding's is_timed_hmac_valid_v0 order leaves implicit.
NOW_FIELD = "http.request.timestamp.sec"


def _timed_hmac_docs_order(args: list[Node]) -> list[Node]:
    """(MessageMAC, key, ttl[, flags[, separator length]]) as the documented
    (key, MessageMAC, ttl, now, separator length, flags), now being the request's time."""
    mac, key, ttl = args[0], args[1], args[2]
    end = args[-1].end
    now = FieldRef(mac.start, end, INT, name=NOW_FIELD)
    out = [key, mac, ttl, now]
    flags = args[3] if len(args) > 3 else None
    sep_len = args[4] if len(args) > 4 else None
    if flags is not None:
        out += [sep_len or Literal(end, end, INT, value=0), flags]
    elif sep_len is not None:
        out.append(sep_len)
    return out


# Argument orders other than the documented one that the engine's registration accepts,
# chosen when the first argument is not a literal (the documented order starts with the key).
ALTERNATE_ORDERS: dict[str, FunctionDef] = {
    "is_timed_hmac_valid_v0": FunctionDef(
        "is_timed_hmac_valid_v0",
        [
            Param(B, "field"),
            BYTES_LIT,
            INT_LIT,
            Param(B, "literal", optional=True),
            Param(("Int",), "literal", optional=True),
        ],
        _fixed(BOOL),
        _timed_hmac_build,
        check=timed_hmac_check,
        reorder=_timed_hmac_docs_order,
    )
}
