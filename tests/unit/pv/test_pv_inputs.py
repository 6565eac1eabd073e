"""Chinese free text → fields, and validation that asks instead of guessing units."""

import pytest

from tools.pv.data import feed_in_price, locations
from tools.pv.inputs import parse_fields
from tools.pv.resolve import implausible, resolve_inputs

BASE = "地点是杭州余杭区，工商业项目，"


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("装机容量500kW", "capacity_kw", 500.0),
        ("装机容量2MW", "capacity_kw", 2000.0),
        ("规模0.5兆瓦", "capacity_kw", 500.0),
        ("装机 800 千瓦", "capacity_kw", 800.0),
        ("造价3.5元/W", "capex_yuan_per_w", 3.5),
        ("造价3500元/kWp", "capex_yuan_per_w", 3.5),
        ("单瓦造价 3.2 元/瓦", "capex_yuan_per_w", 3.2),
        ("电价0.85元/度", "electricity_price", 0.85),
        ("电价85分/度", "electricity_price", 0.85),
        ("电价 850 元/MWh", "electricity_price", 0.85),
        ("上网电价0.4153元/kWh", "feed_in_price", 0.4153),
        ("屋顶面积3000平方米", "roof_area_m2", 3000.0),
        ("屋顶1.2万平米", "roof_area_m2", 12000.0),
        ("自发自用比例70%", "self_consumption", 0.7),
        ("全额上网", "self_consumption", 0.0),
        ("首年衰减2%，年衰减0.55%", "annual_degradation", 0.0055),
        ("运营期20年", "lifetime_years", 20.0),
        ("折现率8%", "discount_rate", 0.08),
        ("运维成本0.05元/W·年", "om_yuan_per_w_year", 0.05),
        ("年用电量200万度", "annual_load_kwh", 2_000_000.0),
        ("ＩＲＲ无关，装机容量５００ｋＷ", "capacity_kw", 500.0),
    ],
)
def test_parses_chinese_units_into_canonical_ones(text, key, value):
    assert parse_fields(text)[key] == pytest.approx(value)


def test_the_seed_answer_gives_all_required_fields():
    fields = parse_fields("地点是杭州余杭区，进行工商业光伏测算，装机容量500kW")
    assert fields == {"location": "杭州市余杭区", "project_type": "工商业", "capacity_kw": 500.0}


def test_energy_and_prices_are_not_mistaken_for_capacity():
    fields = parse_fields("年用电量200万kWh，电价0.85元/千瓦时，运维成本0.04元/W·年")
    assert "capacity_kw" not in fields and "capex_yuan_per_w" not in fields


def test_new_place_after_a_change_verb_wins():
    assert parse_fields("把地址从杭州换成上海")["location"] == "上海市"
    assert parse_fields("其他参数不变，将地址更换到上海市后重新进行测算") == {
        "location": "上海市",
        "reuse_previous": True,
    }


def test_roof_area_becomes_capacity_and_is_listed_as_an_estimate():
    res = resolve_inputs(parse_fields(BASE + "屋顶面积3000平方米"))
    assert res.inputs is not None and res.inputs["capacity_kw"] == pytest.approx(300.0)
    assert "3000 m²" in next(d["basis"] for d in res.defaults_used if d["field"] == "capacity_kw")


def test_defaults_follow_the_place_and_type_and_are_stated():
    res = resolve_inputs(parse_fields(BASE + "装机容量500kW，电价0.85元/度"))
    assert res.inputs is not None
    assert res.inputs["feed_in_price"] == feed_in_price("浙江省")[0]
    defaulted = {d["field"] for d in res.defaults_used}
    assert (
        "electricity_price" not in defaulted
        and {"capex_yuan_per_w", "feed_in_price", "specific_yield"} <= defaulted
    )
    assert all(d["basis"] for d in res.defaults_used)


