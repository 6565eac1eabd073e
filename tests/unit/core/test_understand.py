"""Offline understanding (nodes/understand.py): the plan a request's words ask for, with the real agents.

The phrasings here are written for these tests; the labelled set in tests/understanding/ measures
accuracy (docs/understanding.md).
"""

from __future__ import annotations

import pytest

from nodes.agents import agents
from nodes.planner import route_index
from nodes.understand import clauses, language, understand
from tools.results import InMemoryResults

SPECS = agents()
INDEX = route_index(SPECS)
CASE = {
    "inputs": {"location": "杭州市余杭区", "project_type": "工商业", "capacity_kw": 500.0},
    "results": {
        "irr": 0.1891,
        "npv": 2234850.7,
        "payback_static": 5.15,
        "lcoe": 0.2728,
        "investment": 1590000.0,
    },
}


def _plan(text: str, results: InMemoryResults | None = None) -> list[tuple[str, list[int]]]:
    found = understand(text, SPECS, INDEX, results or InMemoryResults())
    return [(s["agentName"], s["dependsOn"]) for s in found.steps]


@pytest.fixture
def with_case() -> InMemoryResults:
    results = InMemoryResults()
    results.put("pv_case", "p0", 0, {}, CASE)
    return results


def test_language_and_clauses():
    assert language("帮我算一下 IRR") == "zh" and language("What is the IRR of 500 kW in Hangzhou?") == "en"
    assert clauses("先测算，然后做敏感性分析；最后出报告") == ["先测算", "做敏感性分析", "出报告"]


def test_the_words_name_the_steps_in_order_with_dependencies():
    assert _plan("嘉兴有个800kW的工商业屋顶，先做测算，接着做一下敏感性分析") == [
        ("pv_calc", []),
        ("sensitivity", [0]),
    ]
    assert _plan("南通工商业1.2MW，测算完直接生成报告") == [("pv_calc", []), ("report", [0])]


def test_a_consumer_named_first_still_runs_after_what_it_consumes():
    steps = _plan("苏州工商业2MW光伏，帮我写份报告，报告要包含敏感性分析，当然也要先算收益")
    assert [s[0] for s in steps] == ["pv_calc", "sensitivity", "report"]
    assert steps[2][1] == [0, 1]


def test_a_negated_step_is_left_out():
    assert _plan("只要测算结果，不需要报告：无锡工商业600kW") == [("pv_calc", [])]


def test_the_template_is_a_shortcut_for_what_it_says():
    assert [s for s, _ in _plan("帮我生成一份光伏经济测算报告")] == ["pv_calc", "sensitivity", "report"]


def test_a_target_without_the_capacity_does_not_add_a_calculation_that_would_ask_for_it():
    assert _plan("苏州工商业，年用电量200万度，装机多大时IRR达到9%") == [("reverse_opt", [])]


def test_follow_ups_change_one_value_reuse_the_case_or_ask_about_it(with_case):
    assert _plan("换成上海再算", with_case) == [("pv_calc", [])]
    assert _plan("装机改为800kW", with_case) == [("pv_calc", [])]
    assert _plan("基于这个结果出份报告", with_case) == [("report", [])]
    assert _plan("就在这个方案上做敏感性分析", with_case) == [("sensitivity", [])]
    recalled = understand("那个方案的内部收益率是多少？", SPECS, INDEX, with_case)
    assert recalled.steps == [] and "18.91%" in recalled.reply
    english = understand("and what was the payback?", SPECS, INDEX, with_case)
    assert english.steps == [] and "5.2 years" in english.reply and english.lang == "en"
    # the case is named in English too: place and type as the English step output names them
    assert "(Yuhang, Hangzhou (杭州市余杭区) · commercial & industrial · 500 kW)" in english.reply


def test_without_a_case_a_figure_question_starts_a_calculation():
    assert _plan("这个项目的IRR能到多少") == [("pv_calc", [])]


def test_requests_no_agent_serves_get_an_honest_reply():
    for text, lang in (("帮我订一张明天去北京的机票", "zh"), ("Write me a limerick about cats.", "en")):
        found = understand(text, SPECS, INDEX, InMemoryResults())
        assert found.steps == [] and found.lang == lang
        assert found.reply.startswith("抱歉" if lang == "zh" else "Sorry")
        assert "光伏经济性测算" in found.reply or "PV economic calculation" in found.reply


