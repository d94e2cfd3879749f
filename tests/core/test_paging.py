"""Paging arguments: ASCII digits only (issue 10), the SDK's floats accepted."""

import pytest

from workbench.core import ValidationError
from workbench.core.paging import page_args


@pytest.mark.parametrize(
    "text", ["1_000", "５", "١", "٥", " 5", "+5", "5 ", "5\n", "0x10", "1e1", "5.5", "five", "²"]
)
def test_only_ascii_digits_are_numbers(text):
    # int() takes several of these ("1_000", "５", "١", " 5", "+5"); the API does not.
    with pytest.raises(ValidationError, match="must be a whole number"):
        page_args(text, None)
    with pytest.raises(ValidationError, match="must be a whole number"):
        page_args(None, text)


def test_floats_as_the_sdk_sends_them_and_plain_numbers():
    assert page_args("2.0", "5.0") == (2, 5)
    assert page_args("3", "100") == (3, 100)
    assert page_args(None, None) == (1, 25)
    assert page_args(4, 10) == (4, 10)


@pytest.mark.parametrize("page, per_page", [("0", "5"), ("1", "4"), ("1", "101"), ("-1", "5")])
def test_ranges(page, per_page):
    with pytest.raises(ValidationError):
        page_args(page, per_page)