def test_missing_question_names_exactly_what_is_missing():
    res = resolve_inputs(parse_fields("地点是杭州余杭区"))
    assert res.inputs is None and res.missing == ["project_type", "capacity_kw"]
    assert "项目类型" in res.question and "装机容量" in res.question and "项目地点" not in res.question


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        ("装机容量0kW", "capacity_kw", "大于 0"),
        ("装机容量500", "capacity_kw", "kW 还是 MW"),
        ("装机容量500MW", "capacity_kw", "MW"),
        ("装机容量500kW，" + "电价100元/kWh", "electricity_price", "自用电价"),
        ("装机容量500kW，" + "造价3500元/W", "capex_yuan_per_w", "元/kW"),
        ("装机容量500kW，" + "造价3.5", "capex_yuan_per_w", "单位"),
        ("装机容量500kW，" + "自发自用比例150%", "self_consumption", "自发自用比例"),
    ],
)
def test_bad_values_get_one_correction_question(text, field, words):
    res = resolve_inputs(parse_fields(BASE + text))
    assert res.inputs is None and res.missing == [field]
    assert words in res.question


def test_unknown_city_and_household_scale_are_questioned():
    res = resolve_inputs(parse_fields("地点是火星市，工商业，500kW"))
    assert res.missing == ["location"] and "火星市" in res.question
    res = resolve_inputs(parse_fields("杭州 户用 500kW"))
    assert res.missing == ["capacity_kw"] and "户用" in res.question


def test_data_tables_are_plausible_and_sourced():
    for loc in locations():
        assert 900 <= loc.specific_yield <= 1700, loc
        assert loc.source and feed_in_price(loc.province) is not None, loc


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "3MW C&I solar in Hangzhou Xiaoshan",
            {"location": "杭州市萧山区", "project_type": "工商业", "capacity_kw": 3000.0},
        ),
        (
            "Pudong, Shanghai, 2 MW, tariff 0.8 yuan/kWh",
            {"location": "上海市浦东新区", "electricity_price": 0.8},
        ),
        (
            "Xi'an home, 6 kilowatts, self-consumption 100%",
            {"location": "西安市", "project_type": "户用", "self_consumption": 1.0},
        ),
        (
            "cost 2.9 RMB/W, discount rate 7%, 20-year lifetime",
            {"capex_yuan_per_w": 2.9, "discount_rate": 0.07, "lifetime_years": 20.0},
        ),
        (
            "annual consumption 1.5 million kWh, 70% self-consumption",
            {"annual_load_kwh": 1.5e6, "self_consumption": 0.7},
        ),
        (
            "Urumqi factory, exporting everything to the grid",
            {"location": "乌鲁木齐市", "project_type": "工商业", "self_consumption": 0.0},
        ),
        ("电价-1元/度", {"electricity_price": -1.0}),
        (
            "深圳的仓库，单瓦成本3.0元，运营25年",
            {"location": "深圳市", "project_type": "工商业", "capex_yuan_per_w": 3.0, "lifetime_years": 25.0},
        ),
        ("从工商业换成户用", {"project_type": "户用"}),
        ("自用比例只有50%的话呢", {"self_consumption": 0.5}),
    ],
)
def test_english_and_everyday_wording(text, expected):
    fields = parse_fields(text)
    assert {k: fields.get(k) for k in expected} == expected