def test_one_clause_can_ask_for_several_agents_by_their_own_words():
    # no connective between the asks: each word only one agent's title uses names that agent
    assert [s for s, _ in _plan("无锡工商业1.2MW：经济性、敏感性和报告")] == [
        "pv_calc",
        "sensitivity",
        "report",
    ]
    english = _plan(
        "900 kW commercial rooftop in Wuxi: the economics with a sensitivity analysis and a report"
    )
    assert english == [("pv_calc", []), ("sensitivity", [0]), ("report", [0, 1])]


def test_english_words_match_by_stem():
    # "sensitive" is not a word of any example; its stem is the sensitivity agent's
    assert _plan("How sensitive is the IRR of 600 kW commercial in Wuxi?") == [
        ("pv_calc", []),
        ("sensitivity", [0]),
    ]


def test_a_refusal_covers_only_what_it_names():
    assert _plan("Work out the NPV of 600 kW commercial in Wuxi without a sensitivity analysis") == [
        ("pv_calc", [])
    ]
    assert _plan("无锡工商业600kW算一下收益，报告就不用了") == [("pv_calc", [])]


def test_an_a_not_a_question_is_not_a_refusal():
    # "需不需要" contains "不需要": a question about filing, still the knowledge agent's
    assert _plan("工商业分布式光伏需不需要办理备案") == [("knowledge", [])]


def test_a_place_in_a_question_is_not_a_calculation():
    # "苏州" is a value the calculation reads; it does not make a weather question PV work
    found = understand("明天苏州会下雨吗", SPECS, INDEX, InMemoryResults())
    assert found.steps == [] and found.reply.startswith("抱歉")


def test_parts_joined_by_and_are_read_on_their_own():
    assert _plan("宁波工商业1MW的收益和造价涨跌的影响都算一下") == [("pv_calc", []), ("sensitivity", [0])]


def test_a_clause_stating_a_whole_project_asks_for_its_calculation_beside_a_question():
    text = "Work out the numbers for a 600 kW commercial plant in Hefei, and also: can C&I projects still export all of their power to the grid?"
    assert _plan(text) == [("pv_calc", []), ("knowledge", [])]


def test_a_question_near_both_the_calculation_and_the_knowledge_base_names_the_rival():
    found = understand(
        "What documents do I need to register a rooftop solar project?", SPECS, INDEX, InMemoryResults()
    )
    # documents, register: more of its words are the corpus's than the calculation's (session 11:
    # the corpus answers, or says it does not know, instead of the calculation asking for inputs)
    assert [s["agentName"] for s in found.steps] == ["knowledge"]
    plain = understand("Calculate a 1 MW commercial project in Hefei", SPECS, INDEX, InMemoryResults())
    assert plain.alternative == ""


def test_a_switch_to_a_declared_value_is_a_follow_up_not_a_question(with_case):
    # jieba alone cuts 户用 into 户 + 用, characters the knowledge base's titles use
    assert _plan("那就改为户用", with_case) == [("pv_calc", [])]
    assert _plan("项目类型换为工商业再看看", with_case) == [("pv_calc", [])]
    # a corpus term on its own still asks the knowledge base
    assert _plan("绿证到底是什么东西") == [("knowledge", [])]


def test_a_word_pointing_at_the_case_asks_for_no_step_of_its_own(with_case):
    assert _plan("Take this scenario and add a sensitivity analysis.", with_case) == [("sensitivity", [])]
    assert _plan("用上面的方案做一下敏感性", with_case) == [("sensitivity", [])]
    # when nothing else is named, the pointed-at word is the request
    assert _plan("Redo that report.", with_case) == [("report", [])]


def test_a_whole_report_comes_with_what_it_is_made_from(with_case):
    full = [("pv_calc", []), ("sensitivity", [0]), ("report", [0, 1])]
    assert _plan("Prepare a complete report for 2 MW of commercial PV in Wuxi") == full
    assert _plan("给我出一份常州工商业3MW项目的完整报告") == full
    # the conversation's case is used, the rest of the work is done
    assert _plan("now the full report please", with_case) == [("sensitivity", []), ("report", [0])]
    # a report alone stays a report
    assert _plan("Commercial 2 MW in Wuxi: calculate it and write a report") == [
        ("pv_calc", []),
        ("report", [0]),
    ]


def test_a_request_naming_a_workflow_runs_it():
    # "做" carries no work; the request says the template's name
    assert [s for s, _ in _plan("我要做光伏测算报告")] == ["pv_calc", "sensitivity", "report"]


