"""A real uvicorn server on 127.0.0.1 per test, and SDK clients pointed at it."""

import cloudflare
import httpx
import pytest

from workbench.api import demo_workbench, serve, stop


@pytest.fixture
def wb():
    return demo_workbench(seed=0)


@pytest.fixture
def base_url(wb):
    url = serve(wb)
    yield url
    stop(wb)


@pytest.fixture
def zones(wb):
    return {z.plan: z.id for z in wb.zones}


@pytest.fixture
def sdk(wb, base_url):
    client = cloudflare.Cloudflare(
        base_url=base_url, api_email=wb.account.email, api_key=wb.account.api_key, max_retries=0
    )
    yield client
    client.close()


@pytest.fixture
def http(wb, base_url):
    headers = {"X-Auth-Email": wb.account.email, "X-Auth-Key": wb.account.api_key}
    with httpx.Client(base_url=base_url, headers=headers, timeout=10) as client:
        yield client


def pytest_configure(config):
    # The SDK marks the Filters and Firewall Rules APIs deprecated; that is the point here.
    config.addinivalue_line("filterwarnings", "ignore:The .* API is deprecated:DeprecationWarning")