def test_every_place_has_an_english_spelling_that_finds_it():
    for loc in locations():
        assert loc.names_en, loc.name
        found = parse_fields(f"a project in {loc.names_en[0].title()}, please")
        assert found.get("location") == loc.name, (loc.name, loc.names_en)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Wording between the name and the number ("大概", "每年约", "is about") used to hide the
        # name, and the per-watt amount was then read as the cost per watt (capex 0.05 元/W).
        ("运维成本大概0.05元/W·年", {"om_yuan_per_w_year": 0.05}),
        ("运维大概每年0.04元/瓦", {"om_yuan_per_w_year": 0.04}),
        ("O&M cost is about 0.05 yuan/W per year", {"om_yuan_per_w_year": 0.05}),
        ("造价3.2元/W，运维成本大概0.05元/W·年", {"capex_yuan_per_w": 3.2, "om_yuan_per_w_year": 0.05}),
        # A per-watt amount per year is O&M whatever it is called.
        (
            "per-watt upkeep of 0.05元/W/年 and capex 3.1元/W",
            {"capex_yuan_per_w": 3.1, "om_yuan_per_w_year": 0.05},
        ),
        # The name does not reach past a clause.
        ("运维成本不计，造价3元/W", {"capex_yuan_per_w": 3.0}),
    ],
)
def test_om_cost_with_wording_before_its_value_is_not_capex(text, expected):
    fields = parse_fields(text)
    assert {k: fields[k] for k in expected} == expected
    assert "capex_yuan_per_w" in fields or "capex_yuan_per_w" not in expected
    if "capex_yuan_per_w" not in expected:
        assert "capex_yuan_per_w" not in fields


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("电价7毛", {"electricity_price": 0.7}),
        ("电费一度0.58元", {"electricity_price": 0.58}),
        ("0.9元每千瓦时", {"electricity_price": 0.9}),
        ("造价2块8一瓦", {"capex_yuan_per_w": 2.8}),
        ("单瓦造价按3块算", {"capex_yuan_per_w": 3.0}),
        ("造价3.1元", {"capex_yuan_per_w": 3.1}),  # yuan after a cost's name: per watt when plausible
        ("总装机2.5万千瓦", {"capacity_kw": 25000.0}),
        ("装了400块组件", {}),  # pieces, not yuan
        ("每度电的成本0.35元", {}),  # a cost per kWh is not the electricity price
    ],
)
def test_everyday_chinese_units(text, expected):
    assert {k: v for k, v in parse_fields(text).items() if k != "project_type"} == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "changes"),
    [
        ("造价再便宜0.3元/W", {"capex_yuan_per_w": ("add", -0.3)}),
        ("电价涨10%", {"electricity_price": ("scale", 1.1)}),
        ("自用比例再提高5个百分点", {"self_consumption": ("add", 0.05)}),
        ("装机容量翻一番", {"capacity_kw": ("scale", 2.0)}),
        ("再多200kW呢", {"capacity_kw": ("add", 200.0)}),
        ("reduce the electricity price by 2 cents", {"electricity_price": ("add", -0.02)}),
        ("What if capex were 10% lower?", {"capex_yuan_per_w": ("scale", 0.9)}),
    ],
)
def test_changes_by_an_amount_are_kept_apart_from_values(text, changes):
    fields = parse_fields(text)
    assert set(fields["changes"]) == set(changes)
    for name, (mode, amount) in changes.items():
        assert fields["changes"][name][0] == mode and fields["changes"][name][1] == pytest.approx(amount)
    assert not set(changes) & set(fields)  # not read as the new value itself


@pytest.mark.parametrize(
    "text", ["造价降到2.6", "电价提高到0.8元/度", "最高3元/W", "差不多500kW", "电价多少"]
)
def test_a_new_value_is_not_a_change_by_an_amount(text):
    assert "changes" not in parse_fields(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("装机八百千瓦", {"capacity_kw": 800.0}),
        ("规模一千五千瓦", {"capacity_kw": 1500.0}),  # 一千五 = 1500
        ("装机一百零五千瓦", {"capacity_kw": 105.0}),
        ("两点五兆瓦", {"capacity_kw": 2500.0}),
        ("电价六毛八", {"electricity_price": 0.68}),
        ("单瓦造价两块九", {"capex_yuan_per_w": 2.9}),
        ("自发自用比例百分之七十五", {"self_consumption": 0.75}),
        ("自用八成", {"self_consumption": 0.8}),
        ("年用电量两百万度", {"annual_load_kwh": 2_000_000.0}),
        ("运营期三十年", {"lifetime_years": 30.0}),
        ("three megawatts", {"capacity_kw": 3000.0}),
        ("using 2 million kWh a year", {"annual_load_kwh": 2_000_000.0}),  # "a year" is no number
        ("eight hundred kilowatts", {"capacity_kw": 800.0}),
        ("帮我看一下，便宜一点的方案", {}),  # 一下, 一点: words, not numbers
    ],
)
def test_numbers_written_in_words(text, expected):
    assert {k: v for k, v in parse_fields(text).items() if k != "project_type"} == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "ptype"),
    [
        ("医院楼顶", "工商业"),
        ("我们厂的屋顶", "工商业"),
        ("老家的平房", "户用"),
        ("a hospital roof", "工商业"),
        ("our apartment building", "户用"),
    ],
)
def test_building_words_name_the_project_type(text, ptype):
    assert parse_fields(text)["project_type"] == ptype


