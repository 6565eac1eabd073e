"""The PV sub-agents run on a StepContext built directly, with in-memory agent memories."""

import pytest

from nodes.agents import pv_calc, report, reverse_opt, sensitivity
from nodes.kit.step import InMemoryAgentMemory, StepContext
from tests.support.services import recorded_call
from tools.results import InMemoryResults

ANSWER = "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"
S2 = "我已经有测算方案了，对已有的测算方案进行敏感性分析，并生成测算报告"


class Conversation:
    """One user's conversation: a memory per agent, the progress lines, the results index."""

    def __init__(self, tmp_path):
        self.tmp_path = tmp_path
        self.memories: dict[str, InMemoryAgentMemory] = {}
        self.progress: list[str] = []
        self.results = InMemoryResults()

    def memory(self, name):
        return self.memories.setdefault(name, InMemoryAgentMemory(f"{name}_u1_c1"))

    def run(self, agent, query, answers=(), plan="plan-1", seq=0, deps=None):
        ctx = StepContext(
            plan_id=plan,
            seq_no=seq,
            agent_name=agent.AGENT.name,
            requirement=query,
            user_query=query,
            plan_context={"answers": {str(seq): list(answers)}},
            deps=deps or {},
            user_id="u1",
            conversation_id="c1",
            data_dir=self.tmp_path,
            memory=self.memory(agent.AGENT.name),
            emit=self.progress.append,
            results=self.results,
        )
        return agent.AGENT.run(ctx)


@pytest.fixture
def conv(tmp_path):
    return Conversation(tmp_path)


def test_missing_inputs_then_answer_completes(conv):
    first = conv.run(pv_calc, "帮我进行光伏测算")
    assert first["status"] == "interrupted"
    assert first["context"]["missing"] == ["location", "project_type", "capacity_kw"]
    assert all(word in first["output"] for word in ("项目地点", "项目类型", "装机容量"))

    done = conv.run(pv_calc, "帮我进行光伏测算", answers=[ANSWER])
    assert done["status"] == "completed"
    ctx = done["context"]
    assert ctx["inputs"]["location"] == "杭州市余杭区" and ctx["inputs"]["capacity_kw"] == 500
    assert set(ctx["results"]) >= {"npv", "irr", "lcoe", "payback_static", "payback_discounted"}
    assert "cashflow" not in ctx  # the case travels by reference
    case = conv.results.load(ctx["case"])
    assert len(case["cashflow"]) == 26 and case["cashflow"][0]["net_cash_flow"] < 0
    assert conv.results.latest("pv_case").ref == ctx["case"]
    assert "单瓦造价" in done["output"] and "采用默认值" in done["output"]
    assert "正在计算25年现金流…" in conv.progress
    args, structured = recorded_call(conv.memory("pv_calc"), "pv_economics")
    assert args["capacity_kw"] == 500 and structured["results"]["npv"] == pytest.approx(ctx["results"]["npv"])


def test_parse_answer_reads_the_seed_answer():
    assert pv_calc.AGENT.parse_answer(ANSWER) == {
        "location": "杭州市余杭区",
        "project_type": "工商业",
        "capacity_kw": 500.0,
    }


def test_s3_recall_changes_only_the_place(conv):
    first = conv.run(pv_calc, ANSWER + "，电价0.85元/度，造价3.5元/W")["context"]["inputs"]
    second = conv.run(pv_calc, "其他参数不变，将地址更换到上海市后重新进行测算", plan="plan-2")
    assert second["status"] == "completed"
    after = second["context"]["inputs"]
    assert after["location"] == "上海市" and after["feed_in_price"] == 0.4155
    changed = {k for k in first if first[k] != after[k]}
    assert changed == {"location", "specific_yield", "feed_in_price"}  # province and city follow location
    assert "沿用上次测算的参数" in second["output"] and "0.85 元/kWh" in second["output"]


def test_a_follow_up_carries_the_latest_case_and_says_so(conv):
    conv.run(pv_calc, ANSWER + "，造价3.2元/W")
    cheaper = conv.run(pv_calc, "造价降到2.6呢", plan="plan-2")
    inputs = cheaper["context"]["inputs"]
    assert cheaper["status"] == "completed" and inputs["capex_yuan_per_w"] == 2.6
    assert inputs["location"] == "杭州市余杭区" and inputs["capacity_kw"] == 500
    assert "沿用上次测算的参数" in cheaper["output"] and "500 kW" in cheaper["output"]
    # A carried value that no longer fits is named back, with where it came from.
    asked = conv.run(pv_calc, "换成户用", plan="plan-3")
    assert asked["status"] == "interrupted" and "沿用了上次测算" in asked["output"]
    assert "500 kW" in asked["output"] and asked["context"]["missing"] == ["capacity_kw"]
    english = conv.run(pv_calc, "What if it were 1.5 MW?", plan="plan-4")
    assert english["context"]["inputs"]["capacity_kw"] == 1500
    assert "Carried from the last calculation" in english["output"]


