"""Input fuzzing (hypothesis): the CLI's argument handling, resume values, DOT plans and templates.

Properties: never a traceback (only the documented error types), usage mistakes exit with 2,
and a rejected resume value changes nothing a user can see (steps, results, the waiting question).
tests/unit/plans covers well-formed DOT round trips; here the text is broken on purpose.
"""

from __future__ import annotations

import contextlib
import io
import sqlite3
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from langgraph.checkpoint.sqlite import SqliteSaver

from graphs.context import Context
from graphs.main import build_graph
from nodes.agents import agents
from plangraph.cli import main
from plangraph.runner import PlanRunner, UserFacingError
from tests.unit.core.fake_agents import RUNS, SPECS, TEMPLATES
from tests.unit.plans.test_plan_dot import AGENTS, SEED_EP, pv_plan
from tools.plans.dot import PlanFormatError, dot_to_internal_plan, dot_to_plan, parse_dot_graph, plan_to_dot
from tools.plans.workflows import TemplateError, load_template

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
argv_text = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=12)

# -- CLI ---------------------------------------------------------------------------------------

OPTIONS = [
    "--conversation",
    "--user",
    "--format",
    "--output",
    "-o",
    "--json",
    "-v",
    "--answer",
    "--help",
    "--",
]
# Subcommands that only read (run/serve/remind would start work; they have their own tests).
COMMANDS = ["resume", "plan", "pending", "run"]


@st.composite
def odd_argv(draw) -> list[str]:
    head = draw(st.lists(st.sampled_from(["-v", "--json", "--bogus", "-x"]) | argv_text, max_size=2))
    command = draw(st.sampled_from(COMMANDS) | argv_text)
    tail = draw(st.lists(st.sampled_from(OPTIONS) | argv_text, max_size=6))
    argv = [*head, command, *tail]
    if command == "run":  # keep `run` to usage mistakes: an unknown option guarantees one
        argv.append("--no-such-option")
    return argv


@FUZZ
@given(argv=odd_argv())
def test_cli_never_shows_a_traceback_and_usage_errors_exit_2(argv, data_dir):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as stop:  # argparse: 0 for --help, 2 for a usage mistake
            code = stop.code
    assert code in (0, 2, 3) if "--help" in argv or "-h" in argv else code in (0, 1, 2, 3), (argv, code)
    assert "Traceback" not in err.getvalue() + out.getvalue()
    if code == 2:
        assert err.getvalue() or "错误" in out.getvalue() or "error" in out.getvalue()


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["frobnicate"],
        ["run"],
        ["run", "x", "--answer"],
        ["resume"],
        ["plan", "--conversation", "nope", "--format", "gif"],
        ["--conversation", "c1", "resume"],
    ],
)
def test_cli_usage_mistakes_exit_2_with_a_message(argv, data_dir):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()) as out:
        try:
            code = main(argv)
        except SystemExit as stop:
            code = stop.code
    assert code == 2, (argv, code)
    assert (err.getvalue() + out.getvalue()).strip()


# -- resume values -------------------------------------------------------------------------------

# Any integer: those beyond 64 bits (which the checkpointer cannot store) must be rejected up front.
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | argv_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(argv_text, inner, max_size=3),
    max_leaves=6,
)
resume_values = (
    json_values
    | st.dictionaries(
        st.sampled_from(["answer", "city", "seqNo", "answers", "_retry_hint"]), json_values, max_size=3
    )
    | st.text(max_size=40)
)


@pytest.fixture
def fake_runner(data_dir):
    data_dir.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(data_dir / "checkpoints.sqlite", check_same_thread=False)
    graph = build_graph(checkpointer=SqliteSaver(conn), specs=SPECS, templates=TEMPLATES)

    def waiting() -> PlanRunner:
        runner = PlanRunner(graph, Context(user_id="u", conversation_id=uuid.uuid4().hex))
        assert runner.run("查询城市然后汇总").interrupt is not None
        return runner

    yield waiting
    conn.close()


def _visible(runner: PlanRunner) -> tuple:
    state = runner.graph.get_state(runner.config)
    plan = state.values["plan"]
    steps = [(s["seqNo"], s["status"], s["result"]) for s in plan["steps"]]
    return steps, [i.value["seqNo"] for i in state.interrupts]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=resume_values)
def test_any_resume_value_is_answered_or_rejected_without_a_traceback(value, fake_runner):
    runner = fake_runner()
    before = _visible(runner)
    checkpoint = runner.graph.get_state(runner.config).config["configurable"]["checkpoint_id"]
    RUNS.clear()
    try:
        outcome = runner.resume(value)
    except UserFacingError:
        after = runner.graph.get_state(runner.config).config["configurable"]["checkpoint_id"]
        assert after == checkpoint  # rejected up front: nothing was written
        return
    if outcome.interrupt is not None and RUNS["ask_city"] == 0:
        assert _visible(runner) == before  # rejected by ask_user: same question, same steps
        assert outcome.interrupt["question"].endswith("请告诉我项目所在的城市。")
    else:  # accepted: the waiting step ran again, and only it (and its dependant)
        assert RUNS["ask_city"] == 1 and set(RUNS) <= {"ask_city", "use_dep"}


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=200))
def test_every_agents_answer_parser_takes_any_text(text):
    for spec in agents().values():
        parsed = spec.parse_answer(text)
        assert isinstance(parsed, dict)


# -- DOT plans and workflow templates --------------------------------------------------------------


def _valid_texts() -> list[str]:
    texts = [plan_to_dot(pv_plan()), SEED_EP]
    shipped = Path(__file__).parents[2] / "tools" / "plans" / "templates"
    texts += [p.read_text(encoding="utf-8") for p in sorted(shipped.glob("*.dot"))]
    return texts


@st.composite
def mutated_dot(draw) -> str:
    text = draw(st.sampled_from(_valid_texts()))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 30)))
        kind = draw(st.sampled_from(["delete", "insert", "duplicate", "replace"]))
        junk = draw(st.text(alphabet='{}[];=,"\\->\n #0123456789abcxyz状态完成', max_size=8))
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "insert":
            text = text[:i] + junk + text[i:]
        elif kind == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        else:
            text = text[:i] + junk + text[j:]
    return text


def _check_broken_dot(text: str) -> None:
    for parse in (parse_dot_graph, lambda t: dot_to_plan(t, AGENTS), dot_to_internal_plan):
        try:
            parse(text)
        except PlanFormatError as error:
            assert str(error)
    try:
        plan = dot_to_plan(text, AGENTS)
    except PlanFormatError:
        return
    assert dot_to_plan(plan_to_dot(plan), AGENTS) == plan  # whatever parses, round-trips


# pydot parses ~10 texts/s here: a few dozen in `make test`, many more in `make soak`.
@settings(max_examples=40, deadline=None)
@given(text=mutated_dot() | st.text(max_size=300))
def test_broken_dot_is_rejected_only_with_plan_format_error(text):
    _check_broken_dot(text)


@pytest.mark.soak
@settings(max_examples=2000, deadline=None)
@given(text=mutated_dot() | st.text(max_size=300))
def test_broken_dot_is_rejected_only_with_plan_format_error_many(text):
    _check_broken_dot(text)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=mutated_dot())
def test_broken_workflow_template_file_is_a_template_error_naming_the_file(text, tmp_path):
    path = tmp_path / "broken.dot"
    path.write_text(text, encoding="utf-8")
    try:
        template = load_template(path, set(agents()))
    except TemplateError as error:
        assert str(path) in str(error)
        return
    assume(template is not None)
    assert all(s["agentName"] in agents() for s in template.steps)
