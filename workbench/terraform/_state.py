"""Finding the old WAF resources in a Terraform state and in ``.tf`` files.

The provider supported ``cloudflare_waf_package``, ``cloudflare_waf_group``,
``cloudflare_waf_rule`` and ``cloudflare_waf_override`` up to 3.35 and v4
removed them. After the migration, the first three must leave the state
(``terraform state rm``) and the configuration; an override must be destroyed
*before* migrating, since a zone that has one cannot migrate.

A state is either ``terraform show -json`` output or a raw ``.tfstate``
(format 4); addresses come out as ``terraform state list`` prints them:

    >>> raw = {"version": 4, "resources": [
    ...     {"mode": "managed", "type": "cloudflare_waf_rule", "name": "r",
    ...      "instances": [{"index_key": "100015"}, {"index_key": "100016"}]},
    ...     {"module": "module.waf", "mode": "managed", "type": "cloudflare_waf_package",
    ...      "name": "owasp", "instances": [{}]}]}
    >>> [address for address, _ in state_resources(raw)]
    ['cloudflare_waf_rule.r["100015"]', 'cloudflare_waf_rule.r["100016"]', 'module.waf.cloudflare_waf_package.owasp']
    >>> cleanup_steps(['cloudflare_waf_group.wp', 'cloudflare_waf_rule.r["1"]'])[1]
    'terraform state rm -dry-run cloudflare_waf_group.wp \\'cloudflare_waf_rule.r["1"]\\''
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ._hcl import hcl_value

#: Types the state must drop after the migration (the list `state rm` takes).
STATE_TYPES = ("cloudflare_waf_package", "cloudflare_waf_group", "cloudflare_waf_rule")
#: Every old WAF type; an override also blocks the migration itself.
OLD_TYPES = (*STATE_TYPES, "cloudflare_waf_override")
OVERRIDE_TYPE = "cloudflare_waf_override"
LIST_COMMAND = r"terraform state list | grep -E '^cloudflare_waf_(package|group|rule)\.'"
PLAN_COMMAND = 'terraform plan  # expect "No changes"'


def _index(key: Any) -> str:
    if key is None:
        return ""
    if isinstance(key, int) and not isinstance(key, bool):
        return f"[{key}]"
    # Terraform prints a string key quoted, with Go-style escapes (JSON's here).
    return f"[{json.dumps(str(key), ensure_ascii=False)}]"


def _show_json_resources(module: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for res in module.get("resources") or []:
        if res.get("mode", "managed") != "managed":
            continue
        address = res.get("address") or f"{res['type']}.{res['name']}{_index(res.get('index'))}"
        yield address, res["type"]
    for child in module.get("child_modules") or []:
        yield from _show_json_resources(child)


def state_resources(state: dict[str, Any]) -> list[tuple[str, str]]:
    """``(address, type)`` of every managed resource instance, in state order."""
    if not isinstance(state, dict):
        raise ValueError("a Terraform state is a JSON object")
    if "values" not in state and isinstance(state.get("prior_state"), dict):
        state = state["prior_state"]  # `terraform show -json` of a saved plan
    if isinstance(state.get("values"), dict):
        return list(_show_json_resources(state["values"].get("root_module") or {}))
    found: list[tuple[str, str]] = []
    for res in state.get("resources") or []:
        if res.get("mode", "managed") != "managed":
            continue
        prefix = f"{res['module']}." if res.get("module") else ""
        base = f"{prefix}{res['type']}.{res['name']}"
        # A resource with count = 0 has no instance, and `state list` shows nothing.
        for inst in res.get("instances") or []:
            found.append((base + _index(inst.get("index_key")), res["type"]))
    return found


def read_state(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A state file's JSON; ``ValueError`` naming the file when it is not one."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read the state file {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"the state file {path} does not hold a JSON object")
    return data


def _label(raw: Any) -> str:
    return str(hcl_value(raw))


def tf_resources(text: str) -> list[tuple[str, str]]:
    """``(address, type)`` of the ``resource`` blocks of one ``.tf`` text (root module)."""
    import hcl2  # the parser loads only when .tf files are checked

    found: list[tuple[str, str]] = []
    for entry in hcl2.loads(text).get("resource") or []:
        for rtype, named in entry.items():
            if rtype.startswith("__") or not isinstance(named, dict):
                continue
            for name in named:
                if not name.startswith("__"):  # python-hcl2's own markers
                    found.append((f"{_label(rtype)}.{_label(name)}", _label(rtype)))
    return found


def tf_inputs(
    sources: Sequence[str | os.PathLike[str]],
) -> Iterator[tuple[str, str | None, str | None]]:
    """``(name, text, problem)`` for each ``.tf`` file of ``sources``.

    An item is a ``.tf`` file, a folder (its ``*.tf`` files, not sub-folders,
    as Terraform reads a module) or, when it holds a ``{``, HCL text itself.
    """
    for n, source in enumerate(sources, 1):
        if isinstance(source, str) and ("{" in source or "\n" in source):
            yield f"<tf source {n}>", source, None
            continue
        path = Path(source)
        files = sorted(path.glob("*.tf")) if path.is_dir() else [path]
        if path.is_dir() and not files:
            yield str(source), None, "the folder holds no .tf file"
        for file in files:
            try:
                yield str(file), file.read_text(encoding="utf-8"), None
            except (OSError, UnicodeDecodeError) as exc:
                yield str(file), None, f"cannot be read ({exc})"


def _removed(address: str, rtype: str, where: str) -> str:
    return (
        f"{address} ({where}): {rtype} was removed in provider v4 (supported up to 3.35); "
        "use cloudflare_ruleset instead"
    )


def _override(address: str, where: str) -> str:
    return (
        f"{address} ({where}): destroy this URI-based WAF override before migrating "
        f"(terraform destroy -target={shlex.quote(address)}): it makes the zone ineligible "
        "for the migration"
    )


def old_resource_warnings(found: list[tuple[str, str]], where: str) -> list[str]:
    """The messages for the old WAF resources among ``found``, seen in ``where``."""
    out: list[str] = []
    for address, rtype in found:
        if rtype in OLD_TYPES:
            out.append(_removed(address, rtype, where))
        if rtype == OVERRIDE_TYPE:
            out.append(_override(address, where))
    return out


def tf_warnings(sources: Sequence[str | os.PathLike[str]]) -> list[str]:
    """Warnings for the old resources in ``.tf`` files, and for files that do not parse."""
    out: list[str] = []
    for name, text, problem in tf_inputs(sources):
        if text is None:
            out.append(f"{name}: {problem}; its resources were not checked")
            continue
        try:
            found = tf_resources(text)
        except Exception as exc:  # lark raises many types; one bad file is a note, not a crash
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            out.append(f"{name}: does not parse as HCL ({first}); its resources were not checked")
            continue
        out.extend(old_resource_warnings(found, f"in {name}"))
    return out


def cleanup_steps(addresses: list[str]) -> list[str]:
    """The five state clean-up steps for ``addresses``; none when there is nothing to remove."""
    if not addresses:
        return []
    quoted = " ".join(shlex.quote(a) for a in addresses)
    return [
        LIST_COMMAND,
        f"terraform state rm -dry-run {quoted}",
        f"terraform state rm {quoted}",
        "Delete the resource blocks of " + ", ".join(addresses) + " from the .tf files "
        "(after `state rm`, so Terraform neither destroys them nor creates them again)",
        PLAN_COMMAND,
    ]
