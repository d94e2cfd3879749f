"""The Rules language: the platform's filter expressions, parsed, checked and run.

Two ways to evaluate one expression, which agree on every request: a generated
Python function for one request at a time, and DuckDB SQL for a whole table of
requests.

    >>> from workbench.rules_language import compile_expression
    >>> expr = compile_expression('ip.src in {192.0.2.0/24} and http.request.method eq "POST"')
    >>> expr.matches({"ip.src": "192.0.2.7", "http.request.method": "POST"})
    True
"""

from ._errors import ExpressionError
from ._expression import Expression, compile_expression
from ._scheme import MANAGED, Scheme, get_scheme
from .types import Type

# Tracebacks name the package, which is the interface, not the private module.
ExpressionError.__module__ = __name__

__all__ = [
    "MANAGED",
    "Expression",
    "ExpressionError",
    "Scheme",
    "Type",
    "compile_expression",
    "get_scheme",
]
