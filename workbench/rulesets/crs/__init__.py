"""The OWASP Core Rule Set as the workbench runs it: parsed from SecLang, evaluated rule by rule.

Modules: :mod:`.request` (the request as sent), :mod:`.oracle` (libmodsecurity
running the real CRS, for tests and benchmarks).
"""
