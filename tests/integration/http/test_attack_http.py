"""Our own attack run on `plangraph serve`'s API (docs/robustness.md): what it found, as tests.

Each test failed before its fix: a 500, a request stored as a Python repr, or an answer kept whole
in the plan and sent back by every GET /pending.
"""

from __future__ import annotations

import pytest

from tests.integration.http.http_support import human

pytestmark = pytest.mark.slow

REQUEST = "帮我生成一份光伏经济测算报告"


def _waiting(client, conversation: str) -> dict:
    response = client.post(
        "/plangraph/invoke", json={"input": human(REQUEST)}, headers={"X-Conversation-Id": conversation}
    )
    assert response.status_code == 200, response.text
    return response.json()["output"]["__interrupt__"][0]["value"]


def _pending(client, conversation: str) -> list[dict]:
    return [p for p in client.get("/pending").json()["plans"] if p["conversationId"] == conversation]


def test_content_parts_are_read_as_the_text_they_carry(live):
    """OpenAI / LangChain clients send `content` as parts; before: userQuery was "[{'type': 'text', …}]"."""
    parts = [{"type": "text", "text": "帮我生成一份"}, {"type": "image_url", "image_url": {"url": "x"}}]
    parts.append({"type": "text", "text": "光伏经济测算报告"})
    with live.client() as client:
        response = client.post(
            "/plangraph/invoke", json={"input": {"messages": [{"role": "user", "content": parts}]}}
        )
        assert response.status_code == 200, response.text
        plan = response.json()["output"]["plan"]
        assert plan["userQuery"] == REQUEST
        assert [s["agentName"] for s in plan["steps"]] == ["pv_calc", "sensitivity", "report"]
        # parts with no text at all are an empty request, said as such
        empty = client.post(
            "/plangraph/invoke",
            json={"input": {"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}},
        )
    assert empty.status_code == 422 and "请告诉我您需要做什么" in empty.json()["detail"]


def test_control_characters_are_dropped_and_the_plan_drawing_still_renders(live):
    """Before: NUL went into the plan; GET /conversations/{id}/plan.svg answered 500 (Graphviz syntax error)."""
    pytest.importorskip("shutil").which("dot") or pytest.skip("Graphviz `dot` is not installed")
    with live.client() as client:
        response = client.post(
            "/plangraph/invoke",
            json={"input": human("帮我生成\x00一份光伏\x1b[31m经济测算报告\x07")},
            headers={"X-Conversation-Id": "nul-1"},
        )
        assert response.status_code == 200, response.text
        assert response.json()["output"]["plan"]["userQuery"] == "帮我生成一份光伏[31m经济测算报告"
        drawing = client.get("/conversations/nul-1/plan.svg")
    assert drawing.status_code == 200, drawing.text
    assert drawing.text.lstrip().startswith("<?xml")


def test_a_request_longer_than_a_step_requirement_is_planned_not_a_500(live):
    """Requests of 4,001–8,000 characters are allowed, a step's requirement holds 4,000: before, 500."""
    request = REQUEST + "。补充说明：" + "项目屋顶朝南，没有遮挡。" * 420
    assert 4000 < len(request) <= 8000
    with live.client() as client:
        response = client.post(
            "/plangraph/invoke", json={"input": human(request)}, headers={"X-Conversation-Id": "long-1"}
        )
    assert response.status_code == 200, response.text
    plan = response.json()["output"]["plan"]
    assert plan["userQuery"] == request  # the whole request is kept
    assert all(len(s["requirement"]) <= 4000 for s in plan["steps"])
    assert "__interrupt__" in response.json()["output"]


def test_an_answer_longer_than_a_request_is_refused_and_nothing_changes(live):
    """Before: a 900 KB answer was taken (11 s), kept in the plan, and every GET /pending carried it."""
    with live.client() as client:
        question = _waiting(client, "huge-answer")
        before = _pending(client, "huge-answer")
        response = client.post(
            "/plangraph/invoke",
            json={"input": {"resume": "杭州余杭区 工商业 500kW " + "啊" * 300_000}},
            headers={"X-Conversation-Id": "huge-answer"},
        )
        assert response.status_code == 422, response.text
        assert "回答过长" in response.json()["detail"] and "问题仍在等待" in response.json()["detail"]
        assert _pending(client, "huge-answer") == before
        assert before[0]["question"] == question["question"]
        answered = client.post(
            "/plangraph/invoke",
            json={"input": {"resume": "杭州余杭区 工商业 500kW"}},
            headers={"X-Conversation-Id": "huge-answer"},
        )
    assert answered.status_code == 200 and "__interrupt__" not in answered.json()["output"]


def test_an_empty_answer_says_it_was_empty(live):
    """Before: 409 "正在等待回答：<question>", which did not say what was wrong with the request."""
    with live.client() as client:
        _waiting(client, "empty-answer")
        for empty in ("", "  \n ", "\x00\x01"):
            response = client.post(
                "/plangraph/invoke",
                json={"input": {"resume": empty}},
                headers={"X-Conversation-Id": "empty-answer"},
            )
            assert response.status_code == 409, response.text
            assert response.json()["detail"].startswith("收到的回答是空的。会话 empty-answer 正在等待回答：")


def test_a_broken_workflow_template_stops_the_server_from_starting(http_env, tmp_path, monkeypatch):
    """Before: the server started and every request answered 500 (TemplateError inside the planner)."""
    from plangraph.server import create_app
    from tools.plans.workflows import TemplateError

    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "loop.dot").write_text(
        'digraph G { description="循环"; 0 [label="a" type="agent" agentName="pv_calc"]; '
        '1 [label="b" type="agent" agentName="report"]; 0 -> 1; 1 -> 0; }',
        encoding="utf-8",
    )
    monkeypatch.setenv("PLANGRAPH_TEMPLATES_DIR", str(folder))
    with pytest.raises(TemplateError, match=r"loop\.dot: the edges form a cycle: 0 -> 1 -> 0"):
        create_app(data_dir=tmp_path / "data", checkpoint_url="", api_keys={"k": "u"})


def test_a_batch_with_one_unusable_input_runs_none_of_them(live):
    """Before: the other inputs ran (a plan finished, another was created) and the reply was one
    422 / 409 saying nothing had changed; the caller lost their outputs."""
    request = human(REQUEST)
    with live.client() as client:
        _waiting(client, "batch-b")
        bad_answer = client.post(
            "/plangraph/batch",
            json={
                "inputs": [request, {"resume": 5}],
                "config": [
                    {"configurable": {"thread_id": "batch-a"}},
                    {"configurable": {"thread_id": "batch-b"}},
                ],
            },
        )
        assert bad_answer.status_code == 422, bad_answer.text
        assert "resume value must be text or an object" in bad_answer.json()["detail"]
        twice = client.post(
            "/plangraph/batch",
            json={"inputs": [request, request], "config": {"configurable": {"thread_id": "batch-c"}}},
        )
        assert twice.status_code == 422, twice.text
        assert (
            "会话 batch-c 出现了 2 次" in twice.json()["detail"]
            and "没有执行任何输入" in twice.json()["detail"]
        )
        for conversation in ("batch-a", "batch-c"):
            assert client.get(f"/conversations/{conversation}").status_code == 404
        assert _pending(client, "batch-b")  # still waiting for its answer
        fine = client.post(
            "/plangraph/batch",
            json={
                "inputs": [request, {"resume": "杭州余杭区 工商业 500kW"}],
                "config": [
                    {"configurable": {"thread_id": "batch-a"}},
                    {"configurable": {"thread_id": "batch-b"}},
                ],
            },
        )
    assert fine.status_code == 200, fine.text
    first, second = fine.json()["output"]
    assert "__interrupt__" in first and "__interrupt__" not in second
