"""The Core Rule Set as the reference the OWASP rulesets are built from and measured against.

Not part of the installed package: the tests, the catalogue builders in ``tools/`` and
``benchmarks/owasp.py`` use it, the workbench itself never does.

* :mod:`.translate`, :mod:`.translate_crs2`, :mod:`.source_crs2`: the CRS 3.3.4 and 2.2.9
  files into the committed catalogues (``tools/build_owasp_catalog.py``,
  ``tools/build_old_owasp_package.py``);
* :mod:`.oracle`, :mod:`.oracle_crs2`: libmodsecurity with the real CRS, as the reference;
* :mod:`.corpus`: the requests the two are compared on (the CRS regression tests, the
  detection tests' payloads, generated traffic);
* :mod:`.agreement`, :mod:`.agreement_crs2`: the figures of the comparison.

    >>> from tools.crs_reference.translate import rule_hex_id
    >>> len(rule_hex_id(942100))
    32
"""
