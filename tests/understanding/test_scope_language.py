"""Places, scope and language (session 11) end to end: `plangraph run --json`, offline and with a model.

Conversations written for these tests (not in cases.jsonl or any held-out set): a place the PV
tables do not hold named back (never replaced, nothing recorded), a park's name beside an explicit
type, small talk naming a city, a request mixing Chinese and English answered in the language
mainly written, a fact question no document answers. The model-mode runs plan each turn as
labelled through the local OpenAI-compatible server; values, questions and language must come out
as offline.
"""

from __future__ import annotations

import pytest

from tests.support.openai_server import ScriptedOpenAIServer
from tests.understanding.test_understanding import assert_right, bench
from tests.understanding.test_understanding_model_mode import _planning_model

CALC = [["pv_calc", []]]


def _turn(request: str, plans: list, params: dict | None = None, lang: str = "zh", **more) -> dict:
    expect = {"plans": plans, "params": params or {}, "question": False, "lang": lang, **more}
    return {"request": request, "expect": expect}


def _unknown(request: str, place: str, lang: str = "zh", *also: str) -> dict:
    """A turn naming a place the tables lack: asked back by name, nothing recorded."""
    turn = _turn(request, [CALC, []], lang=lang, mentions=[place, *also], no_result=True)
    turn["expect"]["question"] = True
    return turn


CONVERSATIONS = {
    "unknown-city-zh": [_unknown("景德镇的陶瓷厂房顶，工商业1.5MW，测一下", "景德镇")],
    "unknown-city-en": [_unknown("Work out a 700 kW commercial rooftop based in Guilin", "Guilin", "en")],
    "unknown-province-zh": [_unknown("四川 户用 10kW 算一下回本", "四川", "zh", "成都市")],
    "moved-to-unknown-en": [
        _turn(
            "Commercial 900 kW in Wuxi, calculate please.",
            [CALC],
            {"location": "无锡市", "project_type": "工商业", "capacity_kw": 900},
            "en",
        ),
        _unknown("And if the plant were in Dali instead?", "Dali", "en"),
    ],
    "park-name-type-zh": [
        _turn(
            "南京江北新区化工园区旁一栋居民楼的户用屋顶，5kW",
            [CALC],
            {"location": "南京市", "project_type": "户用", "capacity_kw": 5},
        )
    ],
    "small-talk-city-zh": [_turn("这周六厦门会不会出太阳，想去鼓浪屿", [[]])],
    "small-talk-city-en": [_turn("Any chance of sunshine in Qingdao on Sunday?", [[]], lang="en")],
    "mixed-zh": [
        _turn(
            "麻烦算下 Chongqing 这边一个 household 屋顶，7kW，payback 多少年",
            [CALC],
            {"location": "重庆市", "project_type": "户用", "capacity_kw": 7},
        )
    ],
    "mixed-en": [
        _turn(
            "What IRR would a 户用 system of 9 kW get in 长沙?",
            [CALC],
            {"location": "长沙市", "project_type": "户用", "capacity_kw": 9},
            "en",
        )
    ],
}
CASES = {
    name: {"id": name, "kind": "scope", "lang": turns[-1]["expect"]["lang"], "turns": turns}
    for name, turns in CONVERSATIONS.items()
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_scope_and_language_offline(name, data_dir, tmp_path):
    case = CASES[name]
    assert_right(case, bench.run_case(case, tmp_path / "runs"))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["unknown-city-zh", "moved-to-unknown-en", "park-name-type-zh", "mixed-zh"])
def test_scope_and_language_in_model_mode(name, model_env, tmp_path):
    # the model plans each turn as labelled and fills no field: the places, types and language still come
    # from the user's words
    case = CASES[name]
    with ScriptedOpenAIServer([], responder=_planning_model(case)) as server:
        model_env(server, timeout=10)
        observed = bench.run_case(case, tmp_path / "runs")
    assert_right(case, observed, ("params", "question", "language"))
