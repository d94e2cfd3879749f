"""Shared request samples for the Rules-language tests (path helpers live in regex_paths.py)."""

import sys
from pathlib import Path

import duckdb
import pytest

from workbench.rules_language import get_scheme
from workbench.rules_language.table import requests_table

# The helper modules beside the tests import by name, as in tests/traffic.
sys.path.insert(0, str(Path(__file__).parent))

SAMPLES = [
    {
        "http.host": "www.example.com",
        "http.request.method": "POST",
        "http.request.uri.path": "/admin/login.php",
        "http.request.uri.query": "id=1%20UNION%20SELECT",
        "http.request.full_uri": "https://www.example.com/admin/login.php?id=1",
        "http.user_agent": "Mozilla/5.0 (X11; Linux x86_64)",
        "http.cookie": "session=0123456789abcdef0123456789abcdef",
        "http.referer": "https://é.example/",
        "ip.src": "192.0.2.10",
        "ip.src.country": "US",
        "ip.src.asnum": 64500,
        "cf.waf.score": 15,
        "cf.edge.server_port": 443,
        "ssl": True,
        "cf.client.bot": False,
        "http.request.headers": {"accept": ["application/json"], "x-api-key": ["k1", "k2"]},
        "http.request.headers.names": ["Accept", "X-Api-Key"],
        "http.request.cookies": {"session": ["0123456789abcdef0123456789abcdef"]},
        "http.request.body.raw": '{"user": {"name": "ann"}, "n": 3}',
        "cf.bot_management.detection_ids": [1, 5],
    },
    {
        "http.host": "API.example.org",
        "http.request.method": "GET",
        "http.request.uri.path": "/é/café",
        "http.request.uri.query": "",
        "http.user_agent": "",
        "ip.src": "2001:db8::1",
        "ip.src.country": "DE",
        "cf.waf.score": 80,
        "cf.edge.server_port": 8080,
        "ssl": False,
        "cf.client.bot": True,
        "http.request.headers": {},
        "http.request.headers.names": [],
    },
    {},
]


@pytest.fixture(scope="session")
def samples():
    return SAMPLES


@pytest.fixture(scope="module")
def sample_table():
    con = duckdb.connect()
    requests_table(con, SAMPLES, name="samples", fields=list(get_scheme("http").fields))
    return con
