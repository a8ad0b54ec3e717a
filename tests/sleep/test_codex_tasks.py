"""Which Codex records are a person's tasks (formats spec §2)."""

import hashlib

from sleep.harvest.codex import CodexTaskReader
from sleep.harvest.identity import SessionIdentity
from sleep.harvest.jsonl import JsonlReader
from tests.sleep.transcripts import codex_line, codex_meta, codex_prompt, examples_dir


def key(text):
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def read(records, parents=None, identity=None):
    reader = CodexTaskReader(
        identity or SessionIdentity(), key, lambda t: set((parents or {}).get(t, ()))
    )
    for r in records:
        reader.feed(r)
    reader.finish()
    return reader


def read_file(path):
    with open(path, "rb") as fh:
        return read(list(JsonlReader(fh).records()))


def test_example_basic_counts_each_prompt_once():
    r = read_file(examples_dir() / "codex-basic.jsonl")
    assert [t.text for t in r.tasks] == [
        "Why does `pnpm build` warn \"Module level directives cause errors when bundled\" for 'use client'?",
        "ok, which rollup plugin preserves them?",
    ]
    assert (r.identity.cwd, r.identity.branch) == ("/home/alex/src/todo-web", "main")
    assert r.identity.session_id == "019a05d5-1b25-7f22-aeba-dcc338c922c0"


def test_example_tools_second_turn_aborted():
    r = read_file(examples_dir() / "codex-tools.jsonl")
    assert [(t.text[:20], t.aborted) for t in r.tasks] == [
        ("Add a --units flag (", False),
        ("Now update the READM", True),
    ]
    assert [t.interrupted for t in r.tasks] == [False, True]  # reason "interrupted"
    assert (r.identity.cwd, r.identity.branch) == (
        "/Users/sam/projects/weather_cli",
        "feat/units-flag",
    )


def test_example_legacy_bare_form():
    r = read_file(examples_dir() / "codex-legacy-bare.jsonl")
    assert [t.text for t in r.tasks] == ["how many TODO comments are left in src/?"]
    assert r.identity.cwd == "/home/alex/src/todo-web"
    assert r.identity.session_id == "f1961bfd-996a-4db7-958d-4b49a04d5609"
    assert r.tasks[0].timestamp == "2025-08-04T19:22:51.030Z"  # the header's


def test_injected_context_is_never_a_task():
    injected = [
        "<user_instructions>use pnpm</user_instructions>",
        "<environment_context><cwd>/x</cwd></environment_context>",
        "# AGENTS.md instructions for /x\n<INSTRUCTIONS>",
        "<permissions instructions>sandbox</permissions instructions>",
        "<collaboration_mode>pair</collaboration_mode>",
        "<personality_spec>x</personality_spec>",
        "<skill>pdf</skill>",
        "<codex_internal_context>x",
        "<goal_context>x</goal_context>",
        "Another language model started to solve this problem and produced a summary",
    ]
    records = [codex_meta()]
    for text in injected:
        records += codex_prompt(text)
    assert read(records).tasks == []


def test_developer_and_assistant_messages_are_not_tasks():
    dev = {
        "type": "message",
        "role": "developer",
        "content": [{"type": "input_text", "text": "hi"}],
    }
    asst = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "hi"}],
    }
    assert (
        read(
            [codex_meta(), codex_line("response_item", dev), codex_line("response_item", asst)]
        ).tasks
        == []
    )


def test_paginated_item_completed_counts_once_beside_the_response_item():
    item = {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "Count lines"}],
    }
    done = {"type": "item_completed", "turn_id": "t1",
            "item": {"type": "UserMessage", "content": [{"type": "text", "text": "Count lines"}]}}  # fmt: skip
    records = [codex_meta(originator="codex_exec", source="exec"),
               codex_line("event_msg", {"type": "task_started", "turn_id": "t1"}),
               codex_line("response_item", item), codex_line("event_msg", done),
               codex_line("event_msg", {"type": "user_message", "message": "Count lines"})]  # fmt: skip
    r = read(records)
    assert [t.text for t in r.tasks] == ["Count lines"]
    assert r.identity.automation


