"""SHA-512 written in DuckDB SQL, which has SHA-1 and SHA-256 built in but not SHA-512.

``sha512()`` and ``hmac(.., "sha512")`` need it on the whole-table path. The
digest follows FIPS 180-4 with 64-bit words held in HUGEINT (sums reduced
modulo 2**64): the padded message as hex, one ``list_reduce`` over its
1024-bit blocks, one over the 80 message-schedule words and one over the 80
rounds. The constants are derived here from the primes, as the standard
defines them, rather than copied. It costs far more per row than a native
hash, so it is used only by those two functions.

    >>> import duckdb, hashlib
    >>> sql = sha512_hex("encode('abc')")
    >>> duckdb.sql(f"select {sql}").fetchall()[0][0] == hashlib.sha512(b"abc").hexdigest()
    True
"""

from __future__ import annotations

import functools

_WORD = 1 << 64
_MASK = _WORD - 1
BLOCK_BYTES = 128


def _primes(n: int) -> list[int]:
    found: list[int] = []
    candidate = 2
    while len(found) < n:
        if all(candidate % p for p in found if p * p <= candidate):
            found.append(candidate)
        candidate += 1
    return found


def _iroot(value: int, k: int) -> int:
    """The integer k-th root (floor) of ``value``."""
    x = 1 << ((value.bit_length() + k - 1) // k)
    while True:
        y = ((k - 1) * x + value // x ** (k - 1)) // k
        if y >= x:
            return x
        x = y


@functools.cache
def constants() -> tuple[list[int], list[int]]:
    """(initial hash values, round constants): the first 64 fraction bits of the square
    roots of the first 8 primes and of the cube roots of the first 80 primes.

        >>> hex(constants()[0][0]), hex(constants()[1][79])
        ('0x6a09e667f3bcc908', '0x6c44198c4a475817')
    """
    initial = [_iroot(p << 128, 2) & _MASK for p in _primes(8)]
    rounds = [_iroot(p << 192, 3) & _MASK for p in _primes(80)]
    return initial, rounds


def _rotr(x: str, n: int) -> str:
    return f"((({x} >> {n}) | ({x} << {64 - n})) & {_MASK})"


def _xor(*parts: str) -> str:
    out = parts[0]
    for p in parts[1:]:
        out = f"xor({out}, {p})"
    return out


def sha512_hex(blob: str) -> str:
    """SQL: the lower-case hex SHA-512 of a BLOB expression."""
    initial, rounds = constants()
    k_list = "[" + ", ".join(f"{k}::HUGEINT" for k in rounds) + "]"
    # Padding: 0x80, zeros, then the bit length in 128 bits, to a multiple of 128 bytes.
    padded = (
        f"list_transform([{blob}], lambda _s5m: hex(_s5m) || '80' || "
        f"repeat('00', (({BLOCK_BYTES} - ((octet_length(_s5m) + 17) % {BLOCK_BYTES})) "
        f"% {BLOCK_BYTES})::BIGINT) || lpad(printf('%x', octet_length(_s5m) * 8), 32, '0'))[1]"
    )

    def sigma(x: str, r1: int, r2: int, shift: int) -> str:
        return _xor(_rotr(x, r1), _rotr(x, r2), f"({x} >> {shift})")

    schedule_step = (
        f"list_append(_s5w, ({sigma('_s5w[_s5t - 1]', 19, 61, 6)} + _s5w[_s5t - 6] + "
        f"{sigma('_s5w[_s5t - 14]', 1, 8, 7)} + _s5w[_s5t - 15]) % {_WORD})"
    )
    first_words = (
        "list_transform(range(16), lambda _s5j: ('0x' || substr(_s5h, _s5b * 256 + _s5j * 16 + 1,"
        " 16))::UBIGINT::HUGEINT)"
    )
    schedule = f"list_reduce(range(16, 80), lambda _s5w, _s5t: {schedule_step}, {first_words})"
    a, b, c, d, e, f, g, h = (f"_s5s[{i}]" for i in range(1, 9))
    t1 = (
        f"({h} + {_xor(_rotr(e, 14), _rotr(e, 18), _rotr(e, 41))} + "
        f"{_xor(f'({e} & {f})', f'(({_MASK} - {e}) & {g})')} + "
        f"{k_list}[_s5t + 1] + _s5ww[_s5t + 1])"
    )
    t2 = (
        f"({_xor(_rotr(a, 28), _rotr(a, 34), _rotr(a, 39))} + "
        f"{_xor(f'({a} & {b})', f'({a} & {c})', f'({b} & {c})')})"
    )
    round_step = f"[({t1} + {t2}) % {_WORD}, {a}, {b}, {c}, ({d} + {t1}) % {_WORD}, {e}, {f}, {g}]"
    compress = (
        f"list_transform([{schedule}], lambda _s5ww: list_reduce(range(80), "
        f"lambda _s5s, _s5t: {round_step}, _s5st))[1]"
    )
    block = (
        f"list_transform(list_zip(_s5st, {compress}), lambda _s5p: (_s5p[1] + _s5p[2]) % {_WORD})"
    )
    start = "[" + ", ".join(f"{v}::HUGEINT" for v in initial) + "]"
    digest = (
        f"list_transform([{padded}], lambda _s5h: list_reduce(range(length(_s5h) // 256), "
        f"lambda _s5st, _s5b: {block}, {start}))[1]"
    )
    return (
        f"list_aggr(list_transform({digest}, lambda _s5x: lpad(printf('%x', _s5x), 16, '0')), "
        "'string_agg', '')"
    )
