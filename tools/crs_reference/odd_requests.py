"""Seeded odd requests: the shapes no corpus writes on purpose, for the differential tests.

Every part of a request is drawn at random from awkward choices: methods in any case
and unknown ones, protocols up to ``HTTP/3``, percent escapes on half the characters,
``&&`` and ``;`` between arguments, nameless and valueless arguments, cookies with
spaces and ``$Version``, empty and absent headers, a Content-Length that lies, and
bodies that are form, JSON, XML or multipart, each sometimes cut short (broken JSON,
an unclosed element, a multipart body without its last boundary or with an epilogue),
with attack strings mixed into a fifth of the values. The CRS engine and libmodsecurity
are compared on them (``tests/rulesets/crs/test_differential.py``); the point is the
parsers' edges (ModSecurity's collections, body processors, transformations), not the
attacks.

    >>> requests = odd_requests(3, seed=7)
    >>> [r.id for r in requests]
    ['odd-7-0', 'odd-7-1', 'odd-7-2']
    >>> odd_requests(3, seed=7) == requests
    True
"""

from __future__ import annotations

import json
import random

from workbench.rulesets.crs.request import RawRequest

_ATTACKS = (
    "' or 1=1--",
    "<script>alert(1)</script>",
    "../../etc/passwd",
    ";cat /etc/passwd",
    "union select 1,2",
    "${jndi:ldap://x}",
    "<?php system('id'); ?>",
    "javascript:alert(1)",
    "1' AND SLEEP(5)#",
    "%00",
    "%u0027",
    "%c0%ae%c0%ae/",
    "eval(",
    "onerror=",
    "{{7*7}}",
    "|id",
    "`id`",
    "/bin/sh",
    "SELECT * FROM users",
    "<img src=x onerror=alert(1)>",
    "..\\..\\",
    "admin'--",
    "@@version",
    '"><svg/onload=alert(1)>',
    "document.cookie",
    "char(0x41)",
    "&#x3c;script&#x3e;",
    "%253Cscript%253E",
    "\r\nSet-Cookie: a=b",
)
_CHARS = "abcXYZ019 _-./;:=&?%+#'\"<>()[]{}|\\`$!@*,~^\t"
_CONTENT_TYPES = (
    "application/x-www-form-urlencoded",
    "application/x-www-form-urlencoded; charset=utf-7",
    "application/json",
    "application/json; charset=utf-8",
    "text/xml",
    "application/xml",
    "application/soap+xml",
    "multipart/form-data; boundary=XX",
    'multipart/form-data; boundary="a b"',
    "multipart/form-data",
    "text/plain",
)


