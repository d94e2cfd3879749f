"""The Filters API driven by the official SDK against a running server."""

import cloudflare
import pytest


def make_filters(sdk, zone, n, **extra):
    body = [
        {"expression": f'http.request.uri.path eq "/p{i}"', "description": f"page {i}", **extra}
        for i in range(n)
    ]
    return list(sdk.filters.create(zone_id=zone, body=body))


def test_create_get_update_delete(sdk, zones):
    zone = zones["free"]
    [made] = make_filters(sdk, zone, 1, ref="R1")
    assert made.expression == 'http.request.uri.path eq "/p0"' and made.paused is False
    assert made.ref == "R1" and len(made.id) == 32
    got = sdk.filters.get(made.id, zone_id=zone)
    assert got.description == "page 0"
    updated = sdk.filters.update(
        made.id, zone_id=zone, expression='http.host eq "a.example"', paused=True
    )
    assert (updated.expression, updated.paused, updated.description) == (
        'http.host eq "a.example"',
        True,
        "page 0",
    )
    deleted = sdk.filters.delete(made.id, zone_id=zone)
    assert deleted.id == made.id
    with pytest.raises(cloudflare.NotFoundError):
        sdk.filters.get(made.id, zone_id=zone)


def test_list_with_automatic_pagination_and_query(sdk, zones):
    zone = zones["pro"]
    made = make_filters(sdk, zone, 12)
    seen = [f.id for f in sdk.filters.list(zone_id=zone, per_page=5)]
    assert seen == [f.id for f in made]
    page = sdk.filters.list(zone_id=zone, per_page=5, page=3)
    assert len(page.result) == 2 and page.result_info.total_count == 12
    assert [f.description for f in sdk.filters.list(zone_id=zone, description="PAGE 1")] == [
        "page 1",
        "page 10",
        "page 11",
    ]
    assert list(sdk.filters.list(zone_id=zone, paused=True)) == []


def test_duplicate_expression_is_400_with_existing_id(sdk, zones):
    zone = zones["free"]
    [made] = make_filters(sdk, zone, 1)
    with pytest.raises(cloudflare.BadRequestError) as info:
        sdk.filters.create(zone_id=zone, body=[{"expression": made.expression}])
    body = info.value.body
    assert body["success"] is False and body["result"] is None
    assert body["errors"][0] == {
        "code": 10102,
        "message": "config duplicates an already existing config",
        "meta": {"id": made.id},
    }


def test_parse_error_carries_engine_message(sdk, zones):
    with pytest.raises(cloudflare.BadRequestError) as info:
        sdk.filters.create(
            zone_id=zones["free"],
            body=[{"expression": "ssl"}, {"expression": 'http.host eq "a" or'}],
        )
    [error] = info.value.body["errors"]
    assert error["message"].startswith("Filter parsing error (1:")
    assert error["source"] == {"pointer": "/1/expression"}
    assert list(sdk.filters.list(zone_id=zones["free"])) == []  # one transaction


def test_bulk_update_and_bulk_delete(sdk, zones):
    zone = zones["free"]
    a, b, c = make_filters(sdk, zone, 3)
    out = sdk.filters.bulk_update(
        zone_id=zone, body=[{"id": a.id, "paused": True}, {"id": b.id, "ref": "x"}]
    )
    assert [(f.paused, f.ref) for f in out] == [(True, None), (False, "x")]
    gone = sdk.filters.bulk_delete(zone_id=zone, id=[a.id, b.id, "0" * 32])
    assert sorted(f.id for f in gone) == sorted([a.id, b.id])
    assert [f.id for f in sdk.filters.list(zone_id=zone)] == [c.id]
