"""The knowledge agent as the executor runs it: cited answers, "我不知道", user folders, model mode."""

from __future__ import annotations

from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from nodes.agents.knowledge import AGENT
from nodes.kit.step import InMemoryAgentMemory, StepContext
from tests.support.services import env_embeddings, recorded_call
from tools.kb.corpus import SHIPPED_KB_DIR, kb_dirs, scan_documents
from tools.kb.index import KnowledgeIndex

_INDEXES: dict = {}


def _index(data_dir, folder):
    key = (str(data_dir), folder)
    if key not in _INDEXES:
        _INDEXES[key] = KnowledgeIndex(data_dir, kb_dirs(folder), env_embeddings())
    return _INDEXES[key]


def _ctx(data_dir, question, answers=None, model=None, memory=None, kb_folder=""):
    events: list[str] = []
    ctx = StepContext(
        plan_id="p1",
        seq_no=0,
        agent_name="knowledge",
        requirement=question,
        user_query=question,
        plan_context={"answers": {"0": answers}} if answers else {},
        deps={},
        user_id="u",
        conversation_id="c",
        data_dir=data_dir,
        memory=memory or InMemoryAgentMemory(),
        emit=events.append,
        model=model,
        knowledge=lambda: _index(data_dir, kb_folder),
    )
    return ctx, events


def test_policy_question_is_answered_with_numbered_citations(data_dir):
    ctx, events = _ctx(data_dir, "一般工商业分布式光伏还能选择全额上网吗？")
    result = AGENT.run(ctx)
    assert result["status"] == "completed"
    out = result["output"]
    assert "[1]" in out and "参考来源：" in out
    assert "自发自用余电上网" in out
    first = result["context"]["citations"][0]
    assert first["n"] == 1 and "国能发新能规〔2025〕7号" in first["source"]
    assert f"[1] 《{first['title']}》" in out
    assert any("检索知识库" in e for e in events)
    call = recorded_call(ctx.memory, "kb_search")
    assert call is not None and call[0]["query"] == "一般工商业分布式光伏还能选择全额上网吗？"


def test_unrelated_question_gets_i_dont_know_with_what_was_searched(data_dir):
    ctx, _ = _ctx(data_dir, "红烧肉怎么做才好吃？")
    result = AGENT.run(ctx)
    assert result["status"] == "completed"
    assert result["output"].startswith("我不知道")
    assert "红烧肉" in result["output"] and "篇文档" in result["output"]
    assert result["context"]["found"] is False and result["context"]["citations"] == []


def test_question_without_a_topic_asks_what_to_look_up_then_answers(data_dir):
    ctx, _ = _ctx(data_dir, "请问一下")
    asked = AGENT.run(ctx)
    assert asked["status"] == "interrupted" and asked["context"]["missing"] == ["question"]
    assert "并网流程" in asked["output"]
    ctx, _ = _ctx(data_dir, "请问一下", answers=["分布式光伏并网流程是怎样的"])
    answered = AGENT.run(ctx)
    assert answered["status"] == "completed" and "[1]" in answered["output"]
    assert "并网" in answered["context"]["citations"][0]["title"]


def test_user_folder_is_indexed_incrementally_and_cited(data_dir, tmp_path):
    folder = tmp_path / "my_kb"
    folder.mkdir()
    doc = folder / "park.md"
    doc.write_text(
        "# 园区屋顶租赁\n来源：滨江园区管委会通知（2024年第3号）\n\n园区厂房屋顶租金为每年每平方米5元。\n",
        "utf-8",
    )
    ctx, events = _ctx(data_dir, "园区厂房屋顶租金是多少？", kb_folder=str(folder))
    result = AGENT.run(ctx)
    assert "每平方米5元" in result["output"]
    assert result["context"]["citations"][0]["source"] == "滨江园区管委会通知（2024年第3号）"
    shipped = len(scan_documents([SHIPPED_KB_DIR]))
    assert result["context"]["index"]["added"] == shipped + 1

    doc.write_text(
        "# 园区屋顶租赁\n来源：滨江园区管委会通知（2025年第1号）\n\n园区厂房屋顶租金调整为每年每平方米6元。\n",
        "utf-8",
    )
    ctx, events = _ctx(data_dir, "园区厂房屋顶租金是多少？", kb_folder=str(folder))
    result = AGENT.run(ctx)
    assert result["context"]["index"] == {"documents": shipped + 1, "added": 0, "updated": 1, "removed": 0}
    assert "每平方米6元" in result["output"] and "5元" not in result["output"]
    assert "知识库已更新：新增 0 篇，更新 1 篇，移除 0 篇。" in events

    doc.unlink()
    ctx, _ = _ctx(data_dir, "园区厂房屋顶租金是多少？", kb_folder=str(folder))
    result = AGENT.run(ctx)
    assert result["context"]["index"]["removed"] == 1
    assert result["output"].startswith("我不知道")


class CountingEmbeddings(Embeddings):
    """Hash embeddings that count how many documents were embedded."""

    def __init__(self) -> None:
        self.inner = DeterministicFakeEmbedding(size=64)
        self.embedded = 0

    def embed_documents(self, texts):
        self.embedded += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


def test_restart_does_not_embed_unchanged_documents_again(tmp_path):
    first = CountingEmbeddings()
    assert KnowledgeIndex(tmp_path, [SHIPPED_KB_DIR], first).refresh().added >= 20
    assert first.embedded >= 20
    again = CountingEmbeddings()  # a new process opening the same data dir
    index = KnowledgeIndex(tmp_path, [SHIPPED_KB_DIR], again)
    report = index.refresh()
    assert not report.changed and report.unchanged >= 20
    assert again.embedded == 0
    assert index.search("绿证对应多少电量", k=1)[0].passage.title.startswith("绿色电力证书")


def test_model_answer_keeps_only_citations_of_retrieved_sources(data_dir):
    model = GenericFakeChatModel(messages=iter([AIMessage("余电上网部分按当地燃煤基准价结算[1][9]。")]))
    ctx, _ = _ctx(data_dir, "国内余电上网怎么结算，是净计量吗？", model=model)
    result = AGENT.run(ctx)
    assert result["output"].startswith("余电上网部分按当地燃煤基准价结算[1]。")
    assert "[9]" not in result["output"]
    assert [c["n"] for c in result["context"]["citations"]] == [1]


def test_model_that_does_not_know_yields_i_dont_know(data_dir):
    model = GenericFakeChatModel(messages=iter([AIMessage("我不知道。")]))
    ctx, _ = _ctx(data_dir, "国内余电上网怎么结算，是净计量吗？", model=model)
    result = AGENT.run(ctx)
    assert result["output"].startswith("我不知道") and "余电" in result["output"]
    assert result["context"]["found"] is False


def test_model_reply_without_citations_falls_back_to_the_cited_extract(data_dir):
    model = GenericFakeChatModel(messages=iter([AIMessage("按基准价结算。")]))
    ctx, _ = _ctx(data_dir, "国内余电上网怎么结算，是净计量吗？", model=model)
    result = AGENT.run(ctx)
    assert result["output"].startswith("关于“国内余电上网怎么结算")
    assert "[1]" in result["output"] and result["context"]["found"] is True


def test_registry_entry_routes_policy_questions_here():
    assert AGENT.name == "knowledge" and AGENT.tools == ("kb_search",)
    assert any("并网" in e for e in AGENT.examples)
    assert "余电上网" in AGENT.description