def test_two_values_of_one_field_are_asked_about_until_one_is_chosen():
    from tools.pv.inputs import merge_fields

    fields = parse_fields("苏州工商业1MW，装机容量800kW，测算")
    asked = resolve_inputs(fields)
    assert asked.inputs is None and asked.missing == ["capacity_kw"]
    assert "1000 kW" in asked.question and "800 kW" in asked.question
    english = resolve_inputs(
        parse_fields("Commercial 1 MW in Suzhou, tariff 0.7 yuan/kWh, tariff 0.9 yuan/kWh"), lang="en"
    )
    assert "0.7 yuan/kWh and 0.9 yuan/kWh" in english.question
    settled = merge_fields(fields, parse_fields("按800kW"))
    assert resolve_inputs(settled).inputs["capacity_kw"] == 800
    # a change word between the two: the later value, nothing to ask
    assert parse_fields("容量从500kW改成1MW") == {"capacity_kw": 1000.0}
    assert parse_fields("装机容量500kW，即0.5MW") == {"capacity_kw": 500.0}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Set the discount rate to 7%", {"discount_rate": 0.07}),
        ("Let's try 0.7 for the tariff", {"electricity_price": 0.7}),
        ("use 8% as the discount rate", {"discount_rate": 0.08}),
        ("25 years for the lifetime, please", {"lifetime_years": 25.0}),
        ("Push self-consumption up to 85%", {"self_consumption": 0.85}),
        ("Bring the capex down to 2.6 yuan/W", {"capex_yuan_per_w": 2.6}),
        ("capacity from 800 kW to 1.2 MW", {"capacity_kw": 1200.0}),
    ],
)
def test_english_changes_to_a_value(text, expected):
    assert parse_fields(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # any short wording between a name and its value says the value
        ("造价定在2.8元/W", {"capex_yuan_per_w": 2.8}),
        ("电价取0.7试试", {"electricity_price": 0.7}),
        ("寿命算20年吧", {"lifetime_years": 20.0}),
        ("折现率用8%", {"discount_rate": 0.08}),
        ("那造价只需2块9呢", {"capex_yuan_per_w": 2.9}),
        ("运营期定成28年", {"lifetime_years": 28.0}),
        # …but not a range to vary, a target's question, or another field's name
        ("造价和电价各变动10%看看影响", {}),
        ("电价上下浮动15%", {}),
        ("电价至少多少才能6年回本", {}),
        ("电价10%", {}),
    ],
)
def test_any_short_wording_between_a_name_and_its_value(text, expected):
    assert parse_fields(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # self-consumption as a verb, in both languages
        ("如果我们自己能用掉七成的电呢", {"self_consumption": 0.7}),
        ("光伏发的电60%的电自己用", {"self_consumption": 0.6}),
        ("消纳80%", {"self_consumption": 0.8}),
        ("what if we only use 40% of the power ourselves", {"self_consumption": 0.4}),
        ("the mall would self-consume 95% of it", {"self_consumption": 0.95, "project_type": "工商业"}),
        ("70% of the output is used on site", {"self_consumption": 0.7}),
        ("from now on use 8% discount rate", {"discount_rate": 0.08}),  # "use" with no share of the output
        # hedges, gigawatt-hours, 亿千瓦时
        (
            "the plant uses roughly 3.2 million kWh per year",
            {"annual_load_kwh": 3_200_000.0, "project_type": "工商业"},
        ),
        ("we consume 12 GWh a year", {"annual_load_kwh": 12_000_000.0}),
        ("年用电量0.3亿千瓦时", {"annual_load_kwh": 30_000_000.0}),
        # a cost per kW in words
        ("每千瓦造价3300元", {"capex_yuan_per_w": 3.3}),
        ("造价每千瓦3500", {"capex_yuan_per_w": 3.5}),
        ("capex per kW 3,100 yuan", {"capex_yuan_per_w": 3.1}),
        ("单瓦三块一", {"capex_yuan_per_w": 3.1}),
        # spoken decimals and signs
        ("about one point two megawatts", {"capacity_kw": 1200.0}),
        ("tariff zero point six five yuan per kWh", {"electricity_price": 0.65}),
        ("工厂屋顶，一兆二", {"capacity_kw": 1200.0, "project_type": "工商业"}),
        ("电价负0.3元", {"electricity_price": -0.3}),
        ("每千瓦造价三千三", {"capex_yuan_per_w": 3.3}),
        (
            "Commercial 1 MW over a 30-year period",
            {"capacity_kw": 1000.0, "lifetime_years": 30.0, "project_type": "工商业"},
        ),
        ("3000元/kW，电价0.8元", {"capex_yuan_per_w": 3.0, "electricity_price": 0.8}),
        # halves
        ("one and a half megawatts", {"capacity_kw": 1500.0}),
        ("half a megawatt", {"capacity_kw": 500.0}),
        ("一个半兆瓦", {"capacity_kw": 1500.0}),
        ("半兆瓦的厂房", {"capacity_kw": 500.0, "project_type": "工商业"}),
        # one's own house is a household
        ("咱家房子在福州，装10千瓦", {"capacity_kw": 10.0, "location": "福州市", "project_type": "户用"}),
    ],
)
def test_verbs_hedges_and_units_in_everyday_words(text, expected):
    assert parse_fields(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "changes"),
    [
        # changes by an amount without "by" (never a tariff of 10 yuan), and halving or doubling
        ("the tariff went up 10%", {"electricity_price": ("scale", 1.1)}),
        ("capex dropped 0.3", {"capex_yuan_per_w": ("add", -0.3)}),
        ("装机砍一半", {"capacity_kw": ("scale", 0.5)}),
        ("容量增加一倍", {"capacity_kw": ("scale", 2.0)}),
        ("halve the capacity", {"capacity_kw": ("scale", 0.5)}),
        ("what about a 10% cheaper system?", {"capex_yuan_per_w": ("scale", 0.9)}),
        ("what if it were twice as big", {"capacity_kw": ("scale", 2.0)}),
        ("电价打个九折呢", {"electricity_price": ("scale", 0.9)}),
        ("造价打八五折", {"capex_yuan_per_w": ("scale", 0.85)}),
    ],
)
def test_changes_without_by_and_halves(text, changes):
    assert parse_fields(text) == {"changes": changes}