def test_a_change_by_an_amount_applies_to_the_latest_case(conv):
    conv.run(pv_calc, ANSWER + "，造价3.2元/W")  # electricity price: the default 0.65
    cheaper = conv.run(pv_calc, "单瓦造价再降0.3元呢", plan="plan-2")
    inputs = cheaper["context"]["inputs"]
    assert cheaper["status"] == "completed" and inputs["capex_yuan_per_w"] == pytest.approx(2.9)
    assert inputs["capacity_kw"] == 500
    assert cheaper["output"].splitlines()[1] == "本次调整：单瓦造价 3.2 元/W → 2.9 元/W；其余沿用上次测算。"
    # a share by ten points; a price by a percentage of the value the case used (a default here)
    more = conv.run(pv_calc, "自发自用比例提高10个百分点，电价上调10%", plan="plan-3")["context"]["inputs"]
    assert more["self_consumption"] == pytest.approx(0.9) and more["electricity_price"] == pytest.approx(
        0.715
    )
    assert more["capex_yuan_per_w"] == pytest.approx(2.9)  # carried
    english = conv.run(pv_calc, "What if we cut the capacity by 200 kW?", plan="plan-4")
    assert english["context"]["inputs"]["capacity_kw"] == 300
    assert "Changed: Capacity 500 kW → 300 kW; the rest carried" in english["output"]


def test_a_change_by_an_amount_without_a_case_says_there_is_none(conv):
    asked = conv.run(pv_calc, "造价再降0.3元/W")
    assert asked["status"] == "interrupted" and "没有找到之前的测算记录" in asked["output"]


def test_a_whole_new_project_carries_nothing(conv):
    conv.run(pv_calc, ANSWER + "，电价0.85元/度")
    fresh = conv.run(pv_calc, "苏州工商业1MW测算", plan="plan-2")
    assert fresh["context"]["inputs"]["electricity_price"] == 0.65  # the default, not 0.85
    assert "沿用" not in fresh["output"]


def test_bad_value_asks_to_correct_it_and_never_raises(conv):
    result = conv.run(pv_calc, ANSWER + "，电价100元/kWh")
    assert result["status"] == "interrupted" and result["context"]["missing"] == ["electricity_price"]
    assert "请确认自用电价" in result["output"]


def test_s2_sensitivity_without_any_calculation_asks_for_inputs(conv):
    result = conv.run(sensitivity, S2)
    assert result["status"] == "interrupted"
    assert "没有找到已有的测算方案" in result["output"] and "装机容量" in result["output"]


def test_s2_sensitivity_and_report_from_memory(conv):
    base = conv.run(pv_calc, ANSWER)["context"]
    sens = conv.run(sensitivity, S2, plan="plan-2")
    assert sens["status"] == "completed"
    assert sens["context"]["base"] == base["case"]  # the existing case, by reference
    rows = conv.results.load(sens["context"]["sensitivity"])["table"]
    assert len(rows) == 20 and {r["change"] for r in rows} == {-0.2, -0.1, 0.1, 0.2}
    capex_up = next(r for r in rows if r["variable"] == "capex_yuan_per_w" and r["change"] == 0.2)
    assert capex_up["irr"] < base["results"]["irr"] and capex_up["npv"] < base["results"]["npv"]
    [chart] = sens["context"]["artifacts"]
    assert (conv.tmp_path / chart).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and sens["context"][
        "artifacts"
    ] == [chart]

    rep = conv.run(report, S2, plan="plan-2", seq=1, deps={0: sens})
    ctx = rep["context"]
    assert (
        rep["status"] == "completed"
        and ctx["data_id"] == conv.results.latest("report").ref
        and ctx["with_sensitivity"]
    )
    markdown = (conv.tmp_path / ctx["report_path"]).read_text(encoding="utf-8")
    assert "杭州市余杭区" in markdown and "敏感性分析" in markdown and "逐年现金流" in markdown
    html = next(p for p in ctx["artifacts"] if p.endswith(".html"))
    assert "<table>" in (conv.tmp_path / html).read_text(encoding="utf-8")
    assert ctx["report_path"] in ctx["artifacts"]