def test_the_same_prompt_typed_again_in_a_later_turn_counts_again():
    records = [codex_meta(), *codex_prompt("again"),
               codex_line("event_msg", {"type": "task_started"}), *codex_prompt("again")]  # fmt: skip
    assert [t.text for t in read(records).tasks] == ["again", "again"]


def test_ide_wrapper_keeps_only_the_request():
    text = (
        "# Context from my IDE setup:\n## Open tabs:\n- a.py\n## My request for Codex:\nRename foo"
    )
    assert [t.text for t in read([codex_meta(), *codex_prompt(text)]).tasks] == ["Rename foo"]


def test_subagent_threads_have_no_tasks():
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": "p", "depth": 1}}}
    assert read([codex_meta(source=spawn), *codex_prompt("model-written")]).tasks == []
    r = read([codex_meta(thread_source="subagent"), *codex_prompt("x")])
    assert r.tasks == [] and r.identity.not_a_root == "subagent"
    assert read([codex_meta(source={"subagent": "review"}), *codex_prompt("x")]).tasks == []


def test_a_fork_does_not_count_its_parents_replayed_prompts():
    parent_keys = {"P": [key("first"), key("second")]}
    records = [codex_meta(thread="F", forked_from_id="P"), *codex_prompt("first"),
               *codex_prompt("second"), *codex_prompt("my own question")]  # fmt: skip
    assert [t.text for t in read(records, parents=parent_keys).tasks] == ["my own question"]


def test_history_after_a_foreign_session_meta_is_replay_until_the_next_turn():
    records = [codex_meta(thread="C"), codex_meta(thread="P"), *codex_prompt("parent prompt"),
               codex_line("event_msg", {"type": "task_started"}), *codex_prompt("child prompt")]  # fmt: skip
    assert [t.text for t in read(records).tasks] == ["child prompt"]


def test_records_before_the_history_start_ordinal_are_replay():
    records = [codex_meta(thread="C", subagent_history_start_ordinal=3)]
    old = [{**r, "ordinal": 1} for r in codex_prompt("copied")]
    new = [{**r, "ordinal": 5} for r in codex_prompt("own")]
    assert [t.text for t in read(records + old + new).tasks] == ["own"]


def test_compaction_copies_are_not_tasks():
    compacted = codex_line("compacted", {"message": "summary", "replacement_history": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "earlier"}]}]})  # fmt: skip
    records = [codex_meta(), *codex_prompt("earlier"), compacted,
               codex_line("event_msg", {"type": "context_compacted"}), *codex_prompt("later")]  # fmt: skip
    assert [t.text for t in read(records).tasks] == ["earlier", "later"]


def test_rolled_back_turns_are_dropped():
    records = [codex_meta(), *codex_prompt("keep"), *codex_prompt("undo me"),
               codex_line("event_msg", {"type": "thread_rolled_back", "num_turns": 1})]  # fmt: skip
    assert [t.text for t in read(records).tasks] == ["keep"]


def test_unknown_outer_types_and_fields_are_ignored():
    records = [codex_meta(), codex_line("world_state", {"full": True}),
               codex_line("token_usage_record", {}), {"timestamp": "x", "type": "future", "payload": {}},
               {"record_type": "state"}, *codex_prompt("real")]  # fmt: skip
    assert [t.text for t in read(records).tasks] == ["real"]


def test_a_prompt_delivered_from_the_response_item_is_not_repeated_by_a_late_event():
    # First read stops between the response item and its event (a live file).
    ident = SessionIdentity()
    item, event = codex_prompt("half-written turn")
    first = read([codex_meta(), item], identity=ident)
    assert [t.text for t in first.tasks] == ["half-written turn"]
    second = read([event, *codex_prompt("next")], identity=ident)
    assert [t.text for t in second.tasks] == ["next"]


def test_a_review_ending_aborts_the_turn_but_is_not_the_person_interrupting():
    records = [codex_meta(), *codex_prompt("Review my diff")]
    records.append(codex_line("event_msg", {"type": "turn_aborted", "reason": "review_ended"}))
    [task] = read(records).tasks
    assert (task.aborted, task.interrupted) == (True, False)