def test_a_question_in_the_domain_goes_to_the_knowledge_base_even_unanswered():
    # the words are the domain's (inverter, warranty): the knowledge agent answers or says it does not know
    assert _plan("Does the inverter warranty cover the panels too?") == [("knowledge", [])]
    assert _plan("逆变器和组件的质保一般多少年") == [("knowledge", [])]
    for text in ("公司年假怎么休", "What's the weather like in Hangzhou this weekend?", "推荐一本好看的小说"):
        assert understand(text, SPECS, INDEX, InMemoryResults()).steps == [], text


def test_a_question_beside_a_whole_project_is_about_that_project():
    found = understand(
        "For a 3 MW C&I rooftop in Jinan, what would the IRR and payback period be?",
        SPECS,
        INDEX,
        InMemoryResults(),
    )
    assert [s["agentName"] for s in found.steps] == ["pv_calc"] and found.alternative == ""


def test_a_supposed_value_is_a_follow_up_on_the_case(with_case):
    # a conditional word in one of sensitivity's examples ("如果发电量少10%…") does not make
    # "if it were residential" a sensitivity analysis: the case is recomputed with the value
    assert _plan("那如果改在上海呢", with_case) == [("pv_calc", [])]
    assert _plan("要是换成户用的话", with_case) == [("pv_calc", [])]
    assert _plan("What if it were residential?", with_case) == [("pv_calc", [])]
    # a relative change states no input value: still the sensitivity analysis's question
    assert _plan("如果发电量少10%，IRR会降到多少", with_case) == [("sensitivity", [])]
    # a yes/no question on a corpus topic stays a question, "呢" or not
    assert _plan("户用光伏要不要备案呢", with_case) == [("knowledge", [])]


def test_a_calculation_of_something_else_is_out_of_scope(with_case):
    # the verb is the calculation's, the thing to calculate is not a word of the domain
    for text, lang in (("帮我算一下车贷利息", "zh"), ("Calculate my mortgage repayments", "en")):
        found = understand(text, SPECS, INDEX, InMemoryResults())
        assert found.steps == [] and found.reply.startswith("抱歉" if lang == "zh" else "Sorry"), text
    assert _plan("帮我算一下光伏收益") == [("pv_calc", [])]
    assert _plan("Please calculate the returns of my rooftop investment") == [("pv_calc", [])]
    # in a conversation holding a case, short words of a follow-up are not judged so
    assert _plan("Now turn that into a report.", with_case) == [("report", [])]


def test_figures_asked_in_everyday_words_are_recalled(with_case):
    for text, figure in (
        ("总共要花多少钱", "159.00 万元"),
        ("回本要多久", "5.2 年"),
        ("What was the upfront investment?", "1,590,000"),
    ):
        found = understand(text, SPECS, INDEX, with_case)
        assert found.steps == [] and figure in found.reply, (text, found.reply)


def test_a_change_with_more_work_recomputes_the_case_first(with_case):
    assert _plan("把电价改成0.8元/度，然后出报告", with_case) == [("pv_calc", []), ("report", [0])]
    assert _plan("With the tariff at 0.8 yuan/kWh, redo the sensitivity analysis", with_case) == [
        ("pv_calc", []),
        ("sensitivity", [0]),
    ]
    assert _plan("就在这个方案上做敏感性分析", with_case) == [("sensitivity", [])]  # nothing changed


def test_a_question_naming_the_domain_goes_to_the_knowledge_base():
    # no agent's words and few of the corpus's, but "光伏" is in every agent's title or description
    assert _plan("光伏支架选铝合金的还是镀锌钢的") == [("knowledge", [])]
    # the domain's name alone asks nothing
    assert understand("光伏", SPECS, INDEX, InMemoryResults()).steps == []


def test_pieces_of_chinese_segmentation_do_not_make_a_pv_request_foreign():
    # jieba leaves pieces no routing text uses ("不划算"); a request naming the domain is the domain's
    assert _plan("帮我测一下楼顶装光伏划不划算") == [("pv_calc", [])]


def test_a_figure_asked_about_a_pointed_at_case_is_recalled_not_recomputed(with_case):
    # the words naming the figure and the thing pointed at ("那个方案") name no work
    found = understand("上面那个方案回本要几年", SPECS, INDEX, with_case)
    assert found.steps == [] and "5.2" in found.reply
    english = understand("How much did that project cost in total?", SPECS, INDEX, with_case)
    assert english.steps == [] and "1,590,000" in english.reply
    # a word of work beside the figure keeps the work
    assert _plan("How sensitive is the NPV to the tariff?", with_case) == [("sensitivity", [])]
    assert _plan("电价变化对IRR影响多大", with_case) == [("sensitivity", [])]


