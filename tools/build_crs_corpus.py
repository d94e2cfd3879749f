r"""Convert the CRS project's regression tests (ftw v1 YAML) into the corpus the CRS tests replay.

    .venv/bin/python tools/build_crs_corpus.py --repo /work/.mirror/coreruleset+coreruleset/repo

reads ``tests/regression/tests/**.yaml`` at tag ``v3.3.4`` straight from the
git directory (no work tree needed) and writes
``tests/rulesets/crs/data/crs-3.3.4-regression.jsonl``: one JSON object a
stage, the fields of :meth:`RawRequest.to_json` plus ``expect`` (rule ids
the stage's ``log_contains`` names), ``expect_not`` (``no_log_contains``),
``source`` (``<file>:<test title>``) and, when the server would not have seen
the bytes ftw sent, ``note``. Beside it goes ``NOTICE`` (Apache-2.0
attribution). The output depends only on the tag, so a re-run writes the
same bytes.

What a stage becomes is what ModSecurity inside Apache saw when the CRS
project ran the test (``ftw==1.3.0``, Apache, paranoia level 4):

* ftw's "magic" (unless ``stop_magic``): a body without ``Content-Type`` gets
  ``application/x-www-form-urlencoded``; a form body with no ``%`` escape
  is re-encoded through ``parse_qsl``/``urlencode`` (blank values dropped,
  spaces as ``+``); ``Content-Length`` is added as the *character* count of
  the body; the body is encoded in the ``charset`` its ``Content-Type``
  names. A ``data`` list is joined with CRLF. ``raw_request`` is sent after
  ftw's ``unicode_escape`` round trip, ``encoded_request`` base64-decoded;
  both are parsed as Apache parses a request.
* Apache's reading of the body: with ``Transfer-Encoding: chunked`` it
  de-chunks and drops ``Content-Length``; otherwise it reads
  ``Content-Length`` bytes (a shorter count cuts the body; none means no
  body).

``--tag v4.28.0`` (any CRS 4 tag) reads the go-ftw test files of CRS 4 and writes
``crs-4.28.0-regression.jsonl`` with ``NOTICE-crs-4.28.0``: requests the 3.3.4
translation was never built from, for the differential tests only. They are made
the same way (ftw 1.3.0's wire and Apache's reading, which go-ftw's differs from
in small ways), every stage is kept, and ``expect``/``expect_not`` stay empty:
CRS 4's tests name CRS 4's rules, not 3.3.4's. The ids are ``<rule_id>-<test_id>``.

Left out, and counted on the way: files and tests marked ``enabled: false``
(ftw skips them; they need settings the CRS test set-up leaves off), stages
whose output checks no rule (``status`` or ``expect_error`` alone, or a log
pattern that can match no log line: they test Apache), and stages ftw itself
cannot send (a body its charset cannot encode, or a raw request that cannot
be parsed).
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from workbench.rulesets.crs.request import RawRequest  # noqa: E402

TAG = "v3.3.4"
TESTS = "tests/regression/tests"
OUT = ROOT / "tests" / "rulesets" / "crs" / "data"
CORPUS = "crs-3.3.4-regression.jsonl"


def corpus_name(tag: str) -> str:
    """The corpus file a tag's stages go to (``crs-3.3.4-regression.jsonl`` for the default)."""
    return f"crs-{tag.removeprefix('v')}-regression.jsonl"


def notice_name(tag: str) -> str:
    """``NOTICE`` for the default tag's corpus, ``NOTICE-crs-<version>`` for another's."""
    return "NOTICE" if tag == TAG else f"NOTICE-crs-{tag.removeprefix('v')}"


_RULE_ID = re.compile(r"\d{6}")
# Python names of charsets, as ftw looks them up (encodings.aliases).
_CHARSET = re.compile(r"\;\s{0,1}?charset\=(.*?)(?:$|\;|\s)")


class Dropped(Exception):
    """A stage that does not go into the corpus, and why."""


@dataclass
class Stage:
    """One ftw stage as the server saw it."""

    request: RawRequest
    expect: list[int]
    expect_not: list[int]
    source: str
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = self.request.to_json()
        data["expect"] = self.expect
        data["expect_not"] = self.expect_not
        data["source"] = self.source
        if self.notes:
            data["note"] = "; ".join(self.notes)
        return data


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def yaml_files(repo: Path, tag: str) -> list[str]:
    names = git(repo, "ls-tree", "-r", "--name-only", tag, TESTS).decode().splitlines()
    return sorted(n for n in names if n.endswith(".yaml"))


# -- ftw 1.3.0's Input and HttpUA.build_request -------------------------------------------


