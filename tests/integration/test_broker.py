"""The message broker bulk loads go through (ADR 0037): the same semantics
from the embedded SQLite queue and from a real Redis server."""

from __future__ import annotations

import re
import threading
import time

import pytest

from chunklab.errors import Unavailable
from services.chunker.broker import EmbeddedBroker, RedisBroker
from tests.support.redis_server import RedisServer, free_port


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture(params=["embedded", "redis"])
def broker(request, tmp_path, redis_server):
    if request.param == "embedded":
        made = EmbeddedBroker(tmp_path / "queue.sqlite3")
    else:
        made = RedisBroker(redis_server.url)
        made._redis.flushdb()
    yield made
    made.close()


def test_jobs_come_out_once_each_in_order_and_results_stay_with_their_batch(broker):
    broker.submit("batch-a", [b"job 1", b"job 2"])
    broker.submit("batch-b", [b"job 3"])
    assert broker.batch("batch-a").jobs_total == 2 and broker.batch("batch-b").jobs_total == 1
    assert broker.batch("nope") is None
    assert broker.queued() == 3
    broker.cancel("batch-b")
    assert broker.batch("batch-b").cancelled and not broker.batch("batch-a").cancelled
    assert [batch_id for batch_id, _ in broker.recent_batches(10)] == ["batch-b", "batch-a"]
    assert [(i, b.jobs_total) for i, b in broker.recent_batches(1)] == [("batch-b", 1)]
    taken = []
    while (delivery := broker.receive("worker-1", lease_s=30, wait_s=0.1)) is not None:
        assert delivery.deliveries == 1
        taken.append(delivery.payload)
        broker.put_result("batch-a" if delivery.payload != b"job 3" else "batch-b", b"done " + delivery.payload)
        broker.ack(delivery)
    assert taken == [b"job 1", b"job 2", b"job 3"]
    assert broker.queued() == 0
    assert broker.results("batch-a") == [b"done job 1", b"done job 2"]
    assert broker.results("batch-b") == [b"done job 3"]
    assert broker.receive("worker-1", lease_s=30, wait_s=0.1) is None


# Short leases, renewed four times as often: a renewal late on a loaded machine still keeps its job.
LEASE_S = 1.5


def renewed_until_one_comes_back(broker, live) -> object:
    """Worker-1 renews `live` (the jobs it still works on) while worker-2 asks, until
    worker-2 receives a job whose lease ran out."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for delivery in live:
            broker.renew(delivery, "worker-1", LEASE_S)
        again = broker.receive("worker-2", lease_s=LEASE_S, wait_s=LEASE_S / 4)
        if again is not None:
            return again
    pytest.fail("no job came back to worker-2")


def test_a_job_whose_worker_stopped_is_delivered_again_and_a_renewed_one_is_not(broker):
    broker.submit("batch", [b"abandoned", b"kept"])
    abandoned = broker.receive("worker-1", lease_s=LEASE_S, wait_s=1)
    kept = broker.receive("worker-1", lease_s=LEASE_S, wait_s=1)
    assert (abandoned.payload, kept.payload) == (b"abandoned", b"kept")
    assert broker.receive("worker-2", lease_s=LEASE_S, wait_s=0.1) is None  # both leased
    again = renewed_until_one_comes_back(broker, [kept])  # worker-1 keeps working on "kept" only
    assert again.payload == b"abandoned" and again.deliveries == 2
    broker.renew(kept, "worker-1", LEASE_S)
    assert broker.receive("worker-2", lease_s=LEASE_S, wait_s=0.1) is None  # "kept" is still worker-1's
    broker.ack(again)
    broker.ack(kept)
    assert broker.queued() == 0


def test_workers_racing_for_jobs_never_share_one(broker):
    payloads = [f"job {i}".encode() for i in range(40)]
    broker.submit("race", payloads)
    taken: list[bytes] = []
    lock = threading.Lock()

    def work(name: str) -> None:
        while (delivery := broker.receive(name, lease_s=30, wait_s=0.3)) is not None:
            with lock:
                taken.append(delivery.payload)
            broker.ack(delivery)

    threads = [threading.Thread(target=work, args=(f"worker-{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(taken) == sorted(payloads)  # every job once, none twice
    assert broker.queued() == 0


def test_an_unreachable_redis_is_unavailable_with_where_it_was_looked_for():
    broker = RedisBroker(f"redis://127.0.0.1:{free_port()}/0")
    with pytest.raises(Unavailable) as caught:
        broker.receive("worker", lease_s=10, wait_s=0.1)
    assert (
        f"Redis at 127.0.0.1:{broker._redis.connection_pool.connection_kwargs['port']}/0) is unreachable or too "
        "slow (incident " in caught.value.message
    )
    assert "Connection refused" not in caught.value.message and "Errno" not in caught.value.message
    with pytest.raises(Unavailable):
        broker.submit("batch", [b"job"])


def test_an_abandoned_job_behind_many_live_ones_is_still_found(broker):
    broker.submit("deep", [f"job {i}".encode() for i in range(15)])
    held = [broker.receive("worker-1", lease_s=LEASE_S, wait_s=1) for _ in range(15)]
    live, abandoned = held[:14], held[14]
    again = renewed_until_one_comes_back(broker, live)
    assert again is not None and again.payload == abandoned.payload == b"job 14" and again.deliveries == 2


def test_a_redis_that_lost_its_data_is_set_up_again(redis_server, caplog):
    broker = RedisBroker(redis_server.url)
    broker._redis.flushdb()
    broker.submit("before", [b"job"])
    broker._redis.flushall()  # a restart without persistence: the stream and its group are gone
    with pytest.raises(Unavailable) as caught, caplog.at_level("ERROR", logger="services.chunker.broker"):
        broker.receive("worker", lease_s=10, wait_s=0.1)
    assert "lost its queue (Redis restarted without its data" in caught.value.message
    incident = re.search(r"\(incident ([0-9a-f]{12})\)", caught.value.message).group(1)
    assert "NOGROUP" not in caught.value.message  # Redis's own words stay in the log, under the incident
    assert f"(incident {incident})" in caplog.text and "NOGROUP" in caplog.text
    broker.submit("after", [b"new job"])
    assert broker.receive("worker", lease_s=10, wait_s=1).payload == b"new job"
    broker.close()


def test_a_job_given_back_by_a_stopping_worker_goes_out_at_once_uncounted(broker):
    broker.submit("batch", [b"job"])
    held = broker.receive("worker-1", lease_s=30, wait_s=1)
    broker.release(held, "worker-2")  # not worker-2's to give back
    assert broker.receive("worker-2", lease_s=30, wait_s=0.1) is None
    broker.release(held, "worker-1")
    again = broker.receive("worker-2", lease_s=30, wait_s=1)
    assert again.payload == b"job" and again.deliveries == 1
    broker.ack(again)
    assert broker.queued() == 0
