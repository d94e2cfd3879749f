"""The panels' tabs (issue 28, item 3): toggle buttons over a Stack, never ``ipywidgets.Tab``.

After a browser reload JupyterLab restores a Tab whose Lumino tab bar may ignore every
click (tests/browser/test_browser_reload.py reloads and clicks). ``parts.Tabs`` listens
to clicks like a button does. Headless, a click is the bar's value set, as the browser
sets it; the page shown, the panel's ``selected_index`` and its observers follow.
"""

from __future__ import annotations

import ipywidgets as W
import pytest
import traitlets

from workbench import Workbench
from workbench.logs import EventLog, add_synthetic_events
from workbench.storage import DurableObject, Runtime
from workbench.widgets import EventsExplorer, MigrationWizard, StorageInspector
from workbench.widgets import events_explorer as ee
from workbench.widgets.parts import Tabs


class Notes(DurableObject):
    async def fetch(self, request):
        await self.ctx.storage.put(request, len(request))


def storage_panel() -> StorageInspector:
    rt = Runtime()
    ns = rt.namespace(Notes)
    rt.run(ns.get(ns.id_from_name("notes")).fetch("apple"))
    return StorageInspector(rt)


def events_panel() -> EventsExplorer:
    log = EventLog()
    add_synthetic_events(log, 30, seed=1)
    return EventsExplorer(log)


def wizard_panel() -> MigrationWizard:
    wb = Workbench(seed=0)
    return MigrationWizard(wb, wb.create_zone("shop.example", plan="business").id)


def walk(widget):
    yield widget
    for child in getattr(widget, "children", ()):
        yield from walk(child)


@pytest.mark.parametrize(
    ("make", "titles"),
    [
        (storage_panel, ("KV", "SQL", "Alarm", "Bookmarks", "Billing")),
        (events_panel, ("Results", "Charts", "Old vs new", "Your traffic")),
        (wizard_panel, ("Migration", "Terraform")),
    ],
)
def test_panels_use_tabs_that_survive_a_reload(make, titles):
    panel = make()
    assert not [w for w in walk(panel) if isinstance(w, W.Tab)]  # no Lumino tab bar anywhere
    tabs = panel.tabs
    assert isinstance(tabs, Tabs) and tabs.titles == titles
    assert "wb-tabs" in tabs._dom_classes and "wb-tabs-bar" in tabs.bar._dom_classes
    for index in reversed(range(len(titles))):
        tabs.bar.value = index  # a click on the tab's button
        assert tabs.selected_index == tabs.stack.selected_index == index
        assert tabs.stack.children[index] is tabs.pages[index]


def test_a_click_on_a_tab_draws_what_it_shows():
    panel = storage_panel()
    assert panel.timeline_html.value == ""
    panel.tabs.bar.value = 3  # Bookmarks, clicked
    assert "<svg" in panel.timeline_html.value
    explorer = events_panel()
    explorer.tabs.bar.value = ee.COMPARE_TAB
    assert "each rule in both" in explorer.compare.value
    explorer.run_query_button.click()  # a query shows its rows: back on Results
    assert explorer.tabs.bar.value == ee.RESULTS_TAB == explorer.tabs.stack.selected_index


def test_tabs_refuse_what_they_cannot_show():
    with pytest.raises(ValueError, match="2 pages but 1 titles"):
        Tabs([W.HTML(), W.HTML()], ["one"])
    tabs = Tabs([W.HTML(), W.HTML()], ["one", "two"])
    with pytest.raises(traitlets.TraitError, match="no tab 2: there are 2"):
        tabs.selected_index = 2
    assert tabs.selected_index == 0
    tabs.set_title(1, "second")
    assert tabs.titles == ("one", "second") and tabs.selected_index == 0
