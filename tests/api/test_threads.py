"""Eight client threads creating rules at once against a running server."""

import threading

import httpx


def test_eight_threads_never_exceed_the_quota_and_lose_no_rule(wb, base_url, zones):
    zone = zones["pro"]  # quota: 20 active rules
    headers = {"X-Auth-Email": wb.account.email, "X-Auth-Key": wb.account.api_key}
    shared = httpx.post(
        f"{base_url}/zones/{zone}/filters", headers=headers, json=[{"expression": "ssl"}]
    )
    filter_id = shared.json()["result"][0]["id"]
    created, refused, other = [], [], []
    barrier = threading.Barrier(8)

    def worker(n):
        with httpx.Client(base_url=base_url, headers=headers, timeout=30) as client:
            barrier.wait()
            for i in range(6):
                r = client.post(
                    f"/zones/{zone}/firewall/rules",
                    json=[
                        {"filter": {"id": filter_id}, "action": "block", "description": f"t{n}-{i}"}
                    ],
                )
                body = r.json()
                if r.status_code == 200:
                    created.append(body["result"][0]["id"])
                elif r.status_code == 400 and body["errors"][0]["code"] == 10200:
                    refused.append(n)
                else:
                    other.append((r.status_code, body))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert other == []
    assert len(created) == 20 and len(refused) == 48 - 20
    listed = httpx.get(
        f"{base_url}/zones/{zone}/firewall/rules", headers=headers, params={"per_page": 100}
    ).json()
    assert sorted(r["id"] for r in listed["result"]) == sorted(created)
    assert listed["result_info"]["total_count"] == 20
