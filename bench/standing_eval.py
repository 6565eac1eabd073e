"""How well the offline rule of nodes/standing.py tells lasting facts from one-off values.

    PYTHONPATH=. .venv/bin/python bench/standing_eval.py

`bench/data/standing_cases.jsonl`: 30 requests (15 stating a lasting fact, 15 not: one-off
values, questions, projects' own facts, other topics), written after the rule and run once; the
rule was not changed after. A case is right when the rule keeps exactly its facts (keys and values).
"""

from __future__ import annotations

import json
from pathlib import Path

from nodes.agents import agents
from nodes.planner import route_index
from nodes.standing import judge


def main() -> None:
    specs = agents()
    index = route_index(specs, templates=[])
    cases = [
        json.loads(line) for line in Path(__file__).with_name("data").joinpath("standing_cases.jsonl").open()
    ]
    right, kept, wrong_kept, missed = 0, 0, 0, 0
    for case in cases:
        found = {s.key: s.value for s in judge(case["text"], specs, index)}
        want = case["facts"]
        ok = found.keys() == want.keys() and all(
            abs(float(found[k]) - float(v)) < 1e-9 if not isinstance(v, str) else found[k] == v
            for k, v in want.items()
        )
        right += ok
        kept += len(found)
        wrong_kept += len(set(found) - set(want)) + sum(
            1 for k in set(found) & set(want) if found[k] != want[k]
        )
        missed += len(set(want) - set(found))
        if not ok:
            print(f"✗ {case['text']}  expected {want}  got {found}")
    facts = sum(len(c["facts"]) for c in cases)
    print(
        f"\n{right}/{len(cases)} cases right; facts kept {kept - wrong_kept}/{facts} (recall), "
        f"{wrong_kept} kept wrongly (precision {(kept - wrong_kept) / kept if kept else 0:.0%}), {missed} missed"
    )


if __name__ == "__main__":
    main()
