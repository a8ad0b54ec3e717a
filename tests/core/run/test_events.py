"""Events survive the JSONL round trip, and the tail reader copes with a live writer."""

import json

from core.run.events import (
    EVENT_TYPES,
    Event,
    EventBus,
    EventTail,
    GateDecided,
    JsonlEventLog,
    ReflectionText,
    RunStarted,
    StepFinished,
    event_from_dict,
    read_events,
)


def run_started() -> RunStarted:
    return RunStarted(
        ts=1.0,
        run_id="r1",
        env="capitals",
        strategy="fewshot",
        target_model="local:smollm2",
        optimizer_model="fewshot",
        epochs=1,
        steps_per_epoch=2,
        train_items=10,
        val_items=5,
        test_items=5,
    )


def test_round_trip_through_the_log(tmp_path):
    log = JsonlEventLog(tmp_path / "events.jsonl")
    events = [
        run_started(),
        GateDecided(
            ts=2.0,
            step=0,
            accepted=False,
            best_before=0.5,
            candidate_score=None,
            items_scored=3,
            items_total=10,
            rollouts_saved=7,
            reason="cannot beat",
        ),
    ]
    for e in events:
        log(e)
    log.close()
    assert list(read_events(tmp_path / "events.jsonl")) == events


def test_every_event_type_is_registered_under_its_name():
    assert set(EVENT_TYPES) == {cls.__name__ for cls in Event.__subclasses__()}
    assert all(cls.type == cls.__name__ for cls in EVENT_TYPES.values())


def test_unknown_types_and_fields_are_tolerated():
    assert event_from_dict({"type": "FromTheFuture"}) is None
    data = run_started().to_dict() | {"new_field": 1}
    assert event_from_dict(data) == run_started()


def test_torn_last_line_is_skipped(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps(run_started().to_dict()) + "\n" + '{"type": "StepFin', "utf-8")
    assert list(read_events(path)) == [run_started()]


def test_tail_returns_only_complete_new_lines(tmp_path):
    path = tmp_path / "events.jsonl"
    tail = EventTail(path)
    assert tail.poll() == []  # no file yet
    line = json.dumps(run_started().to_dict())
    path.write_text(line[:20], "utf-8")
    assert tail.poll() == []
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line[20:] + "\n")
    assert tail.poll() == [run_started()]
    assert tail.poll() == []


def test_a_failing_subscriber_is_dropped_and_others_still_receive(capsys):
    bus = EventBus()
    seen = []

    def broken(_event):
        raise RuntimeError("boom")

    bus.subscribe(broken)
    bus.subscribe(seen.append)
    step = StepFinished(
        step=0, epoch=0, train_hard=0.1, train_soft=0.2, best_val=0.3, accepted=True, edit_budget=4
    )
    bus.emit(step)
    bus.emit(step)
    assert seen == [step, step]
    assert capsys.readouterr().err.count("boom") == 1


def test_a_bounded_tail_hands_a_backlog_over_in_steps_losing_nothing(tmp_path):
    path = tmp_path / "events.jsonl"
    # a multi-byte character in every line: a read cut inside one must not garble it
    events = [
        ReflectionText(step=n, kind="failure", group=0, text=f"réponse {n} · trop longue")
        for n in range(60)
    ]
    lines = [json.dumps(e.to_dict(), ensure_ascii=False) + "\n" for e in events]
    path.write_text("".join(lines), "utf-8")
    line_bytes = len(lines[0].encode())
    tail = EventTail(path, max_bytes=line_bytes * 4 + 7)
    got, reads = [], 0
    while True:
        batch = tail.poll()
        reads += 1
        assert len(batch) <= 5  # never the whole backlog at once
        got += batch
        if not tail.behind:
            break
    assert got == events and reads >= 12
    assert tail.poll() == [] and not tail.behind