def test_a_wh_question_stating_values_about_the_case_recomputes_it(with_case):
    assert _plan("What would it look like with an 8% discount rate?", with_case) == [("pv_calc", [])]
    assert _plan("那按6%的折现率算出来怎么样", with_case) == [("pv_calc", [])]
    # a yes/no question about a value is not a change to the case
    assert "pv_calc" not in [name for name, _ in _plan("Is 8% a reasonable discount rate?", with_case)]


def test_amounts_of_money_name_no_work():
    # "1.5 million yuan" is an amount; what is calculated (repayments of a loan) is no agent's
    assert _plan("Work out the monthly repayments on a 1.5 million yuan home loan") == []
    assert _plan("Name the planets of the solar system") == []
    assert _plan("Help me evaluate a solar project.") == [("pv_calc", [])]


def test_a_target_asked_after_a_case_is_solved_not_recalled(with_case):
    # "回本" names a figure of the case, but a target's structure asks for reverse optimisation
    assert _plan("再反推一下电价最低多少能7年回本", with_case) == [("reverse_opt", [])]
    assert _plan("And the cheapest tariff for a 6-year payback?", with_case) == [("reverse_opt", [])]


def test_never_mind_refuses_the_work_it_follows():
    assert _plan("厦门工商业1MW，算收益，敏感性分析就算了") == [("pv_calc", [])]
    assert _plan("杭州工商业1MW，跳过敏感性，直接出报告") == [("pv_calc", []), ("report", [0])]
    assert _plan("帮我算了一下，IRR是多少：苏州工商业1MW") == [("pv_calc", [])]


def test_a_question_about_an_earlier_result_gets_that_one():
    results = InMemoryResults()
    results.put("pv_case", "p0", 0, {}, CASE)
    bigger = {
        **CASE,
        "inputs": {**CASE["inputs"], "capacity_kw": 800.0},
        "results": {**CASE["results"], "irr": 0.1702},
    }
    results.put("pv_case", "p1", 0, {}, bigger)
    assert "17.02%" in understand("现在的IRR是多少", SPECS, INDEX, results).reply
    first = understand("第一次算的IRR是多少", SPECS, INDEX, results).reply
    assert "18.91%" in first and first.startswith("第一次测算")
    before = understand("What was the IRR before the change?", SPECS, INDEX, results).reply
    assert "18.91%" in before and before.startswith("From the previous calculation")
    # "first-year" and "initial investment" are figures, not the first result
    assert "17.02%" in understand("IRR and first-year revenue?", SPECS, INDEX, results).reply


def test_a_variable_asked_beside_a_target_is_the_same_reverse_step():
    # "造价最多多少" / "造价得压到多少" ask for the bound the target sets, not for a sensitivity analysis
    assert _plan("苏州工商业1MW，IRR要在8%以上，造价最多多少") == [("pv_calc", []), ("reverse_opt", [0])]
    assert _plan("南京工商业1MW，净现值不少于三百万，造价得压到多少") == [
        ("pv_calc", []),
        ("reverse_opt", [0]),
    ]


def test_a_question_joined_to_a_project_by_and_is_asked_too():
    both = _plan("Compute 1 MW commercial in Suzhou and tell me whether there are still national subsidies")
    assert [name for name, _ in both] == ["pv_calc", "knowledge"]
    beside = _plan(
        "Calculate 600 kW commercial in Hefei and I'd like to know if net metering exists in China"
    )
    assert [name for name, _ in beside] == ["pv_calc", "knowledge"]
    # a question about a project's paperwork is the knowledge base's alone
    assert _plan("苏州工商业1MW的项目需要备案吗") == [("knowledge", [])]


def test_a_request_without_words_is_answered_in_the_language_given(with_case):
    from tools.lang import has_language

    assert not has_language("1.5 MW?") and not has_language("0.65") and has_language("Try 1.5 MW")
    assert understand("2 MW?", SPECS, INDEX, with_case, "en").lang == "en"
    assert understand("2 MW?", SPECS, INDEX, with_case).lang == "zh"


# --- session 10 ---------------------------------------------------------------------------------


