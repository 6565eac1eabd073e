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
    assert fitted[:2] == messages[:2] and fitted[-2:] == messages[-2:]
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
