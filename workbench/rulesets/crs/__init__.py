"""The OWASP Core Rule Set as the workbench runs it: parsed from SecLang, interpreted rule by rule.

* :mod:`.request`: the request as sent (:class:`~.request.RawRequest`);
* :mod:`.seclang`: the SecLang parser; :mod:`.translate`: CRS files into the catalogue;
* :mod:`.variables`, :mod:`.transforms`, :mod:`.operators`, :mod:`.rx`: ModSecurity's
  collections, transformations and operators, as libmodsecurity 3.0.15 runs them;
* :mod:`.interpreter`: a program of rules run on one request; :mod:`.runtime`: the
  catalogue's program, the field ``cf.waf.crs.rules`` and :class:`~.runtime.CrsEngine`;
* :mod:`.oracle`, :mod:`.corpus`, :mod:`.agreement`: libmodsecurity with the real CRS,
  the requests the two are compared on, and the figures of the comparison.

    >>> from workbench.rulesets.crs.seclang import parse
    >>> parse('SecMarker "END"')[0].name
    'END'
"""