def test_a_speaker_correcting_themself_means_the_later_value():
    assert parse_fields("装机800kW，不对，应该是600kW") == {"capacity_kw": 600.0}
    assert parse_fields("tariff 0.7 yuan/kWh, sorry, I mean 0.75 yuan/kWh") == {"electricity_price": 0.75}
    # two values without a correction are still asked about
    assert "conflicts" in parse_fields("容量500kW，800kW")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "pls calcualte a comercial plant, 2MW, Hangzou",
            {"capacity_kw": 2000.0, "location": "杭州市", "project_type": "工商业"},
        ),
        ("residental 8kw in Gunagzhou", {"capacity_kw": 8.0, "location": "广州市", "project_type": "户用"}),
        # two places one letter apart are both known: neither is "corrected"
        (
            "Commercial 1 MW in Fuzhou",
            {"capacity_kw": 1000.0, "location": "福州市", "project_type": "工商业"},
        ),
        (
            "Commercial 1 MW in Xuzhou",
            {"capacity_kw": 1000.0, "location": "徐州市", "project_type": "工商业"},
        ),
    ],
)
def test_a_typo_one_letter_from_a_known_word_is_read_as_that_word(text, expected):
    assert parse_fields(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a Chinese numeral right after a number is not a number of its own ("0.8一度" is not 0.81)
        ("电费其实是0.8一度", {"electricity_price": 0.8}),
        ("电费五毛八一度", {"electricity_price": 0.58}),
        # a minus sign survives everyday units; passive full export; "only" before a value
        ("电价每度-0.4元", {"electricity_price": -0.4}),
        ("all the power is sold to the grid", {"self_consumption": 0.0}),
        ("if the self-consumption were only 55%", {"self_consumption": 0.55}),
    ],
)
def test_numbers_after_numbers_signs_and_passives(text, expected):
    assert parse_fields(text) == pytest.approx(expected)


