"""Structured answers are checked against the question's fields before anything is written (issue 12 item 10).

Before: `{"capacity_kw": "abc"}`, `[500]` or `true` as a field was merged into the plan; pv_calc
failed with a Python error shown to the user (or made a report for "True kW") and the question
was gone. Now the runner refuses such an answer up front — the CLI with exit 2 and an `error`
event, the HTTP API with 422 — naming the field and what it expects, and the question stays open.
An answer that reaches ask_user another way (LangGraph server, Studio) is asked again, saying why.
"""

from __future__ import annotations

import json
import sqlite3

import httpx
import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

from graphs.context import Context
from graphs.main import build_graph
from plangraph.runner import PlanRunner, UserFacingError
from tests.integration.http.http_support import KEY_ALICE, KEYS, serve
from tests.reliability.races import S1, cli, cli_env, events
from tools.plans.store import PlanStore

# (answer, the field the error must name, words of what it expects)
WRONG = [
    ({"capacity_kw": "abc"}, "capacity_kw", "数字"),
    ({"capacity_kw": [500]}, "capacity_kw", "数字"),
    ({"capacity_kw": True}, "capacity_kw", "数字"),
    ({"capacity_kw": {"value": [500, {"unit": None}]}}, "capacity_kw", "数字"),
    ({"location": 5, "project_type": "工商业", "capacity_kw": 500}, "location", "文字"),
    ({"project_type": "commercial"}, "project_type", '"工商业"、"户用"'),
    ({"capacity_kw": float("inf")}, "capacity_kw", "数字"),
    ({"capacity": 500}, "'capacity'", "capacity_kw"),  # no such field: the valid names are listed
    ({"answer": "500kW", "capacity_kw": "500kW"}, "capacity_kw", "数字"),
]
GOOD = {"location": "杭州市余杭区", "project_type": "工商业", "capacity_kw": 640}


@pytest.fixture
def waiting(data_dir):
    """A runner whose S1 request waits for the project's details, and the question asked."""
    data_dir.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(data_dir / "checkpoints.sqlite", check_same_thread=False)
    runner = PlanRunner(
        build_graph(checkpointer=SqliteSaver(conn)), Context(user_id="u", conversation_id="typed")
    )
    asked = runner.run(S1).interrupt
    assert asked is not None
    yield runner, asked
    conn.close()


def _capacity(plan: dict) -> float:
    step = next(s for s in plan["steps"] if s["agentName"] == "pv_calc")
    return float(step["result"]["context"]["inputs"]["capacity_kw"])


def test_the_question_says_which_fields_it_takes_and_their_types(waiting):
    _, asked = waiting
    fields = asked["fields"]
    assert fields["capacity_kw"] == {"type": "number"}
    assert fields["project_type"] == {"type": "string", "enum": ["工商业", "户用"]}
    assert fields["location"] == {"type": "string"}
    assert fields["electricity_price"] == {"type": "number"}  # not a listed input, still typed


def test_wrongly_typed_fields_are_refused_before_anything_is_written(waiting, data_dir):
    runner, asked = waiting
    store = PlanStore(data_dir / "plans.sqlite")
    before = runner.graph.get_state(runner.config)
    for answer, field, expected in WRONG:
        with pytest.raises(UserFacingError) as refused:
            runner.resume(answer)
        message = str(refused.value)
        assert field in message and expected in message, (answer, message)
        assert "问题仍在等待" in message and refused.value.exit_code == 2
        after = runner.graph.get_state(runner.config)
        assert after.config == before.config  # no checkpoint written
        assert [i.value for i in after.interrupts] == [i.value for i in before.interrupts]
        assert store.get(asked["planId"])["status"] == "interrupted"
    done = runner.resume(GOOD)  # the question is still open: a good answer finishes the plan
    assert [s["status"] for s in done.plan["steps"]] == ["completed"] * 3
    assert _capacity(done.plan) == 640 and any(a.endswith("_report.md") for a in done.artifacts)


def test_an_answer_reaching_ask_user_directly_is_asked_again_with_the_reason(waiting):
    runner, asked = waiting
    graph, config = runner.graph, {**runner.config, "configurable": dict(runner.config["configurable"])}
    steps = [(s["seqNo"], s["status"]) for s in graph.get_state(config).values["plan"]["steps"]]
    graph.invoke(Command(resume={"capacity_kw": "abc"}), config, context=runner.context)  # no PlanRunner
    state = graph.get_state(config)
    assert [(s["seqNo"], s["status"]) for s in state.values["plan"]["steps"]] == steps
    question = state.interrupts[0].value["question"]
    assert "capacity_kw" in question and "数字" in question and question.endswith(asked["question"])


@pytest.mark.slow
def test_cli_refuses_wrong_fields_with_exit_2_and_an_error_event(tmp_path):
    env = cli_env(tmp_path / "data", tmp_path)
    assert cli("run", S1, "--conversation", "typed-cli", env=env).returncode == 3
    for fields, words in (
        ('{"capacity_kw": "abc"}', ("capacity_kw", "数字")),
        ("[500]", ("--fields", "JSON 对象")),
        ("true", ("--fields", "JSON 对象")),
        ('{"capacity_kw": ', ("--fields", "JSON")),
    ):
        proc = cli("resume", "--conversation", "typed-cli", "--fields", fields, env=env)
        assert proc.returncode == 2, (fields, proc.stdout, proc.stderr)
        last = events(proc.stdout)[-1]
        assert last["event"] == "error" and all(w in last["message"] for w in words), (fields, last)
        assert "Traceback" not in proc.stderr
    proc = cli("resume", "--conversation", "typed-cli", "--fields", json.dumps(GOOD), env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    final = events(proc.stdout)[-1]
    assert final["event"] == "final" and _capacity(final["plan"]) == 640


def test_http_refuses_wrong_fields_with_422_naming_the_field(data_dir):
    from plangraph.server import create_app

    app = create_app(data_dir=data_dir, checkpoint_url="", api_keys=KEYS, rate_limit_per_minute=0)
    with serve(app) as url, httpx.Client(base_url=url, headers={"X-API-Key": KEY_ALICE}, timeout=300) as http:

        def turn(payload: dict) -> httpx.Response:
            body = {"input": payload, "config": {"configurable": {"thread_id": "typed-http"}}}
            return http.post("/plangraph/invoke", json=body)

        first = turn({"messages": [{"role": "user", "content": S1}]})
        assert "__interrupt__" in first.json()["output"], first.text
        for answer, field, expected in WRONG[:4]:
            refused = turn({"resume": answer})
            assert refused.status_code == 422, refused.text
            assert field in refused.text and expected in refused.text
        assert [p["conversationId"] for p in http.get("/pending").json()["plans"]] == ["typed-http"]
        done = turn({"resume": GOOD})
        assert done.status_code == 200, done.text
        assert _capacity(done.json()["output"]["plan"]) == 640
