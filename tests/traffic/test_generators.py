"""Seeded generators of labelled traffic: determinism, labels, proportions, shape of requests."""

from __future__ import annotations

import json
import random
from collections import Counter
from urllib.parse import unquote_plus

import pytest

from workbench.traffic import generators as g
from workbench.traffic.generators import ATTACK_LABELS, BENIGN_LABELS, LABELS, RawRequest, generate


def test_the_same_seed_gives_the_same_requests():
    assert generate(400, seed=7) == generate(400, seed=7)
    assert generate(400, seed=7, mix={"sqli": 1, "benign": 2}) == generate(
        400, seed=7, mix={"sqli": 1, "benign": 2}
    )


def test_different_seeds_give_different_requests():
    assert generate(200, seed=1) != generate(200, seed=2)


def test_zero_and_one_request():
    assert generate(0) == []
    assert len(generate(1, seed=3)) == 1


def test_every_label_appears_with_the_default_mix():
    counts = Counter(r.label for r in generate(2000, seed=11))
    assert set(counts) == set(LABELS)
    assert set(LABELS) == set(BENIGN_LABELS) | set(ATTACK_LABELS)


@pytest.mark.parametrize(
    "mix", [{"sqli": 1, "benign": 3}, {"xss": 0.2, "cmdi": 0.3, "api": 0.5}, g.DEFAULT_MIX]
)
def test_the_mix_is_respected_exactly(mix):
    n = 1000
    counts = Counter(r.label for r in generate(n, seed=5, mix=mix))
    total = sum(mix.values())
    assert sum(counts.values()) == n
    for label, weight in mix.items():
        assert abs(counts[label] - n * weight / total) <= 1
    assert set(counts) <= {k for k, w in mix.items() if w > 0}


def test_labels_are_shuffled_not_grouped():
    labels = [r.label for r in generate(200, seed=2, mix={"sqli": 1, "benign": 1})]
    assert labels[:100].count("sqli") not in (0, 100)


@pytest.mark.parametrize("mix", [{"phishing": 1}, {"sqli": -1, "benign": 1}, {"sqli": 0}])
def test_bad_mixes_are_refused(mix):
    with pytest.raises(ValueError):
        generate(10, mix=mix)


def test_requests_are_well_formed():
    for r in generate(1500, seed=9):
        assert isinstance(r, RawRequest)
        assert r.url.startswith("https://") and " " not in r.url and "#" not in r.url
        assert not any(c in r.url for c in "\r\n\t\x00")
        assert r.method in {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in r.headers.items())
        assert isinstance(r.body, str) and isinstance(r.asn, int) and r.asn > 0
        assert len(r.client_ip.split(".")) == 4 and len(r.country) == 2
        assert r.label in LABELS
        assert (r.technique == "") == (r.label in BENIGN_LABELS)
        if r.headers.get("Content-Type") == "application/json":
            json.loads(r.body)


def test_attacks_use_many_places_and_techniques():
    reqs = generate(3000, seed=4, mix={k: 1 for k in ("sqli", "xss", "cmdi", "traversal")})
    places = Counter(r.technique.rsplit("@", 1)[1] for r in reqs)
    assert {"query", "path", "form", "json", "cookie", "user-agent", "referer"} <= set(places)
    families = {r.technique.split("@")[0] for r in reqs}
    assert len(families) >= 20
    raw = " ".join(r.url + r.body + str(r.headers) for r in reqs)
    decoded = (raw + unquote_plus(unquote_plus(raw))).lower()
    for marker in (
        "union",
        "/**/",
        "sleep(",
        "onerror",
        "javascript:",
        "${ifs}",
        "`",
        "$(",
        "../",
        "..%2f",
        "%c0%ae",
        "php://",
        "/etc/passwd",
        "win.ini",
        "\\u003c",
        "%252e",
        "&&",
    ):
        assert marker in decoded, marker


def test_benign_traffic_carries_awkward_but_harmless_text():
    reqs = generate(3000, seed=8, mix={"benign": 3, "api": 1})
    text = " ".join(unquote_plus(r.url) + " " + r.body for r in reqs)
    for marker in (
        "O'Brien",
        "select a plan",
        "drop shipping",
        "<3",
        '"exact phrase"',
        "SELECT id, name",
        "`select`",
        "query GetUser",
        "payment_intent.succeeded",
    ):
        assert marker in text, marker


def test_payload_builders_are_deterministic_functions_of_the_rng():
    for build in (g.sqli_payload, g.xss_payload, g.cmdi_payload, g.traversal_payload):
        a, b = random.Random(3), random.Random(3)
        assert [build(a) for _ in range(50)] == [build(b) for _ in range(50)]
    a, b = random.Random(3), random.Random(3)
    assert [g.cms_exploit(a) for _ in range(20)] == [g.cms_exploit(b) for _ in range(20)]


def test_generated_traffic_goes_to_the_domain_it_is_given():
    from urllib.parse import urlsplit

    plain = generate(400, seed=3)
    moved = generate(400, seed=3, domain="Shop.Example.")
    hosts = {urlsplit(r.url).hostname for r in moved}
    assert hosts and all(h == "shop.example" or h.endswith(".shop.example") for h in hosts)
    assert not any(h.startswith("shop.shop.") for h in hosts), "no label twice"
    for a, b in zip(plain, moved, strict=True):
        # Only where it is sent changes: same method, path, query, body and label.
        assert (a.method, a.body, a.label, a.client_ip) == (b.method, b.body, b.label, b.client_ip)
        pa, pb = urlsplit(a.url), urlsplit(b.url)
        assert (pa.path, pa.query) == (pb.path, pb.query)
        assert b.headers.get("Host", "shop.example").endswith("shop.example")
        for name in ("Origin", "Referer"):
            if "example.com" in urlsplit(a.headers.get(name, "")).netloc:
                assert urlsplit(b.headers[name]).hostname.endswith("shop.example")


def test_a_bad_domain_is_refused_with_its_name():
    for bad in ("", "has space", "-x.example", "a" * 64 + ".example"):
        with pytest.raises(ValueError, match="domain must be a host name"):
            generate(1, domain=bad)
