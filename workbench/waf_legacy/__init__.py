"""The old WAF managed rules (previous version): packages, groups, rules, overrides.

The service is ``wb.waf_legacy`` (:class:`WafLegacyService`); its plan for
a zone (:meth:`WafLegacyService.plan`) follows the contract of
:mod:`workbench.core.security`, so the pipeline runs it like any other system.

    >>> from workbench import Workbench
    >>> wb = Workbench(seed=0)
    >>> zone = wb.create_zone("example.com", plan="business")
    >>> wb.waf_legacy.get_setting(zone.id).to_dict()["value"], wb.waf_legacy.enabled(zone.id)
    ('on', True)
"""

from ._engine import LegacyPlan
from .catalog import CLOUDFLARE_PACKAGE, OWASP_PACKAGE, Catalog, CatalogError, load_catalog
from .service import WafLegacyService
from .urls import url_pattern_expression

__all__ = [
    "CLOUDFLARE_PACKAGE",
    "OWASP_PACKAGE",
    "Catalog",
    "CatalogError",
    "LegacyPlan",
    "WafLegacyService",
    "load_catalog",
    "url_pattern_expression",
]
