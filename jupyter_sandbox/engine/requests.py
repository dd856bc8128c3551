"""The script's requests: what each kind asks of the host, and how it is started.

A collaborator of ``Runner`` (runner.py): one method per request kind the prelude
queues (``call``, ``delegate``/``agent``, ``sleep``, ``wait``, the notes, ...).
A request at a slot an earlier attempt left open reuses that slot's entry; a
determinism check (``execute=False``) starts nothing at all.
"""

from __future__ import annotations

from typing import Any

from ..actions import Action, Outcome
from ..calling import call_action, needs_approval
from ..errors import InputInvalid, StoreError
from ..stores.rows import Entry
from .answers import answer_for
from .runner_state import RunnerState
from .waits import EventWait

__all__ = ["Requests"]


def _open_record(entry: Entry) -> dict[str, Any]:
    """An open request as a mismatch shows what the journal recorded at its slot."""
    body = entry.body
    if entry.kind == "call":
        return {
            "type": "action" if body.get("op", "call") == "call" else body["op"],
            "name": body.get("name"),
            "input": body.get("input"),
        }
    return {"type": "sleep" if entry.kind == "timer" else entry.kind, "input": body.get("ms", body.get("match"))}


_REQUEST_KINDS = {"call": "call", "delegate": "call", "agent": "call", "sleep": "timer", "wait": "wait"}