def test_scientific_and_hexadecimal_numbers_are_read_whole() -> None:
    """Found by the attack run: "1e3kW" was calculated as 3 kW (the digits after the e)."""
    assert parse_fields("杭州工商业1e3kW光伏")["capacity_kw"] == 1000
    assert parse_fields("Hangzhou commercial 5E2 kW")["capacity_kw"] == 500
    assert parse_fields("hangzhou commercial 1.5e3 kw")["capacity_kw"] == 1500
    assert parse_fields("杭州工商业0x1F4kW")["capacity_kw"] == 500
    assert parse_fields("电价2e-1元/度")["electricity_price"] == pytest.approx(0.2)
    assert parse_fields("杭州工商业1e309kW")["capacity_kw"] == float("inf")  # named back as impossible
    assert parse_fields("hangzhou commercial 100kw, the 2e model")["capacity_kw"] == 100


# --- session 10: clipped words, per-unit prices, the load as a verb, all of the power, both types ---


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a clipped type word is the one long type word it begins
        ("ningbo resi 6kw", {"location": "宁波市", "project_type": "户用", "capacity_kw": 6}),
        (
            "comm. rooftop 400 kw in xiamen",
            {"location": "厦门市", "project_type": "工商业", "capacity_kw": 400},
        ),
        ("indus site of 3mw in wuxi", {"location": "无锡市", "project_type": "工商业", "capacity_kw": 3000}),
        # a price "a unit" / "per unit" is per kWh (the unit of a power bill), "unit cost" stays the capex
        ("power costs us 0.72 yuan per unit", {"electricity_price": 0.72}),
        ("we pay 65 cents a unit", {"electricity_price": 0.65}),
        ("电费65分一度", {"electricity_price": 0.65}),
        ("unit cost 3.2 yuan/W", {"capex_yuan_per_w": 3.2}),
    ],
)
def test_clipped_type_words_and_prices_per_unit(text, expected):
    assert parse_fields(text) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "load"),
    [
        ("厂里每年要用掉两百四十万度电", 2_400_000),
        ("用电量每年约180万度", 1_800_000),
        ("一年用电量将近五百万度", 5_000_000),
        ("年用电量估计120万kWh", 1_200_000),
        ("全年耗电差不多800万千瓦时", 8_000_000),
    ],
)
def test_the_yearly_load_as_a_verb_and_with_hedges(text, load):
    assert parse_fields(text)["annual_load_kwh"] == pytest.approx(load)


def test_generation_and_prices_are_not_a_load():
    assert "annual_load_kwh" not in parse_fields("年发电量100万度")
    assert parse_fields("自用电价0.8元/度") == pytest.approx({"electricity_price": 0.8})


@pytest.mark.parametrize(
    ("text", "share"),
    [
        ("要是发的电全都自家用掉呢", 1.0),
        ("如果厂里能全部消纳的话", 1.0),
        ("suppose we consumed all of it on site", 1.0),
        ("what if all the output were used by us", 1.0),
        ("电都卖给电网的话", 0.0),
    ],
)
def test_all_of_the_power_used_or_sold_by_the_owner(text, share):
    assert parse_fields(text) == pytest.approx({"self_consumption": share})


@pytest.mark.parametrize("text", ["我们都用光伏", "自己都用不完", "全都自己装"])
def test_all_without_the_power_used_is_no_share(text):
    assert "self_consumption" not in parse_fields(text)


def test_both_project_types_named_without_a_choice_are_asked_about():
    both = parse_fields("温州300kW，户用兼工商业")
    assert "project_type" not in both and sorted(both["conflicts"]["project_type"]) == ["工商业", "户用"]
    english = parse_fields("a 300 kW plant in Wenzhou that is residential and commercial")
    assert sorted(english["conflicts"]["project_type"]) == ["工商业", "户用"]
    asked = resolve_inputs(both)
    assert asked.inputs is None and "项目类型" in asked.question and "户用" in asked.question
    # the answer settles it; a choice, a comparison and a correction are no contradiction
    assert resolve_inputs({**both, "project_type": "工商业", "conflicts": {}}).inputs is not None
    assert parse_fields("温州300kW，是工商业还是户用？")["project_type"] == "工商业"
    assert parse_fields("户用跟工商业比，哪个更划算")["project_type"] == "户用"
    assert parse_fields("温州300kW，不是户用而是工商业")["project_type"] == "工商业"
    assert parse_fields("it is not residential, it is commercial")["project_type"] == "工商业"
    assert parse_fields("我家的厂房")["project_type"] == "户用"  # building words are no contradiction


