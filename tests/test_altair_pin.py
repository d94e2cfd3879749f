"""The charting library's pin, ``altair>=5.4,<6`` (docs/decisions.md, Panels).

Altair 6 would write the Vega-Lite v6 mime type, which nbformat's schema and
JupyterLab's bundled vega5 extension do not take; these tests fail if the pin
is loosened or the environment holds an Altair that emits another version.
"""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def _altair_requirement() -> Requirement:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    found = [Requirement(d) for d in project["dependencies"] if Requirement(d).name == "altair"]
    assert len(found) == 1, "altair must be a runtime dependency, declared once"
    return found[0]


def test_pyproject_pins_altair_below_6():
    spec = _altair_requirement().specifier
    assert not spec.contains("6.0.0") and not spec.contains("6.1.0", prereleases=True)
    assert not spec.contains("6.0.0rc1", prereleases=True)
    assert spec.contains("5.4.0") and spec.contains("5.5.0")


def test_installed_altair_is_within_the_pin_and_emits_vega_lite_5():
    import altair as alt

    installed = version("altair")
    assert _altair_requirement().specifier.contains(installed), installed
    chart = alt.Chart(alt.Data(values=[{"x": 1}])).mark_point().encode(x="x:Q")
    assert "/vega-lite/v5" in chart.to_dict()["$schema"]
    # The output notebooks save under alt.renderers.enable("mimetype").
    with alt.renderers.enable("mimetype"):
        data, _metadata = chart._repr_mimebundle_()
    assert "application/vnd.vegalite.v5+json" in data
