"""Filters: create, list, update, delete, duplicates, transactions."""

import pytest

from workbench import Workbench
from workbench.core.errors import Conflict, NotFound, ValidationError

ADMIN = 'http.request.uri.path contains "/admin"'
LOGIN = 'http.request.uri.path eq "/login"'


@pytest.fixture
def wb():
    return Workbench(seed=0)


@pytest.fixture
def zone(wb):
    return wb.create_zone("example.com", plan="free")


def test_create_shows_only_given_fields(wb, zone):
    a, b = wb.firewall.create_filters(
        zone.id, [{"expression": ADMIN}, {"expression": LOGIN, "description": "Login", "ref": "L1"}]
    )
    assert a.to_dict() == {"id": a.id, "expression": ADMIN, "paused": False}
    assert b.to_dict() == {
        "id": b.id,
        "expression": LOGIN,
        "paused": False,
        "description": "Login",
        "ref": "L1",
    }
    assert len(a.id) == 32 and a.id != b.id


def test_same_seed_gives_same_ids():
    ids = []
    for _ in range(2):
        wb = Workbench(seed=5)
        z = wb.create_zone("example.com")
        ids.append([f.id for f in wb.firewall.create_filters(z.id, [{"expression": ADMIN}])])
    assert ids[0] == ids[1]


def test_one_bad_item_creates_nothing(wb, zone):
    with pytest.raises(ValidationError) as info:
        wb.firewall.create_filters(
            zone.id, [{"expression": ADMIN}, {"expression": "http.request.uri.path contains"}]
        )
    assert str(info.value).startswith("Filter parsing error (1:")
    assert info.value.to_error()["source"] == {"pointer": "/1/expression"}
    assert wb.firewall.list_filters(zone.id).items == []


@pytest.mark.parametrize(
    "body, fragment",
    [
        ({}, "/0/expression: is required"),
        ({"expression": 7}, "must be a string"),
        ({"expression": "  "}, "empty"),
        ({"expression": ADMIN, "paused": "yes"}, "true or false"),
        ({"expression": ADMIN, "description": "x" * 501}, "limit is 500"),
        ({"expression": ADMIN, "ref": "r" * 51}, "limit is 50"),
        ({"expression": 'http.host eq "' + "a" * 4100 + '"'}, "limit is 4096"),
    ],
)
def test_invalid_filter_fields(wb, zone, body, fragment):
    with pytest.raises(ValidationError, match=fragment):
        wb.firewall.create_filters(zone.id, [body])


@pytest.mark.parametrize("body", [{}, [], "x", [1], [{}] * 0, [{"expression": ADMIN}] * 26])
def test_body_must_be_a_small_array_of_objects(wb, zone, body):
    with pytest.raises(ValidationError):
        wb.firewall.create_filters(zone.id, body)


def test_duplicate_expression_is_refused_with_existing_id(wb, zone):
    [first] = wb.firewall.create_filters(zone.id, [{"expression": ADMIN}])
    with pytest.raises(Conflict) as info:
        wb.firewall.create_filters(zone.id, [{"expression": LOGIN}, {"expression": ADMIN}])
    err = info.value.to_error()
    assert err["code"] == 10102
    assert err["message"] == "config duplicates an already existing config"
    assert err["meta"] == {"id": first.id}
    assert [f.id for f in wb.firewall.list_filters(zone.id).items] == [first.id]


def test_duplicate_inside_one_batch_is_refused(wb, zone):
    with pytest.raises(Conflict, match="index 0"):
        wb.firewall.create_filters(zone.id, [{"expression": ADMIN}, {"expression": ADMIN}])


def test_same_expression_in_another_zone_is_fine(wb, zone):
    other = wb.create_zone("other.example")
    wb.firewall.create_filters(zone.id, [{"expression": ADMIN}])
    assert wb.firewall.create_filters(other.id, [{"expression": ADMIN}])


