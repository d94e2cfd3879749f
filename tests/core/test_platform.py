"""The Workbench core: clock, seeded ids, zones, errors."""

from datetime import UTC, datetime

import pytest

from workbench import Workbench
from workbench.core import Conflict, NotFound, ValidationError


def test_same_seed_same_ids_and_credentials():
    a, b = Workbench(seed=3), Workbench(seed=3)
    assert a.account.api_key == b.account.api_key
    assert [a.new_id() for _ in range(3)] == [b.new_id() for _ in range(3)]
    assert Workbench(seed=4).new_id() != Workbench(seed=3).new_id()


def test_ids_are_32_lowercase_hex():
    wb = Workbench()
    for _ in range(50):
        ident = wb.new_id()
        assert len(ident) == 32 and set(ident) <= set("0123456789abcdef")


def test_credentials_have_platform_shapes():
    wb = Workbench()
    assert len(wb.account.api_key) == 37
    assert len(wb.account.tokens[0].value) == 40


def test_virtual_clock_moves_only_when_advanced():
    start = datetime(2026, 3, 1, tzinfo=UTC)
    wb = Workbench(start=start)
    assert wb.now() == start
    assert wb.advance(minutes=2).isoformat() == "2026-03-01T00:02:00+00:00"
    assert wb.clock.now_ms() == int(start.timestamp() * 1000) + 120_000
    with pytest.raises(ValueError, match="cannot go back"):
        wb.advance(seconds=-1)


def test_naive_start_is_refused():
    with pytest.raises(ValueError, match="timezone-aware"):
        Workbench(start=datetime(2026, 1, 1))


def test_zones_by_plan_and_lookup():
    wb = Workbench()
    zones = [
        wb.create_zone(f"z{i}.example", plan=p)
        for i, p in enumerate(("free", "pro", "business", "enterprise"))
    ]
    assert [z.plan for z in zones] == ["free", "pro", "business", "enterprise"]
    assert wb.zone(zones[2].id) is zones[2]
    assert wb.zone("z3.example") is zones[3]


def test_zone_errors_carry_v4_codes():
    wb = Workbench()
    wb.create_zone("example.com")
    with pytest.raises(Conflict):
        wb.create_zone("example.com")
    with pytest.raises(ValidationError, match="plan must be one of"):
        wb.create_zone("other.com", plan="gold")
    with pytest.raises(ValidationError, match="not a valid domain"):
        wb.create_zone("not a domain")
    with pytest.raises(NotFound) as info:
        wb.zone("0" * 32)
    assert info.value.to_error()["code"] == 7003


def test_token_scoped_to_zone():
    wb = Workbench()
    a, b = wb.create_zone("a.example"), wb.create_zone("b.example")
    token = wb.create_token([a.id])
    assert token.allows(a.id) and not token.allows(b.id)
    assert wb.account.tokens[0].allows(b.id)


def test_zone_names_that_cannot_be_encoded_are_refused():
    wb = Workbench()
    with pytest.raises(ValidationError) as info:
        wb.create_zone("ex\ud800ample.com")
    assert info.value.to_error() == {
        "code": 1099,
        "message": "zone name 'ex\\ud800ample.com' holds a lone surrogate (U+D800) at character 3, "
        "which cannot be encoded as UTF-8",
    }
    with pytest.raises(ValidationError):
        wb.create_zone("example.com", plan="pro\udfff")
    assert wb.zones == []
    # Looking one up quotes it in the error, escaped so that the error can be shown anywhere.
    with pytest.raises(NotFound) as missing:
        wb.zone_by_id("\ud800")
    missing.value.message.encode("utf-8")
