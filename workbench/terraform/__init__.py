"""Terraform for a migrated zone: the ``cloudflare_ruleset`` resource, its import, the clean-up.

:func:`generate` writes the resource in provider 4 or 5 syntax, the import
commands (or ``import`` block) and, given the old state and ``.tf`` files, the
steps that drop the old ``cloudflare_waf_*`` resources; the details are in
:mod:`workbench.terraform._generate`. :func:`fetch_entrypoint` reads the entry
point from a running API; :func:`old_resources` writes the old provider 3.x
resources of a zone's previous WAF.

    >>> entrypoint = {"id": "e1", "name": "zone", "phase": "http_request_firewall_managed",
    ...     "rules": [{"action": "execute", "expression": "true", "enabled": True,
    ...                "action_parameters": {"id": "rs1"}}]}
    >>> generate(entrypoint, "z1").commands[-1]
    'terraform import cloudflare_ruleset.terraform_managed_resource_e1 zones/z1/e1'
"""

from ._api import EntrypointError, fetch_entrypoint
from ._generate import (
    RESOURCE_TYPE,
    TerraformResult,
    generate,
    import_id,
    resource_address,
    ruleset_hcl,
)
from ._old import old_resources
from ._state import read_state, tf_resources

EntrypointError.__module__ = __name__

__all__ = [
    "RESOURCE_TYPE",
    "EntrypointError",
    "TerraformResult",
    "fetch_entrypoint",
    "generate",
    "import_id",
    "old_resources",
    "read_state",
    "resource_address",
    "ruleset_hcl",
    "tf_resources",
]