def test_one_value_is_checked_against_the_calculations_ranges():
    assert "电价" in implausible("electricity_price", -0.5) and "0.3–1.5" in implausible(
        "electricity_price", -0.5
    )
    assert "not plausible" in implausible("discount_rate", 0.45, "en")
    assert implausible("electricity_price", 0.65) == "" and implausible("capacity_kw", -5) == ""


# --- places the tables do not hold, and type words inside place names (session 11) ----------------


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("冥王星 户用 6kW", "冥王星"),  # a bare word heading the project
        ("洛阳的纺织厂，装机2MW", "洛阳"),  # a modifier of the building ("X的工厂")
        ("项目位于喀什，工商业800千瓦", "喀什"),  # after a word introducing a place
        ("老家在桂林，房子上装12kW", "桂林"),
        ("河南洛阳，工商业1.5MW", "河南洛阳"),  # province and city are one name
        ("A 2 MW commercial rooftop located in Osaka", "Osaka"),
        ("residential 9 kW near Salt Lake City please", "Salt Lake City"),
    ],
)
def test_a_place_the_tables_do_not_hold_is_named_back(text, named):
    fields = parse_fields(text)
    assert fields["location_unknown"] == named and "location" not in fields
    question = resolve_inputs(fields, lang="en" if text.isascii() else "zh").question
    assert named in question and ("所以还没有测算" in question or "did not calculate" in question)


@pytest.mark.parametrize(
    "text",
    [
        "帮我测算一下工商业500kW",  # verbs and numerals before the type are no place
        "在屋顶上装10kW户用",  # a position on a building (方位词), not a place on the map
        "我在考虑装个户用光伏8kW",  # 在 as "in the middle of" before a verb
        "Please answer in English: commercial 500 kW",  # a language is no place
        "commercial 500 kW, start in March",  # nor a month
    ],
)
def test_words_that_are_no_place_are_not_named_as_one(text):
    assert "location_unknown" not in parse_fields(text)


def test_a_known_place_is_still_found_and_a_change_to_an_unknown_one_is_named():
    assert parse_fields("宁波的仓库屋顶600kW")["location"] == "宁波市"
    assert parse_fields("Hefei commercial 600 kW")["location"] == "合肥市"
    assert parse_fields("南京的项目搬到洛阳再算")["location_unknown"] == "洛阳"  # not silently Nanjing


def test_a_province_alone_offers_its_known_cities():
    question = resolve_inputs(parse_fields("山东 工商业 900kW")).question
    assert "“山东”" in question and "济南市" in question and "青岛市" in question and "杭州市" not in question


@pytest.mark.parametrize(
    ("text", "ptype"),
    [
        ("无锡新区工业园里一户人家的户用屋顶8kW", "户用"),  # 工业 and 园区 of a name, 户用 stated
        ("杭州经济开发区厂区宿舍楼，居民用电，20kW", "户用"),
        ("合肥高新区的住宅小区，但是按工商业报装，300kW", "工商业"),
        ("苏州工业园区 500kW", "工商业"),  # no type named: the park says it
        ("我家的厂房", "户用"),  # building words alone: the first, as before
    ],
)
def test_a_type_named_beats_building_and_place_words(text, ptype):
    assert parse_fields(text)["project_type"] == ptype


def test_a_place_of_no_project_is_not_named():
    # no other value and no move: small talk, not a project's place ("visible from Mongolia")
    assert parse_fields("Can you see the northern lights from Mongolia?") == {}
    assert parse_fields("下周去丽江玩") == {}
    # a move names it even alone
    assert parse_fields("How about Turpan instead?")["location_unknown"] == "Turpan"


@pytest.mark.parametrize(
    ("text", "share"),
    [
        ("厂里自己只用两成，其余都上网", 0.2),
        ("我们自己就能用掉四成，剩下的全部卖给电网", 0.4),
        ("自己大概用三成，多余的都上网", 0.3),
    ],
)
def test_the_rest_sold_is_no_full_export_and_an_adverb_leaves_self_use(text, share):
    # "the rest goes to the grid" sells what self-use leaves: the share is the one stated before it
    assert parse_fields(text)["self_consumption"] == pytest.approx(share)


def test_the_rest_sold_alone_states_no_share():
    assert "self_consumption" not in parse_fields("其余的电都上网")
    assert parse_fields("电全部上网") == {"self_consumption": 0.0}
