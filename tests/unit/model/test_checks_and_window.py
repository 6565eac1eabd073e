"""Checks of model text and the fitting of requests into a context window (no server needed)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from tools.faults import ModelRejectedError
from tools.kb.support import answer_support
from tools.model.checks import computed_numbers, unsupported_claims
from tools.model.window import TokenGauge, fit_request, window_from_models

FACTS = "内部收益率 IRR 18.91%；净现值 NPV 123.4 万元；总投资 175 万元；静态回收期 5.6 年"
COMPUTED = computed_numbers(FACTS, {"irr": 0.18912, "npv": 1234123.0, "investment": 1750000.0})


@pytest.mark.parametrize(
    "text",
    [
        "IRR 为 18.91%，NPV 约 123.4 万元。",
        "内部收益率约 18.9%，总投资 175 万元，约 5.6 年回本；共 3 个步骤。",
        "NPV 1,234,123 元，IRR 0.1891。",
    ],
)
def test_a_summary_of_computed_figures_passes(text):
    assert unsupported_claims(text, COMPUTED) == []


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("IRR 为 74.18%。", "74.18%"),
        ("NPV 约 200 万元。", "200万"),
        ("报告见 report_final.docx。", "report_final.docx"),
    ],
)
def test_an_invented_figure_or_file_is_named(text, named):
    assert unsupported_claims(text, COMPUTED, ["/data/reports/pv_report.html"]) == [named]


def test_a_run_file_may_be_cited_by_name():
    assert unsupported_claims("报告：pv_report.html", COMPUTED, ["/data/reports/pv_report.html"]) == []


PASSAGE = "余电上网电量按当地燃煤发电基准价结算，浙江为每千瓦时0.4153元。并网前需向电网企业申请。"


@pytest.mark.parametrize(
    ("answer", "supported"),
    [
        ("根据资料[1]，余电上网的电量按当地燃煤发电基准价结算，浙江是0.4153元每千瓦时。", True),
        ("余电上网电量按基准价结算，浙江为每千瓦时0.5元[1]。", False),  # an invented figure
        ("光伏发电是一种清洁的可再生能源，是未来能源发展的重要方向[1]。", False),  # babble citing [1]
        ("余电上网电量按当地燃煤发电基准价结算。", False),  # cites nothing
    ],
)
def test_a_knowledge_answer_must_say_what_its_cited_passage_says(answer, supported):
    assert answer_support(answer, {1: PASSAGE}).supported is supported


def test_window_from_models_reads_the_keys_servers_use():
    assert window_from_models({"data": [{"id": "m", "max_model_len": 8192}]}, "m") == 8192
    assert window_from_models({"data": [{"id": "m", "meta": {"n_ctx": 2048}}]}, "m") == 2048
    assert window_from_models({"data": [{"id": "m", "owned_by": "me"}]}, "m") is None


def test_fitting_drops_earlier_rounds_first_keeps_pairs_and_never_exceeds_the_window():
    gauge = TokenGauge()
    messages = [SystemMessage("系统。"), HumanMessage("用户的问题")]
    for n in range(5):
        messages += [
            AIMessage("", tool_calls=[{"name": "t", "args": {"n": n}, "id": f"c{n}"}]),
            ToolMessage("结果" * 60, tool_call_id=f"c{n}"),
        ]
    fitted, bound = fit_request(messages, [], 200, 1200, gauge)
    assert gauge.estimate(fitted) + bound <= 1200 and bound == 200
    assert fitted[0].content.startswith("系统。") and fitted[1:2] == messages[1:2]
    assert fitted[-2:] == messages[-2:]
    ids = [m.tool_call_id for m in fitted if isinstance(m, ToolMessage)]
    calls = [m.tool_calls[0]["id"] for m in fitted if isinstance(m, AIMessage)]
    assert ids == calls and len(ids) < 5
    assert messages[3].content == "结果" * 60  # the caller's messages are not changed


def test_a_request_that_cannot_fit_is_refused_with_what_to_do():
    with pytest.raises(ModelRejectedError, match="PLANGRAPH_MODEL_CONTEXT") as refused:
        fit_request([SystemMessage("短"), HumanMessage("短")], [], 500, 100, TokenGauge())
    assert refused.value.kind == "overflow"


def test_the_gauge_learns_the_servers_count():
    gauge, messages = TokenGauge(), [HumanMessage("光伏电站" * 50)]
    before = gauge.estimate(messages)  # CJK at 3 tokens a character until the server says otherwise
    gauge.observe(messages, [], 220)
    assert gauge.estimate(messages) < before and gauge.ratio is not None


def _round(n: int, result: str) -> list:
    call = AIMessage("", tool_calls=[{"name": f"search_{n}", "args": {"q": f"问题{n}"}, "id": f"c{n}"}])
    return [call, ToolMessage(result, tool_call_id=f"c{n}")]


def test_dropped_rounds_are_summarised_in_the_system_prompt_by_tool_and_first_result_line():
    messages = [SystemMessage("你是助手。"), HumanMessage("余电上网电价怎么定？")]
    for n in range(5):
        messages += _round(n, f"第{n}条结果的首行\n" + "很长的正文。" * 80)
    gauge = TokenGauge()
    fitted, _ = fit_request(messages, [], 200, 1500, gauge)
    dropped = 5 - sum(isinstance(m, ToolMessage) for m in fitted)
    assert dropped >= 1 and gauge.estimate(fitted) + 200 <= 1500
    systems = [m for m in fitted if isinstance(m, SystemMessage)]
    assert len(systems) == 1 and fitted[0] is systems[0]  # still exactly one system message
    prompt = systems[0].content
    assert prompt.startswith("你是助手。") and f"较早的 {dropped} 轮已省略" in prompt
    for n in range(dropped):  # each dropped round: its tool, its arguments, its result's first line
        assert f'search_{n}({{"q": "问题{n}"}}) → 第{n}条结果的首行' in prompt
    assert "很长的正文" not in prompt  # only first lines
    kept = [m.tool_calls[0]["name"] for m in fitted if isinstance(m, AIMessage)]
    assert kept == [f"search_{n}" for n in range(dropped, 5)]  # rounds kept whole are not in the digest
    assert all(f"search_{n}(" not in prompt for n in range(dropped, 5))
    # deterministic: the same request is fitted to the same text
    assert fit_request(messages, [], 200, 1500, TokenGauge())[0] == fitted


def test_the_digest_lists_the_newest_dropped_rounds_and_counts_the_rest():
    from tools.model.window import DIGEST_ROUNDS, digest

    rounds = [_round(n, f"结果{n}") for n in range(DIGEST_ROUNDS + 3)]
    rounds.append([AIMessage("助手的一段长回答\n第二行")])
    text = digest(rounds)
    assert "更早的 4 轮：从略" in text and "search_0(" not in text
    assert text.splitlines()[-1] == "- 助手：助手的一段长回答"
    assert '- search_4({"q": "问题4"}) → 结果4' in text
    assert digest([]) == ""


def test_without_a_system_prompt_the_digest_becomes_the_only_system_message():
    messages = [HumanMessage("问题")]
    for n in range(4):
        messages += _round(n, "结果。" * 100)
    fitted, _ = fit_request(messages, [], 100, 800, TokenGauge())
    assert isinstance(fitted[0], SystemMessage) and "search_0(" in fitted[0].content
    assert sum(isinstance(m, SystemMessage) for m in fitted) == 1
