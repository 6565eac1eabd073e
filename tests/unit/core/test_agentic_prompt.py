"""The agent loop's prompt stays within the token budget however many tool turns came before."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from memory.tokens import count_messages_tokens
from nodes.kit.agentic import _invoke
from nodes.kit.agentic_prompt import EARLIER_HEADER, REF_KEY, fit_turn

HEAD = [SystemMessage("你是通用助手。用工具完成任务。"), HumanMessage("帮我看看这个项目的收益")]
PASSAGE = "分布式光伏余电上网部分按当地燃煤发电基准价结算，自发自用部分节省用户电费。" * 12  # ~400 tokens


def _turn(n: int, text: str = PASSAGE) -> list[BaseMessage]:
    call = {"id": f"c{n}", "name": "knowledge_search", "args": {"query": f"问题 {n}"}}
    return [
        AIMessage("", tool_calls=[call]),
        ToolMessage(
            f"第{n}次结果：{text}", tool_call_id=f"c{n}", additional_kwargs={REF_KEY: f"store://{n:032x}"}
        ),
    ]


def _paired(messages: list[BaseMessage]) -> bool:
    """Every tool call is answered right after its message, and no result is orphaned."""
    pending: set[str] = set()
    for m in messages:
        if isinstance(m, ToolMessage):
            if m.tool_call_id not in pending:
                return False
            pending.discard(m.tool_call_id)
        elif pending:
            return False
        elif isinstance(m, AIMessage):
            pending = {c["id"] or "" for c in m.tool_calls}
    return not pending


def test_a_prompt_within_the_budget_is_left_as_it_is():
    loop = _turn(1)
    assert fit_turn(HEAD, loop, 2000) == [*HEAD, *loop]
    assert fit_turn(HEAD, loop, 0) == [*HEAD, *loop]  # no budget: unbounded


def test_older_results_shrink_to_a_preview_naming_their_id_and_the_newest_stays_whole():
    loop = [m for n in range(1, 4) for m in _turn(n)]
    assert count_messages_tokens([*HEAD, *loop]) > 1000
    fitted = fit_turn(HEAD, loop, 1000)
    assert count_messages_tokens(fitted) <= 1000 and _paired(fitted[2:])
    results = [m for m in fitted if isinstance(m, ToolMessage)]
    assert results[-1].content == loop[-1].content  # the newest turn is whole
    assert f"store://{1:032x}" in results[0].text and "load" in results[0].text
    assert loop[1].content == f"第1次结果：{PASSAGE}"  # the loop state is untouched


def test_many_turns_go_whole_and_are_named_in_the_system_message():
    loop = [m for n in range(1, 13) for m in _turn(n)]
    fitted = fit_turn(HEAD, loop, 700)
    assert count_messages_tokens(fitted) <= 700 and _paired(fitted[2:])
    system = fitted[0]
    assert isinstance(system, SystemMessage) and sum(isinstance(m, SystemMessage) for m in fitted) == 1
    assert EARLIER_HEADER in system.text and "knowledge_search" in system.text
    assert f"store://{1:032x}" not in system.text  # only the newest lines are named
    assert f"store://{11:032x}" in system.text
    assert fitted[1] == HEAD[1]  # the request stays


def test_a_newest_turn_too_big_alone_is_cut_to_fit_and_says_where_the_rest_is():
    huge = _turn(1, PASSAGE * 8)
    two = AIMessage(
        "",
        tool_calls=[
            {"id": "a", "name": "knowledge_search", "args": {"query": "甲"}},
            {"id": "b", "name": "find_results", "args": {}},
        ],
    )
    loop = [two, ToolMessage(PASSAGE * 5, tool_call_id="a"), ToolMessage(PASSAGE * 5, tool_call_id="b")]
    for messages in (huge, loop):
        fitted = fit_turn(HEAD, messages, 800)
        assert count_messages_tokens(fitted) <= 800 and _paired(fitted[2:])
    assert f"store://{1:032x}" in fit_turn(HEAD, huge, 800)[-1].text


def test_a_long_tool_result_is_offloaded_whole_and_its_id_kept():
    from langchain_core.tools import StructuredTool

    def knowledge_search(query: str) -> str:
        """Search."""
        return PASSAGE * 10

    kept: list[str] = []

    def offload(text: str) -> str:
        kept.append(text)
        return f"store://{len(kept):032x}"

    tool = StructuredTool.from_function(knowledge_search)
    message = _invoke(tool, {"id": "c1", "name": "knowledge_search", "args": {"query": "电价"}}, offload)
    assert kept == [PASSAGE * 10]
    assert message.additional_kwargs[REF_KEY] == f"store://{1:032x}"
    assert f"store://{1:032x}" in message.text and len(message.text) < len(PASSAGE * 10)
    short = StructuredTool.from_function(lambda query: "没有结果", name="find", description="Find.")
    assert (
        REF_KEY
        not in _invoke(short, {"id": "c2", "name": "find", "args": {"query": "x"}}, offload).additional_kwargs
    )


def test_a_huge_argument_of_the_newest_call_is_cut_before_its_results_are():
    call = {"id": "c1", "name": "knowledge_search", "args": {"query": "电价" * 2500, "k": 3}}
    result = "第1次结果：" + PASSAGE  # ~400 tokens: the evidence the model asked for
    loop = [AIMessage("", tool_calls=[call]), ToolMessage(result, tool_call_id="c1")]
    assert count_messages_tokens([*HEAD, *loop]) > 1200
    fitted = fit_turn(HEAD, loop, 1200)
    assert count_messages_tokens(fitted) <= 1200 and _paired(fitted[2:])
    assert fitted[-1].content == result  # the results stay whole
    model = fitted[-2]
    assert isinstance(model, AIMessage) and model.tool_calls[0]["args"]["k"] == 3
    assert (
        model.tool_calls[0]["args"]["query"].startswith("电价" * 100)
        and "5000 字符" in model.tool_calls[0]["args"]["query"]
    )
    assert loop[0].tool_calls[0]["args"]["query"] == "电价" * 2500  # the loop state is untouched