def test_sensitive_as_a_question_word_asks_for_the_sensitivity_analysis(with_case):
    assert _plan("这个方案的回收期对造价敏感吗", with_case) == [("sensitivity", [])]
    assert _plan("上面那个项目的NPV对自用比例敏感不敏感", with_case) == [("sensitivity", [])]
    # the figure alone is still recalled
    assert "18.91%" in understand("这个方案的IRR是多少", SPECS, INDEX, with_case).reply


def test_what_the_whole_thing_costs_is_the_investment(with_case):
    for question in ("So what would the full system cost me?", "What did that whole setup end up costing?"):
        found = understand(question, SPECS, INDEX, with_case)
        assert found.steps == [] and "1,590,000" in found.reply, question
    assert _plan("How sensitive is the payback to the cost?", with_case) == [("sensitivity", [])]


@pytest.fixture
def with_reverse() -> InMemoryResults:
    results = InMemoryResults()
    results.put("pv_case", "p0", 0, {}, CASE)
    results.put(
        "pv_reverse", "p1", 1, {}, {"variable": "electricity_price", "target": {"kind": "irr", "value": 0.1}}
    )
    results.put("ep", "p1", 1, {}, {})  # a result of no agent's kind, newer: not the work continued
    return results


def test_a_bare_value_after_a_reverse_optimisation_solves_it_again(with_reverse, with_case):
    for fragment in ("how about 13%?", "那改成9年呢", "OK and 11 percent then"):
        assert _plan(fragment, with_reverse) == [("reverse_opt", [])], fragment
    # after a calculation a bare percentage is no new target, and a named value is a change of the case
    assert _plan("how about 13%?", with_case) == []
    assert _plan("电价0.9呢", with_reverse) == [("pv_calc", [])]


def test_all_of_the_power_used_is_a_change_of_the_case_not_a_report(with_case):
    assert _plan("要是发的电全都自家用掉呢", with_case) == [("pv_calc", [])]
    assert _plan("What if we consumed all of the output on site?", with_case) == [("pv_calc", [])]


def test_a_question_asking_a_fact_not_a_figure_is_the_knowledge_bases():
    # words of a project's size or type are its topic; the corpus's words decide ("voltage", "connect")
    assert _plan("What voltage level does a small residential array of a few kW connect at?") == [
        ("knowledge", [])
    ]
    # no number and no figure asked: the knowledge base's documents decide (the planner asks `serves`)
    for question in ("企业装光伏的话，所得税能少交吗", "屋顶光伏积了一层灰，发电量会少多少"):
        assert understand(question, SPECS, INDEX, InMemoryResults()).alternative == "knowledge", question
    # a figure of the calculation ("几年能回本"), or a project with numbers, stays the calculation's
    payback = understand("我想装光伏，几年能回本？", SPECS, INDEX, InMemoryResults())
    assert [s["agentName"] for s in payback.steps] == ["pv_calc"] and payback.alternative == ""
    sized = understand("杭州工商业500kW几年能回本", SPECS, INDEX, InMemoryResults())
    assert sized.alternative == ""
    # whether it pays is the calculation's question in other words: no word of it is only the corpus's
    for worth in ("老家屋顶装个光伏，能赚到钱吗", "Is rooftop solar worth it for a small shop?"):
        found = understand(worth, SPECS, INDEX, InMemoryResults())
        assert [s["agentName"] for s in found.steps] == ["pv_calc"] and found.alternative == "", worth


def test_a_way_of_doing_something_is_asked_of_the_knowledge_base():
    # "how do I …" / "怎么…" asks a way, not a figure; "收益怎么样" asks how the result looks
    for way in (
        "屋顶能装多少千瓦要怎么估算",
        "组件该怎么清洗才不影响发电",
        "How do I size a system for my roof?",
    ):
        found = understand(way, SPECS, INDEX, InMemoryResults())
        assert [s["agentName"] for s in found.steps] == ["knowledge"] or found.alternative == "knowledge", way
    assert understand("光伏收益怎么样", SPECS, INDEX, InMemoryResults()).alternative == ""


def test_a_light_verb_names_no_work(with_case):
    # "put" is a light verb like "make": "put it in Xining" moves the case, it asks for no document
    assert _plan("Same numbers, but put it in Xining.", with_case) == [("pv_calc", [])]


def test_courtesies_and_places_beside_a_whole_project_ask_nothing_of_the_knowledge_base():
    assert _plan(
        "Would you be so kind as to evaluate a 650 kW commercial rooftop located in Shaoxing, "
        "Zhejiang province? Many thanks in advance."
    ) == [("pv_calc", [])]
    assert _plan("绍兴工商业650kW测算一下，顺便介绍下绿证") == [("pv_calc", []), ("knowledge", [])]


