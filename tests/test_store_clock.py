"""Due times follow the store's clock: a process whose own clock is an hour off (a fake clock in the process,
the real server's clock) neither fires a timer early nor parks one an hour late; timers and event timeouts
alike."""

from __future__ import annotations

import threading
import time

import pytest
from store_backends import query

from jupyter_sandbox import RunParked, Sandbox

HOUR = 3600.0
TEN_MINUTES_MS = 600_000
HANG = 120  # seconds: only bounds a hang


@pytest.fixture
def skew(monkeypatch):
    """``skew(seconds)``: from now on this process's clock reads ``seconds`` off the real one."""
    real = time.time

    def set_skew(seconds: float) -> None:
        monkeypatch.setattr(time, "time", lambda: real() + seconds)

    return set_skew


def _parked(sb: Sandbox, source: str) -> str:
    with pytest.raises(RunParked) as info:
        sb.eval(source)
    return info.value.run_id


def _server_ms(url: str) -> float:
    return float(query(url, "SELECT extract(epoch from clock_timestamp()) * 1000")[0][0])


def test_a_worker_an_hour_fast_does_not_fire_a_ten_minute_timer(postgres_url, skew):
    run_id = _parked(Sandbox(postgres_url), "await ctx.minutes(10); return 'woke'")
    skew(HOUR)
    worker = Sandbox(postgres_url)
    assert worker.run_due() == []
    assert worker.run(run_id).status == "parked"
    worker.close()


@pytest.mark.parametrize(
    "source",
    ["await ctx.minutes(10); return 1", "return await ctx.waitForEvent({kind: 'go'}, {timeout: 600000})"],
    ids=["timer", "event-timeout"],
)
@pytest.mark.parametrize("seconds", [HOUR, -HOUR])
def test_a_client_whose_clock_is_an_hour_off_parks_a_due_time_on_the_servers_clock(postgres_url, skew, source, seconds):
    skew(seconds)
    client = Sandbox(postgres_url)
    run_id = _parked(client, source)
    wake_at = client.store.get_run(run_id).wake_at
    assert abs(wake_at - (_server_ms(postgres_url) + TEN_MINUTES_MS)) < 60_000  # minutes, not an hour, off
    client.close()


def test_a_timer_parked_by_a_client_an_hour_fast_is_woken_when_due_by_an_honest_worker(postgres_url, skew):
    worker = Sandbox(postgres_url)
    skew(HOUR)
    run_id = _parked(Sandbox(postgres_url), "await ctx.sleep(1500); return 'woke'")
    skew(0)
    done = threading.Event()

    def wake() -> None:
        while not done.is_set() and worker.run(run_id).status != "completed":
            worker.run_due()
            done.wait(0.1)

    thread = threading.Thread(target=wake, daemon=True)
    thread.start()
    thread.join(HANG)
    done.set()
    assert worker.run(run_id).output == "woke"
    worker.close()


def test_a_replayed_timer_keeps_its_journaled_due_time(postgres_url, skew):
    skew(HOUR)
    sb = Sandbox(postgres_url)
    run_id = _parked(sb, "const t = Date.now(); await ctx.sleep(1500); return Date.now() - t")
    recorded = [e for e in sb.run(run_id).entries if e["kind"] == "timer"]
    skew(-HOUR)  # resumed by a process an hour slow: the journal, not this clock, says when it was set
    other = Sandbox(postgres_url)
    time.sleep(1.6)
    result = other.resume(run_id)
    assert [e for e in other.run(run_id).entries if e["kind"] == "timer"] == recorded
    assert 1500 <= result.output < 60_000
    sb.close()
    other.close()
