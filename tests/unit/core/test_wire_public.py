"""What leaves the server names artifacts by URL and nothing by the server's own path."""

from __future__ import annotations

from plangraph.conversations import conversation_list
from plangraph.wire import public

ROOT = "/srv/pg data/.plangraph"  # a space and a dot: the data dir is matched literally


def test_artifact_paths_become_urls_and_other_data_dir_paths_file_names():
    value = {
        "output": f"Markdown：{ROOT}/artifacts/alice/c1/plan_1_report.md\nHTML：{ROOT}/artifacts/alice/c1/plan_1_report.html（内容编号 store://x）",
        "context": {"artifacts": [f"{ROOT}/artifacts/alice/c1/plan_1_tornado.png"], "n": 3, "ok": True},
        "list": [f"见 {ROOT}/memory/chroma/index.bin。", None, 2.5],
        "other": "/etc/passwd stays: it is not in the data dir",
    }
    out = public(value, ROOT, "c1")
    assert out["output"] == (
        "Markdown：/artifacts/c1/plan_1_report.md\nHTML：/artifacts/c1/plan_1_report.html（内容编号 store://x）"
    )
    assert out["context"] == {"artifacts": ["/artifacts/c1/plan_1_tornado.png"], "n": 3, "ok": True}
    assert out["list"] == ["见 index.bin。", None, 2.5]
    assert out["other"] == value["other"]
    assert value["context"]["artifacts"][0].startswith(ROOT)  # the input is not changed


def test_conversation_list_has_one_row_per_conversation_from_its_newest_plan():
    def record(plan_id, conversation, status, at, query, question=None):
        plan = {"planId": plan_id, "userQuery": query, "steps": []}
        return {
            "planId": plan_id,
            "conversationId": conversation,
            "status": status,
            "question": question,
            "updatedAt": at,
            "plan": plan,
        }

    rows = conversation_list(
        [
            record("p3", "c1", "interrupted", 30.0, "其他参数不变，换到上海", "装机容量是多少？"),
            record("p2", "c2", "completed", 20.0, "生成报告"),
            record("p1", "c1", "superseded", 10.0, "帮我测算"),
        ]
    )
    assert [(r["conversationId"], r["request"], r["statusText"], r["plans"]) for r in rows] == [
        ("c1", "其他参数不变，换到上海", "等待回答", 2),
        ("c2", "生成报告", "已完成", 1),
    ]
    assert rows[0]["question"] == "装机容量是多少？" and rows[1]["question"] is None


def test_data_dir_relative_artifact_names_become_urls_too():
    value = {
        "summary": "生成的文件：\n- artifacts/alice/c1/plan_1_report.md\n- artifacts/al%2Fice/c1/plan_1_tornado.png",
        "context": {"artifacts": ["artifacts/alice/c1/plan_1_report.html"]},
        "other": "see docs/artifacts/a/b/c.md and /opt/x/artifacts/a/b/c.md",  # not ours: left alone
    }
    out = public(value, ROOT, "c1")
    assert (
        out["summary"] == "生成的文件：\n- /artifacts/c1/plan_1_report.md\n- /artifacts/c1/plan_1_tornado.png"
    )
    assert out["context"] == {"artifacts": ["/artifacts/c1/plan_1_report.html"]}
    assert out["other"] == value["other"]
