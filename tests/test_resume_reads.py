"""A resume with an answer reads its journal once: the read that checks the answer is the attempt's, if nothing was
appended between it and the claim (the journal only grows, so its size in bytes tells)."""

from __future__ import annotations

from jupyter_sandbox import ActionInterrupt, Sandbox, SandboxInterrupt

SCRIPT = "for (let i = 0; i < 3; i++) { await actions.step(i) }\nreturn await actions.gate(0)"


def _paused(store_url):
    sb = Sandbox(store=store_url)
    sb.action(name="step")(lambda i: i)

    @sb.action
    def gate(i, resume=None):
        if resume is None:
            raise ActionInterrupt(data="gate")
        return resume.value

    try:
        sb.eval(SCRIPT)
    except SandboxInterrupt as pause:
        return sb, pause.run_id
    raise AssertionError("the script did not pause")


def _count_reads(sb, monkeypatch):
    reads = []
    entries = sb.store.entries
    monkeypatch.setattr(sb.store, "entries", lambda run_id: reads.append(run_id) or entries(run_id))
    return reads


def test_a_resume_with_an_answer_reads_the_journal_once(store_url, monkeypatch):
    sb, run_id = _paused(store_url)
    reads = _count_reads(sb, monkeypatch)
    assert sb.resume(run_id, "ok").output == "ok"
    assert reads == [run_id]
    sb.close()


def test_a_journal_that_grew_before_the_claim_is_read_again(store_url, monkeypatch):
    sb, run_id = _paused(store_url)
    reads = _count_reads(sb, monkeypatch)
    sizes = sb.store.journal_bytes
    calls = []

    def grown(rid):  # the second look (after the claim) sees more bytes: someone appended in between
        calls.append(rid)
        return sizes(rid) + (len(calls) > 1)

    monkeypatch.setattr(sb.store, "journal_bytes", grown)
    assert sb.resume(run_id, "ok").output == "ok"
    assert reads == [run_id, run_id]
    sb.close()
