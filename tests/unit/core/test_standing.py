"""Long-term facts from a user's words (nodes/standing.py) and how the agents apply them.

The rule is judged on sentences written for this test; the agents run on a StepContext built
directly (as tests/unit/pv does) with facts as the graph hands them over.
"""

from __future__ import annotations

import time

import pytest

from memory.facts import Fact
from nodes.agents import agents, pv_calc, report
from nodes.kit.step import InMemoryAgentMemory, StepContext
from nodes.planner import route_index
from nodes.standing import acknowledge, judge, leftover, refusal, refused
from tools.results import InMemoryResults

SPECS = agents()
INDEX = route_index(SPECS, templates=[])
PROJECT = "帮我测算杭州余杭区500kW工商业光伏"


def _judged(text: str) -> list[tuple[str, object, tuple[str, ...]]]:
    return [(s.key, s.value, s.scope) for s in judge(text, SPECS, INDEX)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我们的电价是0.72", [("electricity_price", 0.72, ())]),
        ("以后报告都用英文", [("lang", "en", ("report",))]),
        ("from now on use 8% discount rate", [("discount_rate", 0.08, ())]),
        ("从现在起，折现率按8%", [("discount_rate", 0.08, ())]),
        ("我司的单瓦造价一般是3.1元/W。", [("capex_yuan_per_w", 3.1, ())]),
        ("Our tariff is 0.8 yuan/kWh.", [("electricity_price", 0.8, ())]),
        ("我们的电价是0.72，帮我算杭州500kW工商业", [("electricity_price", 0.72, ())]),
        ("以后电价都按0.8算。", [("electricity_price", 0.8, ())]),
        (
            "我们的电价是0.72，余电上网电价怎么定？",
            [("electricity_price", 0.72, ())],
        ),  # the question is another clause
    ],
)
def test_a_lasting_statement_of_a_defaulted_value_or_a_language_is_a_fact(text, expected):
    assert _judged(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "电价改成0.72再算一次",  # a one-off change: no persistence, no owner
        "帮我测算杭州余杭区500kW工商业光伏，电价0.85元/度",  # the request's own value
        "我们的电价是多少？",  # a question
        "我家屋顶装10kW户用光伏多久能回本",  # the owner's project: place and size are not defaults
        "以后再说吧",  # a cue, nothing stated
        "我们的项目在杭州",  # a project's place, not a standing default
        "我的项目在杭州，电价0.8元/度，帮我算一下",  # the owner names the project; the tariff is its own
    ],
)
def test_one_off_values_questions_and_project_facts_are_not(text):
    assert _judged(text) == []


def test_what_is_left_to_plan_and_the_acknowledgement():
    assert leftover("我们的电价是0.72", ["我们的电价是0.72"]) == ""
    assert leftover("从现在起，折现率按8%。", ["从现在起，折现率按8%"]) == ""
    rest = leftover("我们的电价是0.72，帮我算杭州500kW工商业", ["我们的电价是0.72"])
    assert "帮我算杭州500kW工商业" in rest
    fact = _fact("electricity_price", 0.72, "自用电价 0.72 元/kWh", "我们的电价是0.72")
    zh, en = acknowledge([fact], "zh"), acknowledge([fact], "en")
    assert (
        "已记住" in zh
        and "自用电价 0.72 元/kWh" in zh
        and fact.fact_id in zh
        and "plangraph memory forget" in zh
    )
    assert en.startswith("Noted.") and "DELETE /memory/facts/" in en


def _fact(key: str, value: object, text: str, said: str, scope: tuple[str, ...] = ()) -> Fact:
    return Fact(
        fact_id=f"f_{key[:6]}", user_id="u1", key=key, value=value, text=text, said=said, scope=scope,
        conversation_id="c1", created_at=time.time(),
    )  # fmt: skip


def _run(agent, query, tmp_path, facts, results=None, seq=0, deps=None):
    ctx = StepContext(
        plan_id="plan-2", seq_no=seq, agent_name=agent.AGENT.name, requirement=query, user_query=query,
        plan_context={"lang": "zh"}, deps=deps or {}, user_id="u1", conversation_id="c2", data_dir=tmp_path,
        memory=InMemoryAgentMemory(), results=results or InMemoryResults(), facts=facts,
    )  # fmt: skip
    return agent.AGENT.run(ctx)


TARIFF = _fact("electricity_price", 0.72, "自用电价 0.72 元/kWh", "我们的电价是0.72")