class Requests:
    """The request table: what each kind of request a script queued does (see ``Runner._pump``).

    It works on its runner's state (``writer``, ``journal``, ``answers``,
    ``requests``, ``waits``) and starts live work through ``runner.calls``.
    """

    def __init__(self, runner: RunnerState):
        self.runner = runner

    def handle(self, items: list[dict[str, Any]]) -> None:
        for item in items:
            kind = item["t"]
            if kind in _REQUEST_KINDS and not self.runner.execute:
                self._reached(item)  # a determinism check starts nothing
            elif kind in ("console", "log", "step", "plan"):
                self._note(kind, item)
            elif kind in ("now", "random") and not self.runner.execute:
                self._reached_read(item)
            elif kind in ("now", "random"):
                self.runner.writer.append(kind, item["s"], value=item["value"])
            elif kind == "call":
                self._call(item)
            elif kind == "imported":
                self._imported(item)
            elif kind in ("delegate", "agent"):
                self._child(kind, item)
            elif kind == "sleep":
                self._sleep(item)
            elif kind == "wait":
                self._wait(item)
            elif kind == "progress":
                self.runner.engine.progress(self.runner.run.id, item["patch"], self.runner.observer)
            elif kind == "continue":
                self.runner.continue_state = item["state"]
            elif kind == "done":
                self.runner.outcome = item["outcome"]
            elif kind == "mismatch":
                raise self.runner._mismatch(item)

    def _note(self, kind: str, item: dict[str, Any]) -> None:
        replayed = bool(item.pop("r"))
        item.pop("t")
        if kind == "console":
            self.runner._observe("console", {"level": item["level"], "message": item["message"]}, replayed)
        elif kind == "step":
            self.runner._observe("step", dict(item))
        if not replayed:
            self.runner.writer.append(kind, None, **item)

    def _open(self, item: dict[str, Any], kind: str) -> Entry | None:
        """The request an earlier attempt left open at this slot with the same key, if any."""
        slot = item["s"]
        previous = self.runner.journal.open_request(slot)
        if previous is not None and (previous.kind != kind or previous.body.get("key") != item["key"]):
            # The recorded run left another request open here (the interrupted call, one in
            # flight at a crash): its answer or its retry must not go to this one.
            raise self.runner._diverged(slot, item, recorded=_open_record(previous))
        if previous is not None:
            self.runner.requests[slot] = previous
        return previous

    def _reached(self, item: dict[str, Any]) -> None:
        """A determinism check met a request the journal has no completion for.

        Open in the recorded run too (a timer a race left running, the interrupted
        call): reached and matched, it stays open and the replay goes on past it.
        Past every slot the recorded run reserved, of a run that paused (or after
        the script has settled): the recorded run never got there, so there is
        nothing to check it against. Anything else is a divergence.
        """
        runner, slot = self.runner, item["s"]
        previous = runner.journal.open_request(slot)
        if (
            previous is not None
            and previous.kind == _REQUEST_KINDS[item["t"]]
            and previous.body.get("key") == item["key"]
        ):
            runner.held[slot] = previous
            return
        unfinished = runner.run.status not in ("completed", "continued") or runner.outcome is not None
        if slot >= runner.plan.frontier and unfinished:
            return
        raise runner._diverged(slot, item)

    def _reached_read(self, item: dict[str, Any]) -> None:
        """A determinism check met a clock or random read the journal has no entry for.

        As for a request (``_reached``): past every slot a paused run reserved it is
        unchecked, elsewhere a divergence. It is never journaled: a check records nothing.
        """
        runner, slot = self.runner, item["s"]
        unfinished = runner.run.status not in ("completed", "continued") or runner.outcome is not None
        if slot >= runner.plan.frontier and unfinished:
            return
        raise runner._diverged(slot, {"t": item["t"], "s": slot})

    def _request(self, kind: str, item: dict[str, Any], **body: Any) -> Entry:
        entry = self.runner.writer.append(kind, item["s"], key=item["key"], **body)
        self.runner.requests[item["s"]] = entry
        return entry

    def _call(self, item: dict[str, Any]) -> None:
        slot, name = item["s"], item["name"]
        action = self.runner.engine.actions[name]
        if action.saved is not None:
            self._saved(item, action)
            return
        if self._open(item, "call") is None:
            # The optional fields only when set: most calls have no description, and every row is read back
            optional = {k: item[k] for k in ("description", "line") if item.get(k) is not None}
            # Whether the call needs approval is decided once, here, and journaled: a resume in a process
            # that registered the action otherwise (or a policy that would now say otherwise) changes nothing.
            if action.approval is not False:
                optional["approval"] = needs_approval(action, item["input"])
            self._request("call", item, op="call", name=name, input=item["input"], **optional)
        resume, approval, call_input, answer = answer_for(
            self.runner.journal, self.runner.answers, self.runner.run.id, slot, item["input"]
        )
        if answer is not None:
            self.runner.writer.append("answer", slot, **answer)
        self.runner.calls.dispatch(
            slot,
            call_action(
                action,
                call_input,
                resume,
                self.runner.engine.executor,
                self.runner.limits.action_timeout,
                approval=approval,
                inline=self.runner.calls.inline,
            ),
            on_loop=action.is_async,
        )

    def _saved(self, item: dict[str, Any], action: Action) -> None:
        """A call of a saved script (``actions.scripts.NAME``): a child run of the version the call recorded
        (the newest, when the call is made live)."""
        assert action.saved is not None
        store, previous = self.runner.engine.store, self.runner.journal.open_request(item["s"])
        version = previous.body.get("version") if previous is not None else action.saved_version
        found = store.script(action.saved, version) if isinstance(version, int) else None  # (Store) saved.py's table
        failure = None
        if found is None:
            failure = _failed(f"{action.name} was removed from the store's saved scripts")
        elif action.spec is not None and action.spec.checks:
            try:
                action.spec.validate(item["input"])
            except InputInvalid as exc:
                failure = _failed(f"{action.name}: invalid input: {exc}", "InvalidInput", exc.issues)
        if failure is not None or found is None:  # the call is journaled, and fails: no child run
            if previous is None:
                self._request("call", item, op="call", name=action.name, input=item["input"])
            self.runner.calls.dispatch(item["s"], failure or _failed(action.name))
            return
        spec = {"script": found.source, "input": item["input"], "name": action.name}
        self._child("delegate", item, spec, version=found.version)

    def _child(self, op: str, item: dict[str, Any], spec: Any = None, **recorded: Any) -> None:
        slot = item["s"]
        previous = self._open(item, "call")
        child_id = previous.body.get("child") if previous is not None else None
        child_id = (self.runner.run.options.get("children") or {}).get(child_id, child_id)  # a fork's own child
        if previous is None:
            child_id = self.runner.engine.new_run_id()
            self._request(
                "call",
                item,
                op=op,
                name=item["name"],
                input=item["input"],
                child=child_id,
                description=None,
                line=item.get("line"),
                **recorded,
            )
        if not isinstance(child_id, str):  # every child call is journaled with its child's id: a damaged row
            raise StoreError(f"run {self.runner.run.id}: the journaled call at slot {slot} names no child run")
        interrupt = self.runner.journal.interrupt_at(slot)
        pending = interrupt.body.get("interrupts", []) if interrupt is not None else []
        answers = self.runner.answers.for_child(pending, slot)
        self.runner.calls.dispatch(
            slot,
            self.runner.engine.run_child(
                self.runner.attempt,
                slot,
                op,
                item["input"] if spec is None else spec,
                child_id,
                answers,
                resumed=previous is not None,
            ),
        )

    def _imported(self, item: dict[str, Any]) -> None:
        """An effect served from a bare call log: journal its request and completion as if it had run,
        so this run's own journal is complete and a resume by run id never runs it again."""
        writer, slot = self.runner.writer, item["s"]
        kin, ok, value = self.runner.plan.served(item["i"])
        op = kin["op"]
        if op == "sleep":
            ms = kin["input"] if isinstance(kin["input"], (int, float)) else 0
            writer.append("timer", slot, key=item["key"], ms=ms, due=self.runner.now)
            writer.append("fired", slot)
        elif op == "wait":
            writer.append("wait", slot, key=item["key"], match=kin["input"], timeout=kin["timeout"], due=None)
            writer.append("event", slot, event=value, signal=None)
        else:
            writer.append(
                "call",
                slot,
                key=item["key"],
                op=op,
                name=kin["name"],
                input=kin["input"],
                description=None,
                imported=True,
            )
            if ok:
                writer.append("result", slot, ok=True, value=value)
            else:
                writer.append("result", slot, ok=False, error={**value, "action": kin["name"]})

    def _sleep(self, item: dict[str, Any]) -> None:
        previous = self._open(item, "timer")
        if previous is None:
            previous = self._request("timer", item, ms=item["ms"], due=self.runner.now + item["ms"])
        self.runner.waits.timers[item["s"]] = previous.body["due"]

    def _wait(self, item: dict[str, Any]) -> None:
        previous = self._open(item, "wait")
        if previous is None:
            timeout = item["timeout"]
            previous = self._request(
                "wait",
                item,
                match=item["match"],
                timeout=timeout,
                due=None if timeout is None else self.runner.now + timeout,
            )
        self.runner.waits.events[item["s"]] = EventWait(item["match"], previous.body["due"], item["key"])


async def _failed(message: str, name: str = "ActionError", issues: Any = None) -> Outcome:
    error: dict[str, Any] = {"name": name, "message": message}
    if issues is not None:
        error["issues"] = issues
    return Outcome("error", error=error)