def test_list_query_and_pages(wb, zone):
    made = wb.firewall.create_filters(
        zone.id,
        [
            {
                "expression": f'http.request.uri.path eq "/p{i}"',
                "description": f"Page {i}",
                "ref": f"r{i}",
            }
            for i in range(12)
        ],
    )
    fw = wb.firewall
    page = fw.list_filters(zone.id, per_page=5, page=3)
    assert [f.id for f in page.items] == [f.id for f in made[10:]]
    assert page.result_info == {
        "page": 3,
        "per_page": 5,
        "count": 2,
        "total_count": 12,
        "total_pages": 3,
    }
    assert fw.list_filters(zone.id, per_page=5, page=4).items == []
    assert [f.ref for f in fw.list_filters(zone.id, description="PAGE 1").items] == [
        "r1",
        "r10",
        "r11",
    ]
    assert [f.ref for f in fw.list_filters(zone.id, ref="r3").items] == ["r3"]
    assert [f.ref for f in fw.list_filters(zone.id, ref="R3").items] == []
    assert len(fw.list_filters(zone.id, expression='"/P1').items) == 3
    assert fw.list_filters(zone.id, id=made[4].id).items == [made[4]]
    assert fw.list_filters(zone.id, paused=True).items == []
    for bad in ({"per_page": 4}, {"per_page": 101}, {"page": 0}, {"page": "x"}, {"per_page": 5.5}):
        with pytest.raises(ValidationError):
            fw.list_filters(zone.id, **bad)


def test_update_keeps_omitted_fields_and_checks_duplicates(wb, zone):
    a, b = wb.firewall.create_filters(
        zone.id, [{"expression": ADMIN, "description": "admin"}, {"expression": LOGIN}]
    )
    updated = wb.firewall.update_filter(zone.id, a.id, {"paused": True})
    assert updated.to_dict() == {
        "id": a.id,
        "expression": ADMIN,
        "paused": True,
        "description": "admin",
    }
    with pytest.raises(Conflict) as info:
        wb.firewall.update_filter(zone.id, a.id, {"expression": LOGIN})
    assert info.value.to_error()["meta"] == {"id": b.id}
    with pytest.raises(ValidationError, match="does not match"):
        wb.firewall.update_filter(zone.id, a.id, {"id": b.id, "paused": False})
    # Swapping expressions in one batch is allowed: no state has a duplicate.
    wb.firewall.update_filters(
        zone.id, [{"id": a.id, "expression": LOGIN}, {"id": b.id, "expression": ADMIN}]
    )
    assert (wb.firewall.get_filter(zone.id, a.id).expression, b.expression) == (LOGIN, ADMIN)


def test_bulk_update_is_a_transaction(wb, zone):
    [a] = wb.firewall.create_filters(zone.id, [{"expression": ADMIN}])
    with pytest.raises(NotFound):
        wb.firewall.update_filters(
            zone.id, [{"id": a.id, "paused": True}, {"id": "0" * 32, "paused": True}]
        )
    assert a.paused is False
    with pytest.raises(ValidationError):
        wb.firewall.update_filters(zone.id, [{"id": a.id, "expression": "nope eq"}])
    assert a.expression == ADMIN


def test_delete_single_and_bulk(wb, zone):
    a, b, c = wb.firewall.create_filters(
        zone.id, [{"expression": ADMIN}, {"expression": LOGIN}, {"expression": "ssl"}]
    )
    assert wb.firewall.delete_filter(zone.id, a.id) == a.id
    with pytest.raises(NotFound):
        wb.firewall.delete_filter(zone.id, a.id)
    assert wb.firewall.delete_filters(zone.id, [b.id, "f" * 32, b.id]) == [b.id]
    assert wb.firewall.delete_filters(zone.id, []) == []
    assert wb.firewall.list_filters(zone.id).items == [c]
    # A deleted filter's expression can be used again.
    assert wb.firewall.create_filters(zone.id, [{"expression": ADMIN}])


def test_unknown_zone_and_filter(wb, zone):
    with pytest.raises(NotFound) as info:
        wb.firewall.list_filters("0" * 32)
    assert info.value.code == 7003
    with pytest.raises(NotFound) as info:
        wb.firewall.get_filter(zone.id, "0" * 32)
    assert info.value.code == 10101
