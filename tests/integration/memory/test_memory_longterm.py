"""Long-term facts through the real graph: stated in one conversation, used in the next, forgotten.

The CLI runs as a user runs it (subprocess, SQLite data dir); the HTTP API on a real uvicorn server
on 127.0.0.1 with two users' keys. Both: a tariff stated in conversation 1 is acknowledged and
kept; a calculation in conversation 2 uses it with a note naming conversation 1; another user
never sees it; after `forget` the table's default is back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.http.http_support import KEY_ALICE, KEY_BOB, KEYS, Live, human, serve

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
PROJECT = "帮我测算杭州余杭区500kW工商业光伏"


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
    cmd = [sys.executable, "-m", "plangraph.cli", "--data-dir", str(data), *args]
    return subprocess.run(
        cmd, env={**env, "PLANGRAPH_EMBEDDINGS": "hash", "COLUMNS": "200"}, cwd=ROOT,
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip


def _final(stdout: str) -> dict:
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return next(e for e in events if e["event"] == "final")


def _step(final: dict) -> dict:
    (step,) = final["plan"]["steps"]
    return step["result"]["context"]


def test_cli_a_tariff_stated_once_is_used_in_the_next_conversation_until_forgotten(tmp_path):
    said = _cli(tmp_path, "run", "我们的电价是0.72", "--user", "u1", "--conversation", "c1")
    assert said.returncode == 0, said.stderr
    assert "已记住" in said.stdout and "自用电价 0.72 元/kWh" in said.stdout
    assert "光伏经济性测算结果" not in said.stdout  # a statement, not a calculation

    listed = _cli(tmp_path, "memory", "facts", "--user", "u1", "--json")
    (fact,) = json.loads(listed.stdout)
    assert (fact["key"], fact["value"], fact["conversation_id"], fact["judged_by"]) == (
        "electricity_price", 0.72, "c1", "rule",
    )  # fmt: skip

    used = _cli(tmp_path, "run", PROJECT, "--user", "u1", "--conversation", "c2", "--json")
    assert used.returncode == 0, used.stderr
    final = _final(used.stdout)
    context = _step(final)
    assert context["inputs"]["electricity_price"] == 0.72
    assert context["facts_used"][0]["fact_id"] == fact["fact_id"]
    assert "会话 c1" in used.stdout and "我们的电价是0.72" in used.stdout  # the note in the step's output
    assert "使用了您的长期设置：自用电价 0.72 元/kWh（来自会话 c1" in final["summary"]

    other = _cli(tmp_path, "run", PROJECT, "--user", "u2", "--conversation", "other-1", "--json")
    assert _step(_final(other.stdout))["inputs"]["electricity_price"] != 0.72
    assert "长期设置" not in other.stdout

    unknown = _cli(tmp_path, "memory", "forget", "f_nope", "--user", "u1")
    assert unknown.returncode != 0 and "plangraph memory facts" in unknown.stderr + unknown.stdout
    gone = _cli(tmp_path, "memory", "forget", fact["fact_id"], "--user", "u1")
    assert gone.returncode == 0 and fact["fact_id"] in gone.stdout
    assert json.loads(_cli(tmp_path, "memory", "facts", "--user", "u1", "--json").stdout) == []

    after = _cli(tmp_path, "run", PROJECT, "--user", "u1", "--conversation", "c3", "--json")
    context = _step(_final(after.stdout))
    assert context["inputs"]["electricity_price"] != 0.72 and "facts_used" not in context


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from plangraph.server import create_app

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PLANGRAPH_EMBEDDINGS", "hash")
        for name in ("PLANGRAPH_MODEL", "PLANGRAPH_CHECKPOINT_URL", "PLANGRAPH_CHROMA_URL"):
            mp.delenv(name, raising=False)
        data = tmp_path_factory.mktemp("http-facts")
        app = create_app(data_dir=data, checkpoint_url="", api_keys=KEYS, rate_limit_per_minute=0)
        with serve(app) as url:
            yield Live(url, data)


def _invoke(client, text: str, thread: str) -> dict:
    done = client.post(
        "/plangraph/invoke", json={"input": human(text), "config": {"configurable": {"thread_id": thread}}}
    )
    assert done.status_code == 200, done.text
    return done.json()["output"]


def test_http_facts_per_user_used_across_conversations_and_forgotten(server):
    with server.client(KEY_ALICE) as alice, server.client(KEY_BOB) as bob:
        said = _invoke(alice, "from now on use 8% discount rate", "t1")
        assert said["summary"].startswith("Noted.") and "Discount rate 8%" in said["summary"]
        (fact,) = alice.get("/memory/facts").json()["facts"]
        assert fact["key"] == "discount_rate" and fact["value"] == 0.08 and fact["conversation_id"] == "t1"
        assert bob.get("/memory/facts").json()["facts"] == []

        out = _invoke(alice, PROJECT, "t2")
        context = out["plan"]["steps"][0]["result"]["context"]
        assert context["inputs"]["discount_rate"] == 0.08
        assert "来自会话 t1" in out["summary"] and fact["fact_id"] in out["summary"]
        own = _invoke(alice, PROJECT + "，折现率5%", "t3")  # the request's own value wins
        assert own["plan"]["steps"][0]["result"]["context"]["inputs"]["discount_rate"] == 0.05
        assert "长期设置" not in own["summary"]

        assert bob.delete(f"/memory/facts/{fact['fact_id']}").status_code == 404
        assert alice.delete(f"/memory/facts/{fact['fact_id']}").json()["key"] == "discount_rate"
        assert alice.get("/memory/facts").json()["facts"] == []
        missing = alice.delete(f"/memory/facts/{fact['fact_id']}")
        assert missing.status_code == 404 and "GET /memory/facts" in missing.text
        after = _invoke(alice, PROJECT, "t4")
        assert after["plan"]["steps"][0]["result"]["context"]["inputs"]["discount_rate"] != 0.08


KNOWLEDGE_PLAN = {
    "steps": [{"seqNo": 0, "agentName": "knowledge", "requirement": "回答余电上网电价政策", "dependsOn": []}]
}


def _is_planner(body: dict) -> bool:
    return any(t["function"]["name"] == "create_plan" for t in body.get("tools", []))


def test_model_mode_the_model_judges_and_the_planner_sees_the_fact_in_its_one_system_message(
    model_env, data_dir
):
    from langchain_core.messages import convert_to_messages

    from memory.tokens import count_messages_tokens
    from nodes.standing import JUDGE_PROMPT
    from plangraph.runner import PlanRunner
    from tests.support.openai_server import ScriptedOpenAIServer, reply_text, reply_tool_call
    from tests.support.services import graph_memory

    keep = reply_text(json.dumps({"remember": [{"quote": "以后折现率都按8%", "about": "折现率按8%"}]}))
    one_off = reply_text(json.dumps({"remember": []}))  # the model: this tariff is for this question only

    def respond(body: dict):
        if body["messages"][0]["content"].startswith(JUDGE_PROMPT[:10]):
            return keep if "折现率" in body["messages"][-1]["content"] else one_off
        if _is_planner(body):
            return reply_tool_call("create_plan", KNOWLEDGE_PLAN)
        return reply_text("按资料[1]，余电上网按燃煤基准价结算。")

    with ScriptedOpenAIServer([], responder=respond) as server:
        model_env(server, budget=800)
        with PlanRunner.open(user_id="m1", conversation_id="k1") as runner:
            said = runner.run("以后折现率都按8%。")
        with PlanRunner.open(user_id="m1", conversation_id="k2") as runner:
            runner.run("我们的电价是0.72，余电上网电价怎么定？")
        with PlanRunner.open(user_id="m1", conversation_id="k3") as runner:
            outcome = runner.run("余电上网电价怎么定？")
        judged = [r for r in server.requests if r["messages"][0]["content"].startswith(JUDGE_PROMPT[:10])]
        planner = [r for r in server.requests if _is_planner(r)]

    assert len(judged) == 2  # asked twice (both sentences have a cue); not for the plain question
    assert said.plan is None and "已记住" in (said.summary or "")
    facts = graph_memory(data_dir).facts.for_user("m1")
    assert [(f.key, f.value, f.judged_by, f.conversation_id) for f in facts] == [
        ("discount_rate", 0.08, "model", "k1")
    ]
    assert outcome.plan is not None and outcome.plan["steps"][0]["status"] == "completed"
    last = planner[-1]["messages"]
    assert [m["role"] for m in last].count("system") == 1 and last[0]["role"] == "system"
    assert "折现率 8%" in last[0]["content"] and "电价 0.72" not in last[0]["content"]
    assert count_messages_tokens(convert_to_messages(last)) <= 800