class _Draw:
    """One seeded random state and the awkward values drawn from it."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(f"crs-reference.odd:{seed}")

    def text(self, k: int | None = None) -> str:
        rng = self.rng
        s = "".join(rng.choice(_CHARS) for _ in range(rng.randint(0, 12) if k is None else k))
        if rng.random() < 0.4:
            s += rng.choice(_ATTACKS)
        if rng.random() < 0.2:
            s = s.replace(" ", rng.choice(["%20", "+", "/**/", "\t"]))
        if rng.random() < 0.1:
            s += chr(rng.randint(0x80, 0x3000))
        return s

    def escaped(self, s: str) -> str:
        keep = lambda c: c.isalnum() or ord(c) > 255 or self.rng.random() < 0.5  # noqa: E731
        return "".join(c if keep(c) else f"%{ord(c):02X}" for c in s)

    def arguments(self, k: int) -> str:
        rng, parts = self.rng, []
        for _ in range(k):
            name = rng.choice(["a", "id", "q", "x[]", "user", "json.a", "a b", "", "p%00", "ü"])
            value = self.text()
            parts.append(rng.choice([f"{name}={self.escaped(value)}", f"{name}={value}", name]))
        return rng.choice(["&", "&", "&&", ";"]).join(parts)

    def body(self, content_type: str) -> str:
        rng = self.rng
        if content_type.startswith("application/json"):
            value = rng.choice([self.text(), rng.randint(0, 9), [self.text(), {"k": self.text()}]])
            text = json.dumps({rng.choice(["a", "b", "c d"]): value})
            return text[:-1] if rng.random() < 0.2 else text
        if "xml" in content_type:
            text = (
                f'<?xml version="1.0"?><r a="{self.text(3)}"><b>{self.text()}</b>'
                f"<c><![CDATA[{self.text()}]]></c></r>"
            )
            return text[:-4] if rng.random() < 0.2 else text
        if content_type.startswith("multipart"):
            boundary = content_type.partition("boundary=")[2].strip('"') or "XX"
            parts = []
            for _ in range(rng.randint(1, 3)):
                disposition = rng.choice(
                    [
                        f'form-data; name="{self.text(3)}"',
                        f'form-data; name="f"; filename="{self.text(4)}.php"',
                        "form-data; name=a",
                        "attachment",
                        f"form-data; name=\"x\"; filename*=utf-8''{self.text(3)}",
                    ]
                )
                head = f"Content-Disposition: {disposition}\r\n"
                if rng.random() < 0.3:
                    head += (
                        f"Content-Type: {rng.choice(['text/plain', 'image/png', self.text(4)])}\r\n"
                    )
                parts.append(f"--{boundary}\r\n{head}\r\n{self.text()}\r\n")
            end = rng.choice([f"--{boundary}--\r\n", f"--{boundary}--", "", f"--{boundary}--\r\nx"])
            return rng.choice(["", "", "\n"]).join(parts) + end
        return self.arguments(rng.randint(1, 4))

    def request(self, request_id: str) -> RawRequest:
        rng = self.rng
        method = rng.choice(
            ["GET", "GET", "POST", "POST", "PUT", "HEAD", "DELETE", "PROPFIND", "get"]
        )
        path = "/" + "/".join(
            self.escaped(self.text(rng.randint(0, 6))) for _ in range(rng.randint(0, 3))
        )
        if rng.random() < 0.1:
            path += rng.choice([".php", ".bak", ".env", ";.jsp", ".asp%00.jpg", "/.git/config"])
        uri = path + ("?" + self.arguments(rng.randint(0, 4)) if rng.random() < 0.7 else "")
        host = rng.choice(["localhost", "127.0.0.1", "example.com", "1.2.3.4:80", ""])
        headers = [("Host", host)]
        if rng.random() < 0.9:
            agent = rng.choice(["Mozilla/5.0", "curl/8.0", "sqlmap/1.0", "nikto", "", self.text()])
            headers.append(("User-Agent", agent))
        if rng.random() < 0.8:
            headers.append(("Accept", rng.choice(["*/*", "text/html", "", "application/json"])))
        if rng.random() < 0.3:
            names = ["s", "id", "a b", "$Version"]
            crumbs = (
                f"{rng.choice(names)}={self.escaped(self.text())}" for _ in range(rng.randint(1, 3))
            )
            headers.append(("Cookie", "; ".join(crumbs)))
        if rng.random() < 0.2:
            name = rng.choice(
                ["Referer", "X-Forwarded-For", "Range", "Accept-Encoding", "Connection"]
            )
            headers.append((name, self.text()))
        body = b""
        if method in ("POST", "PUT") or rng.random() < 0.05:
            content_type = rng.choice([*_CONTENT_TYPES, self.text(5)])
            body = self.body(content_type).encode("utf-8", "surrogatepass")
            length = len(body) if rng.random() < 0.95 else rng.randint(0, 5)
            headers += [("Content-Type", content_type), ("Content-Length", str(length))]
        protocol = rng.choice(["HTTP/1.1", "HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/3"])
        return RawRequest(method, uri, tuple(headers), body, protocol, id=request_id)


def odd_requests(n: int, seed: int = 0) -> list[RawRequest]:
    """``n`` odd requests from ``seed`` (ids ``odd-<seed>-<i>``); the same seed, the same list."""
    draw = _Draw(seed)
    return [draw.request(f"odd-{seed}-{i}") for i in range(n)]