def test_a_standing_tariff_is_the_default_with_its_source_named(tmp_path):
    done = _run(pv_calc, PROJECT, tmp_path, [TARIFF])
    assert done["status"] == "completed"
    assert done["context"]["inputs"]["electricity_price"] == 0.72
    line = next(line for line in done["output"].splitlines() if line.startswith("- 自用电价"))
    assert (
        "0.72 元/kWh" in line and "会话 c1" in line and "我们的电价是0.72" in line and TARIFF.fact_id in line
    )
    assert done["context"]["facts_used"] == [
        {"fact_id": TARIFF.fact_id, "key": "electricity_price", "conversation_id": "c1", "text": TARIFF.text}
    ]
    plain = _run(pv_calc, PROJECT, tmp_path / "plain", [])
    assert plain["context"]["inputs"]["electricity_price"] != 0.72  # the table's default without the fact
    assert plain["context"]["results"]["npv"] != done["context"]["results"]["npv"]


def test_the_requests_own_value_wins_over_the_standing_one(tmp_path):
    done = _run(pv_calc, PROJECT + "，电价0.85元/度", tmp_path, [TARIFF])
    assert done["context"]["inputs"]["electricity_price"] == 0.85
    assert "facts_used" not in done["context"] and "长期设置" not in done["output"]


def test_a_language_preference_for_reports_makes_the_report_english_and_says_so(tmp_path):
    english = _fact("lang", "en", "report 的输出使用英文", "以后报告都用英文", ("report",))
    results = InMemoryResults()
    calc = _run(pv_calc, PROJECT + "并生成报告", tmp_path, [english], results)
    assert "光伏经济性测算结果" in calc["output"]  # the preference names the report only
    done = _run(report, PROJECT + "并生成报告", tmp_path, [english], results, seq=1, deps={0: calc})
    assert done["status"] == "completed" and done["output"].startswith("Report written")
    assert "Using your standing preference: report output in English" in done["output"]
    md = next(tmp_path.glob("artifacts/**/*_report.md")).read_text(encoding="utf-8")
    assert md.startswith("# PV economics report")
    # a language the request names wins
    chinese = _run(report, PROJECT + "，报告用中文写", tmp_path, [english], results, seq=1, deps={0: calc})
    assert chinese["output"].startswith("测算报告已生成") and "standing" not in chinese["output"]


def test_the_agentic_pv_tool_uses_the_standing_value_and_says_so():
    import json

    from tools.pv.tools import CaseStore, make_pv_tools

    results, seen = InMemoryResults(), []
    standing = {"electricity_price": (0.72, "您的长期设置（会话 c1）", TARIFF.fact_id)}
    store = CaseStore(
        save=lambda kind, payload, headline: results.put(kind, "p", 0, payload, headline),
        latest=lambda kind: None,
        load=results.load,
        standing=lambda: standing,
        used=seen.extend,
    )
    calculate = next(t for t in make_pv_tools(store) if t.name == "pv_calculate")
    args = {"location": "杭州市余杭区", "project_type": "工商业", "capacity_kw": 500}
    out = json.loads(calculate.invoke(args))
    assert out["defaults"]["electricity_price"].startswith("0.72 元/kWh（您的长期设置（会话 c1）")
    assert [d["fact_id"] for d in seen if d.get("fact_id")] == [TARIFF.fact_id]
    own = json.loads(calculate.invoke({**args, "electricity_price": 0.9}))
    assert "electricity_price" not in own["defaults"]


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        ("今后电价一律按-0.5元/度", "electricity_price", "0.3–1.5"),
        ("以后折现率都按45%算", "discount_rate", "5%–10%"),
        ("from now on the lifetime is 90 years", "lifetime_years", "20–30"),
    ],
)
def test_an_impossible_standing_value_is_named_back_and_not_kept(text, key, words):
    assert judge(text, SPECS, INDEX) == []
    wrong = refused(text, SPECS, INDEX)
    assert [st.key for st in wrong] == [key] and words in wrong[0].problem
    reply = refusal(wrong, "en" if text.isascii() else "zh")
    assert words in reply and (("nothing was stored" in reply) or ("没有保存" in reply))


def test_a_plausible_standing_value_is_not_refused():
    assert refused("以后电价都按0.68元/度算", SPECS, INDEX) == []
    assert [st.value for st in judge("以后电价都按0.68元/度算", SPECS, INDEX)] == [0.68]
