"""Platform-core choices recorded in docs/decisions.md: demo credentials and the zones list."""

import re

import pytest

from workbench import Workbench
from workbench.core.errors import ValidationError


def test_demo_credentials_email_and_key_alphabet():
    # The documentation's reserved example address; the key is 37 lowercase hex characters.
    for seed in range(5):
        account = Workbench(seed=seed).account
        assert account.email == "user@example.com"
        assert re.fullmatch(r"[0-9a-f]{37}", account.api_key), account.api_key
        assert re.fullmatch(r"[A-Za-z0-9_-]{40}", account.tokens[0].value)


def _zones(count):
    wb = Workbench(seed=0)
    for i in range(count):
        wb.create_zone(f"z{i}.example")
    return wb


def test_zones_list_defaults_to_20_and_takes_at_most_50():
    wb = _zones(60)
    first = wb.list_zones()
    assert len(first.items) == 20
    assert first.result_info == {
        "page": 1,
        "per_page": 20,
        "count": 20,
        "total_count": 60,
        "total_pages": 3,
    }
    assert len(wb.list_zones(per_page=50).items) == 50
    assert len(wb.list_zones(per_page="5").items) == 5
    for bad in (51, 4):
        with pytest.raises(ValidationError, match=r"per_page must be between 5 and 50"):
            wb.list_zones(per_page=bad)
