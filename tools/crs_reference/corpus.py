r"""Requests to run through the CRS engine and the oracle: CRS's regression tests, generated traffic, payloads.

Three sources, each a deterministic list of :class:`RawRequest` with ids set:

* :func:`regression_requests` — the CRS project's own regression tests at
  ``v3.3.4``, one request a test stage, from
  ``tests/rulesets/crs/data/crs-3.3.4-regression.jsonl`` (made by
  ``tools/build_crs_corpus.py``; Apache-2.0, see the ``NOTICE`` beside it).
  :func:`regression_corpus` gives the same requests with the rule ids each
  stage must and must not trigger (:class:`CorpusRequest`). The same of
  ``CRS4_PATH`` gives CRS 4.28.0's test requests, which the 3.3.4 translation
  was never built from (no expectations: CRS 4's tests name CRS 4's rules).
* :func:`generated_requests` — the workbench's seeded traffic
  (:func:`workbench.traffic.generators.generate`), turned into what the
  client put on the wire by :func:`raw_from_request`.
* :func:`payload_requests` — payloads sent three ways (a query argument, a
  form body, a JSON body; :func:`workbench.traffic.placements.placements`):
  the hand-written public lists of the detection tests and payloads the
  traffic builders compose.

    >>> reqs = generated_requests(3, seed=1)
    >>> [(r.id, r.header("Host") != []) for r in reqs]  # doctest: +ELLIPSIS
    [('generated-1-00000-...', True), ('generated-1-00001-...', True), ('generated-1-00002-...', True)]
    >>> generated_requests(3, seed=1) == reqs
    True
    >>> from workbench.traffic.generators import RawRequest as Generated
    >>> raw = raw_from_request(Generated("POST", "https://a.example/f?x=1#top", {"Accept": "*/*"},
    ...                                  "q=%27", "203.0.113.9", "FR", 3215, "sqli"))
    >>> raw.uri, raw.headers, raw.body
    ('/f?x=1', (('Host', 'a.example'), ('Accept', '*/*'), ('Content-Length', '5')), b'q=%27')
"""

from __future__ import annotations

import ast
import json
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.rulesets.crs.request import RawRequest, raw_from_request

_REPO = Path(__file__).resolve().parents[2]
#: The CRS 3.3.4 regression tests as requests (``tools/build_crs_corpus.py`` writes it).
REGRESSION_PATH = _REPO / "tests" / "rulesets" / "crs" / "data" / "crs-3.3.4-regression.jsonl"
#: CRS 4.28.0's regression tests as requests only (``build_crs_corpus.py --tag v4.28.0``).
CRS4_PATH = REGRESSION_PATH.with_name("crs-4.28.0-regression.jsonl")
#: The detection tests whose hand-written payload lists :func:`detection_payloads` reads.
DETECTION_TESTS = _REPO / "tests" / "detection" / "test_detection.py"

#: Methods whose requests carry a Content-Length even with an empty body.


@dataclass(frozen=True)
class CorpusRequest:
    """A regression-test stage: the request, the rule ids it must and must not trigger."""

    request: RawRequest
    expect: frozenset[int]
    expect_not: frozenset[int]
    #: ``<file under tests/regression/tests>:<test title>``.
    source: str
    #: What the server did to the bytes ftw sent (cut to Content-Length, de-chunked), if anything.
    note: str = ""

    def passes(self, fired: Iterable[int]) -> bool:
        """Whether ``fired`` holds every expected id and none of the unwanted ones."""
        got = frozenset(fired)
        return self.expect <= got and not (self.expect_not & got)


def regression_corpus(path: Path = REGRESSION_PATH) -> list[CorpusRequest]:
    """The CRS regression stages with their expectations, in file order."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            data = json.loads(line)
            out.append(
                CorpusRequest(
                    request=RawRequest.from_json(data),
                    expect=frozenset(int(i) for i in data.get("expect", ())),
                    expect_not=frozenset(int(i) for i in data.get("expect_not", ())),
                    source=str(data.get("source", "")),
                    note=str(data.get("note", "")),
                )
            )
    return out


def regression_requests(path: Path = REGRESSION_PATH) -> list[RawRequest]:
    """The CRS regression stages' requests (ids like ``942100-3``), in file order."""
    return [c.request for c in regression_corpus(path)]


def generated_requests(
    n: int, seed: int = 0, mix: dict[str, float] | None = None
) -> list[RawRequest]:
    """``n`` requests of the seeded traffic generator (ids ``generated-<seed>-<i>-<label>``)."""
    from workbench.traffic.generators import generate

    return [
        raw_from_request(r, f"generated-{seed}-{i:05d}-{r.label}")
        for i, r in enumerate(generate(n, seed=seed, mix=mix))
    ]


def detection_payloads(path: Path = DETECTION_TESTS) -> dict[str, list[str]]:
    """The hand-written public payload lists of the detection tests, by class, read (not imported)
    from ``tests/detection/test_detection.py``: ``PUBLIC``, ``PUBLIC_FRESH`` and
    ``PUBLIC_ENCODED`` (sqli, xss, cmdi, traversal) and ``PUBLIC_BENIGN`` (as ``benign``).
    Empty when the file is not there (an installed package without its tests)."""
    if not path.is_file():
        return {}
    found: dict[str, Any] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id.startswith("PUBLIC"):
                found[target.id] = ast.literal_eval(node.value)
    out: dict[str, list[str]] = {}
    for name in ("PUBLIC", "PUBLIC_FRESH", "PUBLIC_ENCODED"):
        for cls, text in sorted(found.get(name, {}).items()):
            out.setdefault(cls, []).extend(_lines(text))
    if isinstance(found.get("PUBLIC_BENIGN"), str):
        out["benign"] = _lines(found["PUBLIC_BENIGN"])
    return out


def _lines(text: str) -> list[str]:
    return [s for s in text.strip("\n").split("\n") if s.strip()]


def built_payloads(per_class: int = 25, seed: int = 0) -> dict[str, list[str]]:
    """``per_class`` payloads of each class the traffic builders compose
    (:mod:`workbench.traffic.payloads`), from one seeded random state."""
    from workbench.traffic.payloads import (
        cmdi_payload,
        sqli_payload,
        traversal_payload,
        xss_payload,
    )

    rng = random.Random(f"workbench.crs.corpus:{seed}")
    builders = {
        "sqli": sqli_payload,
        "xss": xss_payload,
        "cmdi": cmdi_payload,
        "traversal": traversal_payload,
    }
    return {cls: [build(rng)[0] for _ in range(per_class)] for cls, build in builders.items()}


def payload_requests(
    payloads: Mapping[str, Iterable[str]] | None = None, per_class: int = 25, seed: int = 0
) -> list[RawRequest]:
    """Each payload in a query argument, a form body and a JSON body (ids
    ``payload-<class>-<i>-<query|form|json>``). By default the detection tests'
    public lists (:func:`detection_payloads`) and then ``per_class`` built
    payloads of each class (:func:`built_payloads`, classes named ``built-<class>``)."""
    from workbench.traffic.placements import placements

    if payloads is None:
        lists: dict[str, list[str]] = dict(detection_payloads())
        lists.update({f"built-{k}": v for k, v in built_payloads(per_class, seed).items()})
    else:
        lists = {k: list(v) for k, v in payloads.items()}
    out = []
    for cls, items in lists.items():
        for i, payload in enumerate(items):
            for kind, req in zip(("query", "form", "json"), placements(payload, i), strict=True):
                out.append(raw_from_request(req, f"payload-{cls}-{i:04d}-{kind}"))
    return out