def ftw_wire(stage_input: dict[str, Any]) -> tuple[str, str, str, list[tuple[str, str]], bytes]:
    """What ftw sends for a structured input: method, uri, version, header pairs, body bytes."""
    method = str(stage_input.get("method", "GET"))
    uri = str(stage_input.get("uri", "/"))
    version = str(stage_input.get("version", "HTTP/1.1"))
    headers: dict[Any, Any] = dict(stage_input.get("headers") or {})
    data = stage_input.get("data", "")
    magic = not stage_input.get("stop_magic", False)
    if isinstance(data, list):
        data = "\r\n".join(str(d) for d in data)
    data = "" if data is None else str(data)
    if data != "":
        if "Content-Type" not in headers and magic:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        if (
            headers.get("Content-Type") == "application/x-www-form-urlencoded"
            and magic
            and unquote(data) == data
        ):
            pairs = parse_qsl(data)
            if pairs:
                data = urlencode(pairs)
        if "Content-Length" not in headers and magic:
            headers["Content-Length"] = len(data)
    body = b""
    if data != "":
        encoding = "utf-8"
        if "Content-Type" in headers and magic:
            m = _CHARSET.search(str(headers["Content-Type"]))
            if m:
                choice = m.group(1).replace("-", "_").lower()
                if choice in _charsets():
                    encoding = choice
        try:
            body = data.encode(encoding, "strict")
            body.decode("utf-8", "strict")  # ftw's ensure_str: not UTF-8 is a TestError
        except UnicodeError as exc:
            raise Dropped("ftw cannot encode the body") from exc
    pairs_out = [(str(k), str(v)) for k, v in headers.items()]
    return method, uri, version, pairs_out, body


def _charsets() -> set[str]:
    import encodings.aliases

    aliases = encodings.aliases.aliases
    return set(aliases) | set(aliases.values())


def raw_wire(stage_input: dict[str, Any]) -> bytes:
    """The bytes ftw sends for ``raw_request`` or ``encoded_request``."""
    if "encoded_request" in stage_input:
        return base64.b64decode(stage_input["encoded_request"])
    text = str(stage_input["raw_request"]).encode("utf-8").decode("unicode_escape")
    return text.encode("utf-8")


def parse_wire(wire: bytes) -> tuple[str, str, str, list[tuple[str, str]], bytes]:
    """A request as Apache reads it off the wire: request line, header lines (CRLF or LF), body."""
    for sep in (b"\r\n\r\n", b"\n\n"):
        head, found, body = wire.partition(sep)
        if found:
            break
    else:
        raise Dropped("raw request without the end of its headers")
    lines = head.replace(b"\r\n", b"\n").split(b"\n")
    parts = _text(lines[0]).split(" ")
    if len(parts) < 3:
        raise Dropped("raw request line without a protocol")
    method, uri, version = parts[0], " ".join(parts[1:-1]), parts[-1]
    headers = []
    for line in lines[1:]:
        name, colon, value = _text(line).partition(":")
        if not colon:
            raise Dropped("raw header line without a colon")
        headers.append((name, value.strip()))
    return method, uri, version, headers, body


def _text(line: bytes) -> str:
    """A header or request line as text: UTF-8, as ftw writes it, else byte for byte."""
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        return line.decode("latin-1")


# -- Apache's reading of the body ----------------------------------------------------------


def apache_body(
    headers: list[tuple[str, str]], body: bytes, notes: list[str]
) -> tuple[list[tuple[str, str]], bytes]:
    """The headers and body ModSecurity sees once Apache has read the body off the wire."""
    chunked = any(k.lower() == "transfer-encoding" and "chunked" in v.lower() for k, v in headers)
    if chunked:
        notes.append("Apache de-chunked the body and dropped Content-Length")
        return [(k, v) for k, v in headers if k.lower() != "content-length"], dechunk(body)
    lengths = [v for k, v in headers if k.lower() == "content-length"]
    if not lengths:
        if body:
            notes.append("no Content-Length: Apache reads no body")
        return headers, b""
    try:
        length = int(lengths[0].strip())
    except ValueError:
        return headers, body
    if 0 <= length < len(body):
        notes.append(f"body cut to Content-Length {length} (ftw sent {len(body)} bytes)")
        return headers, body[:length]
    if length > len(body):
        notes.append(f"Content-Length {length} > {len(body)} bytes sent")
    return headers, body


def dechunk(body: bytes) -> bytes:
    out = bytearray()
    rest = body
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        try:
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
        except ValueError:
            break
        if size == 0:
            break
        out += rest[:size]
        rest = rest[size + 2 :]
    return bytes(out)


# -- stages -------------------------------------------------------------------------------


def expectations(output: dict[str, Any]) -> tuple[list[int], list[int]]:
    """The rule ids ``log_contains`` and ``no_log_contains`` name, read as ftw reads them: a
    regex searched in the log, where a rule shows as ``[id "942100"]``. So ``930120`` and
    ``id "942480`` name their rule, while ``id:921140`` matches no log line and checks nothing."""

    def ids(key: str) -> list[int]:
        value = output.get(key)
        if not value:
            return []
        pattern = re.compile(str(value))
        named = {int(m) for m in _RULE_ID.findall(str(value))}
        return sorted(i for i in named if pattern.search(f'[id "{i}"]'))

    return ids("log_contains"), ids("no_log_contains")


