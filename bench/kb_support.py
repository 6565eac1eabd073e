"""How well `tools.kb.support.answer_support` tells supported knowledge answers from gibberish.

    PYTHONPATH=. .venv/bin/python bench/kb_support.py

Cases are built over the 29 shipped notes (tools/kb/docs/), each note cited as source [1]:

- good: (a) one or two of its sentences behind a lead-in ("根据资料[1]，…"), (b) a shortened
  version (its clauses before the first comma of two sentences, reordered), (c) the hand-written
  paraphrases of `PARAPHRASES` (a model's own words);
- gibberish: (d) another note's sentence cited as [1] (a wrong citation), (e) the note's own
  sentence with every number changed (an invented figure), (f) fluent generic babble of the kind
  SmolLM2-135M writes (`BABBLE`, Chinese and English), citing [1].

Notes with an even position are the development split (the threshold was chosen there), odd ones
the test split (reported). Prints per-split counts, accuracy, the rate of gibberish accepted and
of good answers rejected.
"""

from __future__ import annotations

import re

from tools.kb.corpus import SHIPPED_KB_DIR, read_document, scan_documents
from tools.kb.support import answer_support

BABBLE = (
    "光伏发电是一种清洁的可再生能源，它可以帮助我们保护环境，是未来能源发展的重要方向[1]。",
    "太阳能是非常好的能源，我们应该大力发展太阳能，让生活更加美好[1]。",
    "这个问题非常重要，需要根据具体情况进行具体分析，建议咨询专业人士[1]。",
    "Solar energy is a very good energy and it is the future of the world and people like it [1].",
    "The photovoltaic is the the system of energy which is very important for the planet [1].",
    "光伏光伏光伏，电价电价政策，我们我们可以可以[1]。",
    "In conclusion, the answer depends on many factors such as weather, location and policy [1].",
    "分布式光伏具有很多优点，比如安装方便、节能环保、经济效益好等等[1]。",
)
# (file name, a good answer in other words than the note's)
PARAPHRASES = (
    ("02_grid_modes.md", "分布式光伏可以选择全部自用、自发自用余电上网或者全额上网这几种上网模式[1]。"),
    ("06_coal_benchmark_price.md", "燃煤发电基准价是各省统一规定的价格，光伏余电上网常按它来结算[1]。"),
    (
        "04_market_pricing_136.md",
        "按照136号文，新能源上网电量原则上都要进入电力市场，电价由市场交易形成[1]。",
    ),
    ("07_time_of_use.md", "分时电价把一天分成峰、平、谷等时段，不同时段电价不同[1]。"),
    ("05_grid_parity_2021.md", "从2021年起，新备案的工商业分布式光伏不再有中央财政补贴，实行平价上网[1]。"),
    (
        "01_distributed_pv_categories.md",
        "分布式光伏按照用户类型分为自然人户用、非自然人户用和工商业分布式光伏等类别[1]。",
    ),
)
_SENT = re.compile(r"[^。！？\n]+[。！？]?")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENT.findall(text) if len(s.strip()) > 6]


def _changed(sentence: str) -> str:
    return re.sub(r"\d+", lambda m: str(int(m.group(0)) * 3 + 7), sentence)


def cases() -> list[tuple[str, int, str, str, bool]]:
    """(split, note position, kind, answer, good?) for every case; the cited note is that position's."""
    documents = scan_documents([SHIPPED_KB_DIR])
    notes = sorted(
        ((key, p) for key, path in documents.items() for p in read_document(path, key)), key=lambda kp: kp[0]
    )
    out = []
    for pos, (key, passage) in enumerate(notes):
        split = "dev" if pos % 2 == 0 else "test"
        own = _sentences(passage.text)
        other = _sentences(notes[(pos + 7) % len(notes)][1].text)
        out.append((split, pos, "a lead-in + sentences", f"根据资料[1]，{''.join(own[:2])}", True))
        short = [s.split("，")[0] for s in own[:2]]
        out.append((split, pos, "shortened, reordered", "；".join(reversed(short)) + "[1]。", True))
        for name, text in PARAPHRASES:
            if key.endswith(name):
                out.append((split, pos, "paraphrase", text, True))
        out.append((split, pos, "wrong citation", f"{other[0]}[1]", False))
        numbered = [s for s in own if re.search(r"\d", s)]
        if numbered:
            out.append((split, pos, "invented figure", f"{_changed(numbered[0])}[1]", False))
        out.append((split, pos, "babble", BABBLE[pos % len(BABBLE)], False))
    return out


def main() -> None:
    """Evaluate every case; print one line per split and the misjudged cases of the test split."""
    documents = scan_documents([SHIPPED_KB_DIR])
    notes = sorted(
        ((key, p) for key, path in documents.items() for p in read_document(path, key)), key=lambda kp: kp[0]
    )
    rows = cases()
    for split in ("dev", "test"):
        mine = [r for r in rows if r[0] == split]
        verdicts = [(r, answer_support(r[3], {1: notes[r[1]][1].text}).supported) for r in mine]
        good = [v for r, v in verdicts if r[4]]
        bad = [v for r, v in verdicts if not r[4]]
        right = sum(v == r[4] for r, v in verdicts)
        print(
            f"{split}: {len(mine)} answers ({len(good)} good, {len(bad)} gibberish); accuracy {right}/{len(mine)} "
            f"= {right / len(mine):.0%}; gibberish accepted {sum(bad)}/{len(bad)}; "
            f"good rejected {len(good) - sum(good)}/{len(good)}"
        )
        if split == "test":
            for r, v in verdicts:
                if v != r[4]:
                    print(f"  misjudged ({r[2]}): {r[3][:70]}")


if __name__ == "__main__":
    main()