def test_a_stress_test_a_what_if_and_a_memo_are_the_sensitivity_analysis_and_the_report():
    assert _plan("Shaoxing C&I 1.5 MW: the returns, a stress test of them, and a memo for the board") == [
        ("pv_calc", []),
        ("sensitivity", [0]),
        ("report", [0, 1]),
    ]
    assert _plan("嘉兴工商业2MW，测算后做压力测试") == [("pv_calc", []), ("sensitivity", [0])]


def test_a_word_in_an_agents_title_wins_a_near_tie():
    # "测算" is the calculation's title word; the sensitivity analysis's examples use it too
    assert _plan("济南工商业项目，装机0.8MW，年用电量300万kWh，测算一下") == [("pv_calc", [])]


def test_a_template_is_used_only_when_the_words_ask_for_what_it_ends_in():
    # near "敏感性分析报告" (a template's name) but no report asked: the analysis, after the calculation
    assert _plan("温州工商业900kW，做个敏感性分析吧") == [("pv_calc", []), ("sensitivity", [0])]
    assert [s for s, _ in _plan("想做一个光伏测算报告")] == ["pv_calc", "sensitivity", "report"]


@pytest.mark.parametrize(
    "text",
    [
        "Please stress-test the IRR of a 1.5 MW factory in Wuxi",
        "Stress-test the returns on 800 kW of rooftop solar for a hotel in Xiamen",
    ],
)
def test_a_word_only_one_agent_uses_names_it_beside_values(text):
    # the values say which project, "stress-test … returns" (the sensitivity analysis's words) what to do
    assert _plan(text) == [("pv_calc", []), ("sensitivity", [0])]


def test_a_value_name_or_a_lone_rare_word_beside_values_names_no_work():
    # "capex" names a value; "老板" (the boss, who asks) is one word of a report example, no phrase of it
    assert _plan("300 kW warehouse in Foshan, capex 2.9 yuan per watt") == [("pv_calc", [])]
    assert _plan("老板让我看看无锡一个仓库500kW能赚多少") == [("pv_calc", [])]
    # nor a word of one agent's in a clause whose words as a whole are another's (基础 of "基础方案")
    assert _plan("先把无锡800kW工商业的基础方案算出来") == [("pv_calc", [])]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Hangzhou 600 kW commercial, compute the base case and then a tornado chart",
            [("pv_calc", []), ("sensitivity", [0])],
        ),
        (
            "Xiamen 2 MW warehouse: do the base case, then the tariff needed for payback within 5 years",
            [("pv_calc", []), ("reverse_opt", [0])],
        ),
    ],
)
def test_a_word_every_agent_works_on_names_none_of_them(text, expected):
    # "the base case" is what the sensitivity analysis and the report work on: no report was asked for
    assert _plan(text) == expected


def test_a_figure_every_agent_speaks_of_is_the_calculations():
    assert _plan("那个厂房项目的内部收益率大概能有多少") == [("pv_calc", [])]


def test_a_clause_asking_only_for_the_unknown_of_a_target_is_the_reverse_optimisation():
    # the target in one clause, the value sought in another: one reverse optimisation, and no
    # calculation that would ask for a capacity that is the unknown
    assert _plan("长沙工商业，年用电300万度，IRR要做到16%，光伏能装多大") == [("reverse_opt", [])]
    assert _plan("温州工商业1.5MW，要7年回本，自用比例得多高") == [("pv_calc", []), ("reverse_opt", [0])]


def test_a_question_sharing_three_of_the_corpus_words_beside_a_project_asks_it():
    text = "Work out 2 MW commercial in Wuxi, and also tell me: can factories still sell all their power to the grid?"
    assert _plan(text) == [("pv_calc", []), ("knowledge", [])]


def test_each_step_of_a_combined_request_gets_the_words_that_asked_for_it():
    found = understand(
        "嘉兴工商业1MW先测一下；另外问一下分布式光伏现在还有补贴吗？", SPECS, INDEX, InMemoryResults()
    )
    steps = {s["agentName"]: s["requirement"] for s in found.steps}
    assert steps["knowledge"] == "问一下分布式光伏现在还有补贴吗" and "补贴" not in steps["pv_calc"]
    single = understand("嘉兴工商业1MW先测一下", SPECS, INDEX, InMemoryResults())
    assert [s["requirement"] for s in single.steps] == [""]  # the planner gives a lone step the request