def convert_stage(
    stage: dict[str, Any], source: str, request_id: str, requests_only: bool = False
) -> Stage:
    stage_input = stage.get("input") or {}
    expect, expect_not = ([], []) if requests_only else expectations(stage.get("output") or {})
    if not expect and not expect_not and not requests_only:
        raise Dropped(
            "output checks no rule (status, expect_error or a pattern matching no log line)"
        )
    notes: list[str] = []
    if "raw_request" in stage_input or "encoded_request" in stage_input:
        method, uri, version, headers, body = parse_wire(raw_wire(stage_input))
        notes.append("raw request" if "raw_request" in stage_input else "encoded request")
    else:
        method, uri, version, headers, body = ftw_wire(stage_input)
    headers, body = apache_body(headers, body, notes)
    request = RawRequest(
        method=method,
        uri=uri,
        headers=tuple(headers),
        body=body,
        protocol=version,
        id=request_id,
    )
    return Stage(request, expect, expect_not, source, notes)


def convert(repo: Path, tag: str = TAG) -> tuple[list[Stage], Counter[str]]:
    """Every stage of the tag's regression tests that goes into the corpus, and the drop counts."""
    stages: list[Stage] = []
    dropped: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for path in yaml_files(repo, tag):
        doc = yaml.safe_load(git(repo, "show", f"{tag}:{path}"))
        name = path[len(TESTS) + 1 :]
        if not isinstance(doc, dict):  # an empty file (CRS 4 keeps one)
            dropped["file without tests"] += 1
            continue
        tests = doc.get("tests") or []
        if not (doc.get("meta") or {}).get("enabled", True):
            dropped["file disabled (meta enabled: false)"] += sum(
                len(t.get("stages") or []) for t in tests
            )
            continue
        # go-ftw's files (CRS 4): a stage is the item itself, a test is its rule and number.
        go_ftw = "rule_id" in doc
        for test in tests:
            title = (
                f"{doc['rule_id']}-{test.get('test_id')}"
                if go_ftw
                else str(test.get("test_title", ""))
            )
            if not test.get("enabled", True):
                dropped["test disabled"] += len(test.get("stages") or [])
                continue
            multi = len(test["stages"]) > 1
            for index, item in enumerate(test["stages"]):
                request_id = f"{title}/{index + 1}" if multi else title
                seen[request_id] += 1
                if seen[request_id] > 1:
                    request_id = f"{request_id}#{seen[request_id]}"
                try:
                    stage = item if go_ftw else item["stage"]
                    stages.append(convert_stage(stage, f"{name}:{title}", request_id, go_ftw))
                except Dropped as why:
                    dropped[str(why)] += 1
    return stages, dropped


COPYRIGHT = """\
OWASP ModSecurity Core Rule Set ver.3.3.4
Copyright (c) 2006-2020 Trustwave and contributors. All rights reserved.
Copyright (c) 2021-2022 Core Rule Set project. All rights reserved."""

NOTICE = """\
tests/rulesets/crs/data/{corpus}

Derived from the regression tests of the OWASP ModSecurity Core Rule Set
(CRS), tag {tag} (commit {commit}),
https://github.com/coreruleset/coreruleset, directory tests/regression/tests.
The YAML tests were converted to one JSON request a stage by
tools/build_crs_corpus.py; the requests, payloads and expected rule ids are
theirs.

{copyright}
Copyright 2006 the OWASP Core Rule Set contributors

Licensed under the Apache License, Version 2.0 (the "License");
you may not use these files except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
"""


def rules_copyright(repo: Path, tag: str) -> str:
    """The copyright lines the tag's rule files carry (the default tag's as recorded)."""
    if tag == TAG:
        return COPYRIGHT
    name = next(
        n
        for n in git(repo, "ls-tree", "--name-only", tag, "rules/").decode().split()
        if n.endswith(".conf")
    )
    head = git(repo, "show", f"{tag}:{name}").decode("utf-8").splitlines()[:6]
    return "\n".join(
        line.lstrip("# ").rstrip() for line in head if "CRS ver." in line or "Copyright" in line
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", type=Path, required=True, help="a git directory of coreruleset")
    parser.add_argument("--tag", default=TAG)
    parser.add_argument("--out", type=Path, default=OUT, help="the folder to write into")
    args = parser.parse_args()
    commit = git(args.repo, "rev-parse", f"{args.tag}^{{commit}}").decode().strip()
    stages, dropped = convert(args.repo, args.tag)
    corpus = corpus_name(args.tag)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / corpus, "w", encoding="ascii", newline="\n") as f:
        for stage in stages:
            f.write(json.dumps(stage.to_json(), ensure_ascii=True) + "\n")
    (args.out / notice_name(args.tag)).write_text(
        NOTICE.format(
            corpus=corpus,
            tag=args.tag,
            commit=commit,
            copyright=rules_copyright(args.repo, args.tag),
        ),
        encoding="utf-8",
    )
    noted = Counter(n.split(" (")[0] for s in stages for n in s.notes)
    print(f"{args.tag} ({commit}): kept {len(stages)} stages -> {args.out / corpus}")
    print(f"dropped {sum(dropped.values())}:")
    for why, n in sorted(dropped.items()):
        print(f"  {n:5d}  {why}")
    print("kept, with a note:")
    for why, n in sorted(noted.items()):
        print(f"  {n:5d}  {why}")


if __name__ == "__main__":
    main()
