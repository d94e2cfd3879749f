"""Errors in the engine's form, limits, and never a crash."""

import pytest

from workbench.rules_language import ExpressionError, compile_expression


def test_error_is_a_value_error_with_position():
    with pytest.raises(ValueError) as info:
        compile_expression('http.host eq "a" and\n  http.hostx eq "b"')
    err = info.value
    assert isinstance(err, ExpressionError)
    assert (err.line, err.column) == (2, 3)
    assert str(err) == (
        'Filter parsing error (2:3):\n  http.hostx eq "b"\n  ^^^^^^^^^^ unknown identifier\n'
    )


def test_columns_count_utf8_bytes():
    with pytest.raises(ExpressionError) as info:
        compile_expression('http.host eq "éé" foo')
    # "éé" is 4 bytes, so the trailing input starts at byte 20, not character 18.
    assert info.value.column == 20
    assert str(info.value).splitlines()[2] == " " * 19 + "^^^^ unrecognised input"


def test_expression_length_limit_is_4096_characters():
    long_ok = "http.host in {" + " ".join(f'"h{i}"' for i in range(500)) + "}"
    assert len(long_ok) <= 4096
    compile_expression(long_ok)
    too_long = 'http.host eq "' + "a" * 4090 + '"'
    with pytest.raises(ExpressionError, match="limit is 4096"):
        compile_expression(too_long)


@pytest.mark.parametrize(
    "source",
    [
        "(" * 3000 + "ssl" + ")" * 3000,
        "not " * 1000 + "ssl",
        "lower(" * 600 + "http.host" + ")" * 600 + ' eq "a"',
        "!" * 4000,
        "any(" * 900,
    ],
)
def test_deep_input_raises_the_language_error_not_recursion(source):
    with pytest.raises(ExpressionError) as info:
        compile_expression(source[:4096])
    assert "maximum nesting depth exceeded (limit: 128)" in str(info.value) or info.value.reason


def test_depth_128_is_allowed_and_129_is_not():
    compile_expression("(" * 128 + "ssl" + ")" * 128)
    with pytest.raises(ExpressionError, match=r"limit: 128"):
        compile_expression("(" * 129 + "ssl" + ")" * 129)


def test_bad_regex_errors_use_the_regex_crate_form():
    with pytest.raises(ExpressionError) as info:
        compile_expression('http.request.uri.path matches "a(?=b)"')
    assert "look-around, including look-ahead and look-behind, is not supported" in str(info.value)
    with pytest.raises(ExpressionError, match="backreferences are not supported"):
        compile_expression(r'http.request.uri.path matches "(a)\1"')


def test_bad_cidr_and_unterminated_string():
    with pytest.raises(ExpressionError, match="host part of address was not zero"):
        compile_expression("ip.src in {10.0.0.1/8}")
    with pytest.raises(ExpressionError, match="could not find an ending quote"):
        compile_expression('http.host eq "abc')


def test_type_errors():
    with pytest.raises(ExpressionError, match="cannot perform this operation on type Int"):
        compile_expression('cf.waf.score contains "1"')
    with pytest.raises(ExpressionError, match="expected value of type Bool, but got Array<Bool>"):
        compile_expression('http.request.headers.names[*] eq "a"')


def test_non_string_input_is_a_type_error():
    with pytest.raises(TypeError):
        compile_expression(None)


def test_magic_firewall_scheme_is_separate():
    compile_expression("tcp.dstport in {22 80..90}", scheme="magic_firewall")
    with pytest.raises(ExpressionError, match="unknown identifier"):
        compile_expression("tcp.dstport eq 22")