def test_report_rerun_overwrites_and_follows_changed_inputs(conv):
    first = conv.run(pv_calc, ANSWER)
    rep = conv.run(report, "生成测算报告", seq=1, deps={0: first})
    folder = conv.tmp_path / "artifacts" / "u1" / "c1"
    files = sorted(p.name for p in folder.iterdir())
    changed = conv.run(pv_calc, ANSWER.replace("杭州余杭区", "深圳"))
    again = conv.run(report, "生成测算报告", seq=1, deps={0: changed})
    assert sorted(p.name for p in folder.iterdir()) == files
    assert again["context"]["report_path"] == rep["context"]["report_path"]
    assert "深圳市" in (conv.tmp_path / again["context"]["report_path"]).read_text(encoding="utf-8")


def test_sensitivity_caps_self_consumption(conv):
    result = conv.run(sensitivity, ANSWER + "，自发自用比例90%")
    capped = [
        r
        for r in conv.results.load(result["context"]["sensitivity"])["table"]
        if r["variable"] == "self_consumption" and r["change"] > 0.1
    ]
    assert capped[0]["value"] == 1.0 and "封顶" in capped[0]["note"]


def test_reverse_opt_finds_capex_for_target_irr(conv):
    conv.run(pv_calc, ANSWER)
    result = conv.run(reverse_opt, "造价降到多少才能让IRR达到25%", plan="plan-2")
    ctx = result["context"]
    assert result["status"] == "completed" and ctx["feasible"] and ctx["variable"] == "capex_yuan_per_w"
    assert (
        ctx["achieved"] == pytest.approx(0.25, abs=1e-4) and ctx["value"] < ctx["inputs"]["capex_yuan_per_w"]
    )
    assert "单瓦造价最高为" in result["output"]


def test_reverse_opt_price_for_payback_and_unreachable_targets(conv):
    conv.run(pv_calc, ANSWER)
    price = conv.run(reverse_opt, "电价最低多少能4年回本", plan="plan-2")["context"]
    assert price["variable"] == "electricity_price" and price["achieved"] <= 4.0 + 1e-6
    never = conv.run(reverse_opt, "造价需要多少才能让IRR达到500%", plan="plan-3")
    assert (
        never["status"] == "completed" and not never["context"]["feasible"] and "无法实现" in never["output"]
    )
    export_only = conv.run(reverse_opt, ANSWER + "，全额上网，电价最低多少能让IRR达到30%", plan="plan-4")
    assert not export_only["context"]["feasible"] and "自发自用比例为 0" in export_only["output"]


def test_reverse_opt_capacity_needs_the_site_load(conv):
    conv.run(pv_calc, ANSWER)
    asked = conv.run(reverse_opt, "反推装机容量，目标收益率15%", plan="plan-2")
    assert asked["status"] == "interrupted" and asked["context"]["missing"] == ["annual_load_kwh"]
    done = conv.run(reverse_opt, "反推装机容量，目标收益率15%", answers=["年用电量30万度"], plan="plan-2")
    ctx = done["context"]
    assert ctx["feasible"] and ctx["achieved"] >= 0.15 and 300 < ctx["value"] < 50_000


def test_reverse_opt_without_target_asks_for_it(conv):
    result = conv.run(reverse_opt, "帮我做逆向寻优")
    assert result["status"] == "interrupted" and "IRR 达到 8%" in result["output"]


def test_reverse_opt_reads_new_variables_and_targets(conv):
    sc = conv.run(reverse_opt, ANSWER + "，自发自用比例至少要多少，IRR才能到15%")["context"]
    assert sc["variable"] == "self_consumption" and sc["target"] == {"kind": "irr", "value": 0.15}
    assert sc["feasible"] and 0 < sc["value"] < 1 and sc["achieved"] >= 0.15 - 1e-9
    npv = conv.run(
        reverse_opt,
        "Commercial 500 kW in Chengdu: maximum capex per watt for an NPV of at least 1 million yuan?",
    )
    ctx = npv["context"]
    assert ctx["variable"] == "capex_yuan_per_w" and ctx["target"] == {"kind": "npv", "value": 1e6}
    assert ctx["achieved"] == pytest.approx(1e6, rel=1e-4) and "must be at most" in npv["output"]
    feed_in = conv.run(reverse_opt, ANSWER + "，全额上网，上网电价要多少才能让收益率达到7%")["context"]
    assert feed_in["variable"] == "feed_in_price" and feed_in["inputs"]["self_consumption"] == 0.0


