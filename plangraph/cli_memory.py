"""`plangraph memory search QUERY` / `blocks`: one conversation's block memory; `facts` / `forget`: a user's long-term facts.

Every agent keeps its own memory per user and conversation (`{agent}_{user}_{conversation}`);
`search` and `blocks` look through all of them for one conversation, as the agents'
`search_block` and `list_blocks` tools do for one agent. `facts` lists what the user stated as
lasting ("我们的电价是0.72", "以后报告都用英文"; kept across conversations, see nodes/standing.py)
and `forget ID` removes one.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["configure_memory", "run_memory"]


def configure_memory(parser: argparse.ArgumentParser) -> None:
    """Arguments of `plangraph memory {search,blocks}`."""
    sub = parser.add_subparsers(dest="memory_command", required=True)
    search = sub.add_parser("search", help="hybrid search (BM25 + vectors) over a conversation's blocks")
    search.add_argument("query")
    search.add_argument("-k", type=int, default=5, help="results per agent (at most 8)")
    blocks = sub.add_parser("blocks", help="list a conversation's blocks (metadata), oldest first")
    facts = sub.add_parser("facts", help="your long-term facts and preferences (kept across conversations)")
    forget = sub.add_parser(
        "forget", help="forget one long-term fact (its id from `memory facts`, or its key)"
    )
    forget.add_argument("fact", help="fact id (f_…) or key (electricity_price, lang, …)")
    for sp in (search, blocks):
        sp.add_argument("--conversation", required=True, help="conversation id (= thread id)")
        sp.add_argument("--agent", default=None, help="only this agent's memory (planner, pv_calc, …)")
    for sp in (search, blocks, facts, forget):
        sp.add_argument("--user", default=None, help="user id (default: PLANGRAPH_USER_ID or 'default')")
        sp.add_argument("--json", action="store_true", help="JSON instead of text")


def _agents() -> list[str]:
    from nodes.agents import agents

    return ["planner", *agents()]


def run_memory(args: argparse.Namespace) -> int:
    """Search or list the blocks of one conversation (every agent's, or `--agent`'s)."""
    from graphs.context import Context
    from graphs.services import ServiceHub
    from plangraph.errors import UserFacingError

    context = Context(conversation_id=getattr(args, "conversation", None) or "default")
    if args.user:
        context.user_id = args.user
    if getattr(args, "data_dir", None):
        context.data_dir = args.data_dir
    if args.memory_command in ("facts", "forget"):
        return _facts(args, context)
    names = _agents()
    if args.agent and args.agent not in names:
        raise UserFacingError(f"没有名为 {args.agent} 的智能体；可选：{', '.join(names)}。")
    memory = ServiceHub().memory(context)
    rows: list[dict[str, Any]] = []
    for agent in [args.agent] if args.agent else names:
        namespace = memory.scope(agent, context.user_id, context.conversation_id)
        if args.memory_command == "search":
            for hit in memory.search(namespace, args.query, k=args.k):
                row = {"agent": agent, "block_id": hit.block_id, **hit.metadata}
                rows.append({**row, "score": round(hit.score, 4), "text": hit.text})
        else:
            rows.extend({"agent": agent, **block} for block in memory.list_blocks(namespace))
    if args.memory_command == "search":
        rows.sort(key=lambda r: -r["score"])
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2, default=str))
        return 0
    if not rows:
        what = f"与“{args.query}”相关的块" if args.memory_command == "search" else "记忆块"
        print(f"会话 {args.conversation}（用户 {context.user_id}）没有{what}。")
        return 0
    for row in rows:
        head = f"{row['agent']} · {row.get('block_id', '')} · {row.get('block_type', '')} · {row.get('create_time', '')}"
        if "score" in row:
            head += f" · 相关度 {row['score']:.3f}"
        print(head)
        print(f"  {row.get('core_semantic', '')}")
        if row.get("keywords"):
            print(f"  关键词：{', '.join(map(str, row['keywords']))}")
        if "text" in row:
            print("  " + row["text"][:300].replace("\n", "\n  "))
    return 0


def _facts(args: argparse.Namespace, context: Any) -> int:
    """List the user's long-term facts, or forget one (exit 1 naming how to list them when it is unknown)."""
    from graphs.services import ServiceHub
    from plangraph.errors import UserFacingError

    store = ServiceHub().memory(context).facts
    user = context.user_id
    if args.memory_command == "forget":
        gone = store.forget(user, args.fact)
        if gone is None:
            raise UserFacingError(
                f"用户 {user} 没有编号或名称为 {args.fact} 的长期记忆；用 plangraph memory facts 查看现有的。"
            )
        print(
            json.dumps(gone.as_dict(), ensure_ascii=False)
            if args.json
            else f"已删除 {gone.fact_id}：{gone.text}"
        )
        return 0
    facts = store.for_user(user)
    if args.json:
        print(json.dumps([f.as_dict() for f in facts], ensure_ascii=False, indent=2))
        return 0
    if not facts:
        print(f"用户 {user} 还没有长期记忆（在对话中说“我们的电价是0.72”或“以后报告都用英文”即会记住）。")
        return 0
    for f in facts:
        print(f"{f.fact_id} · {f.key} · {f.when} · 会话 {f.conversation_id} · 判定：{f.judged_by}")
        print(f"  {f.text}")
        print(f"  原话：{f.said}")
    return 0
