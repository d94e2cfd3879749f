"""The OWASP Core Rule Set as the workbench runs it: parsed from SecLang, interpreted rule by rule.

* :mod:`.request`: the request as sent (:class:`~.request.RawRequest`);
* :mod:`.seclang`: the SecLang parser;
* :mod:`.variables`, :mod:`.transforms`, :mod:`.operators`, :mod:`.rx`: ModSecurity's
  collections, transformations and operators, as libmodsecurity 3.0.15 runs them;
* :mod:`.interpreter`: a program of rules run on one request; :mod:`.runtime`: the
  catalogue's program, the field ``cf.waf.crs.rules`` and :class:`~.runtime.CrsEngine`;
* the CRS files into the catalogue, libmodsecurity as the reference, the requests the two
  are compared on and the figures live outside the package, in ``tools/crs_reference``.

    >>> from workbench.rulesets.crs.seclang import parse
    >>> parse('SecMarker "END"')[0].name
    'END'
"""