def test_reverse_opt_capacity_from_the_load_alone_never_reports_a_bound(conv):
    done = conv.run(reverse_opt, "杭州工商业，年用电量300万度，装多大容量能让IRR不低于15%？")
    ctx = done["context"]
    assert done["status"] == "completed" and ctx["variable"] == "capacity_kw" and ctx["feasible"]
    assert 100 < ctx["value"] < 50_000 and not ctx["unbounded"] and "当前" not in done["output"]
    # A target every capacity meets: the answer says capacity does not limit it, with no number.
    easy = conv.run(reverse_opt, "杭州工商业，年用电量300万度，反推装机容量，IRR达到1%", plan="plan-2")
    assert easy["context"]["unbounded"] and easy["context"]["value"] is None
    assert "不是限制因素" in easy["output"] and "50,000" not in easy["output"]
    # The load is never taken silently from an earlier calculation: it is asked for.
    conv.run(pv_calc, ANSWER + "，年用电量200万度", plan="plan-3")
    asked = conv.run(reverse_opt, "反推装机容量，IRR达到10%", plan="plan-4")
    assert asked["status"] == "interrupted" and asked["context"]["missing"] == ["annual_load_kwh"]


def test_english_request_gets_english_text_and_bad_values_are_named(conv):
    done = conv.run(pv_calc, "Residential 9 kW system in Changsha, tariff 0.6 CNY/kWh, 25-year life")
    inputs = done["context"]["inputs"]
    assert (inputs["location"], inputs["project_type"], inputs["capacity_kw"]) == ("长沙市", "户用", 9)
    assert inputs["electricity_price"] == 0.6 and inputs["lifetime_years"] == 25
    assert done["output"].startswith("PV economics (Changsha") and "Payback" in done["output"]
    assert "Computing the 25-year cash flow…" in conv.progress
    bad = conv.run(pv_calc, "Commercial 1 MW in Suzhou, electricity price -1 yuan/kWh.", plan="plan-2")
    assert bad["status"] == "interrupted" and bad["context"]["missing"] == ["electricity_price"]
    assert "-1 yuan/kWh" in bad["output"] and "Please correct" in bad["output"]
    both = conv.run(pv_calc, "户用5MW，成都，测算", plan="plan-3")
    assert both["status"] == "interrupted" and "5000 kW" in both["output"] and "工商业" in both["output"]
    rep = conv.run(report, "Write the report for it in English", plan="plan-4")
    markdown = (conv.tmp_path / rep["context"]["report_path"]).read_text(encoding="utf-8")
    assert markdown.startswith("# PV economics report: Changsha") and "## Cash flow by year" in markdown


def test_reverse_opt_answers_only_within_the_values_a_calculation_accepts(conv):
    # a feed-in price above what any province pays would be needed: out of reach, with the best IRR
    done = conv.run(
        reverse_opt, "Commercial 1 MW in Wenzhou, all power sold to the grid: feed-in price for a 45% IRR?"
    )
    ctx = done["context"]
    assert ctx["variable"] == "feed_in_price" and ctx["feasible"] is False and ctx["value"] is None
    assert ctx["best_value"] == pytest.approx(1.0) and "out of reach" in done["output"]
    # a reachable one is a price the calculation itself would accept
    fine = conv.run(reverse_opt, "温州工商业1MW全额上网，上网电价最低多少能让IRR达到8%", plan="plan-2")[
        "context"
    ]
    assert fine["feasible"] and 0.1 <= fine["value"] <= 1.0


def test_reverse_opt_asks_which_variable_when_the_words_name_none(conv):
    # a target alone: which value to solve for is the user's to say, not a default (cost per watt)
    asked = conv.run(reverse_opt, "苏州工商业1MW，IRR要到14%")
    assert asked["status"] == "interrupted" and asked["context"]["missing"] == ["solve_for"]
    assert "上网电价" in asked["output"] and "装机容量" in asked["output"]
    done = conv.run(reverse_opt, "苏州工商业1MW，IRR要到14%", answers=["上网电价"])
    ctx = done["context"]
    assert done["status"] == "completed" and ctx["variable"] == "feed_in_price"
    assert ctx["target"] == {"kind": "irr", "value": pytest.approx(0.14)}
    # a new conversation (this one would carry the variable just solved for, as a follow-up does)
    other = Conversation(conv.tmp_path / "other")
    english = other.run(reverse_opt, "Suzhou commercial 1 MW, we need payback within 6 years")
    assert english["status"] == "interrupted" and "which value should I solve for" in english["output"]
