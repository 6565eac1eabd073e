"""Soak: a mixed load on two `plangraph serve` processes and the CLI, on PostgreSQL, with kills and a Chroma wipe.

Issue 12: "a mixed load (several users, HTTP and CLI, resumes and new requests, with kills and a
Chroma wipe in the middle) for a few minutes against two server processes on Postgres, counting
lost answers, duplicate step runs and mixed-up results: all must be zero".

- A real PostgreSQL server (tests/support/postgres.py) holds the checkpoints and the turn locks;
  both servers and every CLI process share one data dir (memory, plan store, reports, local Chroma).
- Three HTTP users (one API key each) run conversations one after another, each on a server picked
  at random per request: a request that asks for the project's details then an answer, or a
  request that states them (planned as pv_calc → report). Each conversation has its own capacity (kW) and place, so a result that
  belongs to another conversation is recognisable. A quarter of the answers are sent to both servers
  at once (a double click): exactly one may be taken.
- One CLI user runs `plangraph run … --answer …` processes; every other one is SIGKILLed after a
  random 3–10 s and finished with `plangraph resume`.
- Chaos: SIGKILL server A at 25 % of the run (restarted), delete `<data>/memory/chroma` at 50 %,
  SIGKILL server B at 70 % (restarted), SIGKILL A again at 85 % (restarted).
- A client that loses its connection (its server was killed) or gets 409/503 finds out where its
  conversation stands and carries on (`{"resume": null}`, the answer again, or the request again).

Counted at the end, from the checkpoints (PostgreSQL), the plan store and the agents' run log:
- lost answers: a conversation that did not finish with its own capacity and place in the
  checkpoint and the plan store, or whose report file is missing;
- duplicate step runs: a (plan, step) completed twice, except when the first run's process was
  killed before it logged anything later for that plan (its checkpoint may not have been written:
  the step runs again by design, see "Process killed" in docs/reliability.md);
- mixed-up results: a reply (HTTP output, CLI event) carrying another conversation's plan, a
  conversation with more than one plan, a report outside its user's folder;
- double-accepted answers: both answers of a double click taken.

Run: `make soak`, or `PLANGRAPH_SOAK_SECONDS=300 .venv/bin/pytest -q -s -m soak tests/reliability/test_soak.py`.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from graphs.context import Context
from graphs.main import build_graph
from plangraph.auth import thread_id_for
from plangraph.checkpoint import open_checkpointer
from plangraph.runner import PlanRunner
from tests.reliability.races import RACE_CLI, ROOT, S1, events
from tests.support.postgres import postgres_server
from tools.contracts import artifacts_of
from tools.plans.store import PlanStore

pytestmark = pytest.mark.soak

SOAK_SECONDS = float(os.environ.get("PLANGRAPH_SOAK_SECONDS", "180"))
HTTP_USERS = {
    "soak-key-ann-0123456789": "ann",
    "soak-key-ben-0123456789": "ben",
    "soak-key-cai-0123456789": "cai",
}
CLI_USER = "dan"
PLACES = {"杭州余杭区": "杭州市余杭区", "上海市": "上海市", "南京市": "南京市", "合肥市": "合肥市"}
BUSY = "正在执行另一轮请求"
TURN_TIMEOUT = 240


@dataclass
class Conversation:
    """One conversation of the load and what its client saw."""

    user: str
    conversation: str
    via: str  # "http" | "cli"
    capacity: int
    place: str
    one_shot: bool
    done: bool = False
    answered: bool = False  # the client saw its answer taken (200 / CLI final)
    notes: list[str] = field(default_factory=list)

    @property
    def request(self) -> str:
        if self.one_shot:
            return f"帮我生成一份光伏经济测算报告，地点是{self.place}，工商业，装机容量{self.capacity}kW"
        return S1

    @property
    def answer(self) -> str:
        return f"地点是{self.place}，进行工商业光伏测算，装机容量{self.capacity}kW"


class Tally:
    """Counters and evidence shared by the client threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self.problems: dict[str, list[str]] = defaultdict(list)
        self.killed: dict[int, float] = {}  # pid -> time of its SIGKILL

    def add(self, name: str, n: int = 1) -> None:
        with self.lock:
            self.counts[name] += n

    def problem(self, kind: str, text: str) -> None:
        with self.lock:
            self.problems[kind].append(text[:400])

    def killed_pid(self, pid: int) -> None:
        with self.lock:
            self.killed[pid] = time.time()


class Server:
    """One `plangraph serve` process (tests/reliability/race_cli.py: it logs every agent run)."""

    def __init__(self, name: str, env: dict[str, str], logs: Path) -> None:
        self.name, self.env, self.logs = name, env, logs
        self.proc: subprocess.Popen | None = None
        self.url = ""
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        log = self.logs / f"server-{self.name}-{self.starts}.log"
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, RACE_CLI, "serve", "--port", "0"],
                env=self.env,
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", log.read_text(errors="replace"))
            if found:
                self.url = found.group(1)
                break
            assert self.proc.poll() is None, log.read_text(errors="replace")
            time.sleep(0.1)
        else:
            raise AssertionError(f"server {self.name} did not start: {log.read_text(errors='replace')}")
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"server {self.name} is not healthy")

    def kill(self, tally: Tally) -> None:
        assert self.proc is not None
        tally.killed_pid(self.proc.pid)
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.url = ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _capacity(plan: dict[str, Any]) -> float | None:
    step = next((s for s in plan.get("steps", []) if s["agentName"] == "pv_calc"), None)
    try:
        return float(step["result"]["context"]["inputs"]["capacity_kw"])  # type: ignore[index]
    except (TypeError, KeyError):
        return None


class Load:
    """The clients and the chaos of one soak run."""

    def __init__(self, servers: list[Server], cli_env: dict[str, str], data: Path, tally: Tally) -> None:
        self.servers, self.cli_env, self.data, self.tally = servers, cli_env, data, tally
        self.conversations: list[Conversation] = []
        self.stop_at = time.monotonic() + SOAK_SECONDS
        self.serial = 0
        self.lock = threading.Lock()

    def new_conversation(self, user: str, via: str, rng: random.Random) -> Conversation:
        with self.lock:
            self.serial += 1
            conv = Conversation(
                user=user,
                conversation=f"soak-{via}-{user}-{self.serial}",
                via=via,
                capacity=100 + 7 * self.serial,  # unique per conversation
                place=rng.choice(list(PLACES)),
                one_shot=rng.random() < 0.3,
            )
            self.conversations.append(conv)
            return conv

    def live_url(self, rng: random.Random) -> str:
        while True:
            urls = [s.url for s in self.servers if s.url]
            if urls:
                return rng.choice(urls)
            time.sleep(0.2)

    # -- HTTP ---------------------------------------------------------------------------------

    def http_user(self, key: str, user: str, seed: int) -> None:
        rng = random.Random(seed)
        while time.monotonic() < self.stop_at:
            conv = self.new_conversation(user, "http", rng)
            try:
                self.drive_http(conv, key, rng)
            except Exception as error:  # noqa: BLE001 - counted, the load goes on
                self.tally.problem("client error", f"{conv.conversation}: {error!r}")

    def _invoke(self, url: str, conv: Conversation, key: str, payload: dict[str, Any]) -> httpx.Response:
        body = {"input": payload, "config": {"configurable": {"thread_id": conv.conversation}}}
        return httpx.post(
            f"{url}/plangraph/invoke", json=body, headers={"X-API-Key": key}, timeout=TURN_TIMEOUT
        )

    def _check_output(self, conv: Conversation, output: dict[str, Any]) -> None:
        """A reply must be about this conversation: its id, and its capacity once pv_calc ran."""
        if output.get("conversationId") != conv.conversation:
            self.tally.problem("mixed-up", f"{conv.conversation} got {output.get('conversationId')}")
        capacity = _capacity(output.get("plan") or {})
        if capacity is not None and capacity != conv.capacity:
            self.tally.problem(
                "mixed-up", f"{conv.conversation} ({conv.capacity} kW) got a plan for {capacity} kW"
            )

    def drive_http(self, conv: Conversation, key: str, rng: random.Random) -> None:
        state = "request"
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            url = self.live_url(rng)
            payload: dict[str, Any]
            if state == "request":
                payload = {"messages": [{"role": "user", "content": conv.request}]}
            elif state == "answer":
                payload = {"resume": conv.answer}
            else:  # "unknown": finish what may have been cut off, or learn where it stands
                payload = {"resume": None}
            if state == "answer" and rng.random() < 0.25 and len([s for s in self.servers if s.url]) == 2:
                replies = self._double(conv, key, payload)
                self.tally.add("double clicks")
            else:
                replies = [self._send(url, conv, key, payload)]
            self.tally.add("http requests", len(replies))
            taken = [r for r in replies if isinstance(r, httpx.Response) and r.status_code == 200]
            if len(taken) > 1:
                self.tally.problem("double-accepted", f"{conv.conversation}: both answers taken")
            reply = taken[0] if taken else replies[0]
            if not isinstance(reply, httpx.Response):  # the server died under the request
                self.tally.add("http requests cut off")
                state = "unknown"
                time.sleep(0.5)
                continue
            text = reply.text
            if reply.status_code == 200:
                output = reply.json()["output"]
                self._check_output(conv, output)
                if state == "answer":
                    conv.answered = True
                if "__interrupt__" in output:
                    state = "answer"
                    continue
                conv.done = True
                return
            if reply.status_code == 409 and BUSY in text:
                self.tally.add("409 busy")
                time.sleep(0.3)
            elif reply.status_code == 409 and "正在等待回答" in text:
                state = "answer"
            elif reply.status_code == 409 and "计划已经结束" in text:
                conv.done = True  # finished by an earlier request whose reply was lost
                return
            elif reply.status_code == 409:  # no question waits: a turn was cut off
                state = "unknown"
            elif reply.status_code == 404 and state == "unknown":
                state = "request"  # the request never reached a checkpoint
            elif reply.status_code == 503:
                self.tally.add("503 service unavailable")
                self.tally.problem("503 (not counted as lost)", f"{conv.conversation}: {text}")
                state = "unknown"
                time.sleep(1)
            else:
                self.tally.problem(
                    "unexpected reply", f"{conv.conversation} {state}: {reply.status_code} {text}"
                )
                state = "unknown"
                time.sleep(1)
        self.tally.problem("unfinished", conv.conversation)

    def _send(self, url: str, conv: Conversation, key: str, payload: dict[str, Any]) -> httpx.Response | None:
        try:
            return self._invoke(url, conv, key, payload)
        except httpx.TransportError:
            return None

    def _double(self, conv: Conversation, key: str, payload: dict[str, Any]) -> list[httpx.Response | None]:
        urls = [s.url for s in self.servers if s.url]
        replies: list[httpx.Response | None] = [None, None]
        gate = threading.Barrier(2)

        def one(i: int) -> None:
            gate.wait()
            replies[i] = self._send(urls[i % len(urls)], conv, key, payload)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return sorted(replies, key=lambda r: 0 if r is not None and r.status_code == 200 else 1)

    # -- CLI ----------------------------------------------------------------------------------

    def cli_user(self, seed: int) -> None:
        rng = random.Random(seed)
        n = 0
        while time.monotonic() < self.stop_at:
            conv = self.new_conversation(CLI_USER, "cli", rng)
            n += 1
            try:
                self.drive_cli(conv, rng.uniform(3.0, 10.0) if n % 2 else None)  # every other one killed
            except Exception as error:  # noqa: BLE001 - counted, the load goes on
                self.tally.problem("client error", f"{conv.conversation}: {error!r}")

    def _cli(self, args: list[str], kill_after: float | None = None) -> tuple[int, list[dict], str]:
        proc = subprocess.Popen(
            [sys.executable, RACE_CLI, *args, "--json"],
            env=self.cli_env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        if kill_after is not None:
            try:
                out, err = proc.communicate(timeout=kill_after)
            except subprocess.TimeoutExpired:
                self.tally.killed_pid(proc.pid)
                proc.send_signal(signal.SIGKILL)
                out, err = proc.communicate()
                self.tally.add("CLI processes killed")
                return -9, events(out), err
        else:
            out, err = proc.communicate(timeout=TURN_TIMEOUT)
        return proc.returncode, events(out), err

    def drive_cli(self, conv: Conversation, kill_after: float | None) -> None:
        args = ["run", conv.request, "--conversation", conv.conversation]
        if not conv.one_shot:
            args += ["--answer", conv.answer]
        code, evs, err = self._cli(args, kill_after)
        self.tally.add("CLI processes")
        deadline = time.monotonic() + 900
        while time.monotonic() < deadline:
            last = evs[-1] if evs else {}
            if code == 0 and last.get("event") == "final":
                self._check_output(conv, {"conversationId": conv.conversation, "plan": last.get("plan")})
                conv.answered = conv.done = True
                return
            message = str(last.get("message", ""))
            if code == 3 and last.get("event") == "interrupt":  # the question waits
                code, evs, err = self._cli(["resume", "--conversation", conv.conversation, conv.answer])
            elif code == 2 and "找不到会话" in message:  # killed before the request was checkpointed
                code, evs, err = self._cli(["run", conv.request, "--conversation", conv.conversation])
            elif code == 2 and "计划已经结束" in message:
                conv.done = True
                return
            elif code == 2 and "正在等待回答" in message:
                code, evs, err = self._cli(["resume", "--conversation", conv.conversation, conv.answer])
            elif code in (-9, 1, 2):  # killed, a service fault, or busy: carry on where it stands
                if code == 1:
                    self.tally.add("CLI exit 1 (service fault)")
                    self.tally.problem("CLI exit 1 (not counted as lost)", f"{conv.conversation}: {message}")
                time.sleep(0.3)
                code, evs, err = self._cli(["resume", "--conversation", conv.conversation])
                self.tally.add("CLI processes")
            else:
                self.tally.problem(
                    "unexpected CLI exit", f"{conv.conversation}: {code} {message} {err[-300:]}"
                )
                return
        self.tally.problem("unfinished", conv.conversation)

    # -- chaos --------------------------------------------------------------------------------

    def chaos(self) -> None:
        start = time.monotonic()
        plan = [(0.25, "kill", 0), (0.5, "wipe", None), (0.7, "kill", 1), (0.85, "kill", 0)]
        for at, what, which in plan:
            while time.monotonic() < start + at * SOAK_SECONDS:
                time.sleep(0.2)
            if what == "wipe":
                shutil.rmtree(self.data / "memory" / "chroma", ignore_errors=True)
                self.tally.add("Chroma wipes")
                continue
            server = self.servers[which]  # type: ignore[index]
            server.kill(self.tally)
            self.tally.add("server SIGKILLs")
            time.sleep(1.0)
            server.start()


def _verify(load: Load, data: Path, pg_url: str, run_log: Path, tally: Tally) -> None:
    """Count lost answers, duplicate step runs and mixed-up results from what is stored."""
    store = PlanStore(data / "plans.sqlite")
    with open_checkpointer(data, pg_url) as saver:
        graph = build_graph(checkpointer=saver)
        for conv in load.conversations:
            if not conv.done:
                tally.problem("lost answer", f"{conv.conversation}: the client never saw it finish")
                continue
            context = Context(user_id=conv.user, conversation_id=conv.conversation, data_dir=str(data))
            thread = thread_id_for(conv.user, conv.conversation) if conv.via == "http" else conv.conversation
            runner = PlanRunner(graph, context, thread_id=thread)
            state = runner.snapshot()
            plan = state.values.get("plan") if state else None
            if not plan or state.next or state.interrupts:
                tally.problem("lost answer", f"{conv.conversation}: not finished in the checkpoint")
                continue
            tally.add("conversations finished")
            steps = [(s["agentName"], s["status"]) for s in plan["steps"]]
            expected = ["pv_calc", "report"] if conv.one_shot else ["pv_calc", "sensitivity", "report"]
            if steps != [(name, "completed") for name in expected]:
                tally.problem("lost answer", f"{conv.conversation}: steps {steps}")
                continue
            pv = plan["steps"][0]["result"]["context"]["inputs"]
            if pv.get("capacity_kw") != conv.capacity or pv.get("location") != PLACES[conv.place]:
                tally.problem(
                    "lost answer",
                    f"{conv.conversation}: {pv.get('capacity_kw')} kW {pv.get('location')}, "
                    f"answered {conv.capacity} kW {conv.place}",
                )
            records = store.list(conversation_id=conv.conversation)
            if (
                len(records) != 1
                or records[0]["planId"] != plan["planId"]
                or records[0]["status"] != "completed"
            ):
                tally.problem(
                    "mixed-up",
                    f"{conv.conversation}: plan store {[(r['planId'], r['status']) for r in records]}",
                )
            folder = (data / "artifacts" / conv.user / conv.conversation).resolve()
            files = artifacts_of(plan)
            if not any(f.endswith("_report.md") for f in files):
                tally.problem("lost answer", f"{conv.conversation}: no report")
            for name in files:
                path = Path(name).resolve()
                if not path.exists() or folder not in path.parents:
                    tally.problem("mixed-up", f"{conv.conversation}: report file {name}")
    completed: dict[tuple[str, int], list[dict]] = defaultdict(list)
    by_pid_plan: dict[tuple[int, str], list[float]] = defaultdict(list)
    for line in run_log.read_text().splitlines():
        run = json.loads(line)
        tally.add("step runs")
        by_pid_plan[(run["pid"], run["plan"])].append(run["time"])
        if run["status"] == "completed":
            completed[(run["plan"], run["seqNo"])].append(run)
    for (plan_id, seq), runs in completed.items():
        runs.sort(key=lambda r: r["time"])
        for first, again in zip(runs, runs[1:], strict=False):
            cut_off = (
                first["pid"] in tally.killed and max(by_pid_plan[(first["pid"], plan_id)]) == first["time"]
            )
            if cut_off:
                tally.add("steps re-run after their process was killed (allowed)")
            else:
                tally.problem(
                    "duplicate step run", f"{plan_id} step {seq}: pids {first['pid']}, {again['pid']}"
                )


def test_soak_two_servers_and_the_cli_on_postgres_with_kills_and_a_chroma_wipe(tmp_path):
    data, logs = tmp_path / "data", tmp_path / "logs"
    logs.mkdir()
    run_log = tmp_path / "runs.jsonl"
    tally = Tally()
    with postgres_server() as pg_url:
        base = {k: v for k, v in os.environ.items() if not k.startswith("PLANGRAPH_")}
        base.update(
            PLANGRAPH_DATA_DIR=str(data),
            PLANGRAPH_EMBEDDINGS="hash",
            PLANGRAPH_CHECKPOINT_URL=pg_url,
            PLANGRAPH_TEST_RUN_LOG=str(run_log),
            PLANGRAPH_TEST_STEP_DELAY="0.3",
        )
        server_env = {
            **base,
            "PLANGRAPH_API_KEYS": ",".join(f"{k}:{u}" for k, u in HTTP_USERS.items()),
            "PLANGRAPH_RATE_LIMIT": "0",
        }
        cli_env = {**base, "PLANGRAPH_USER_ID": CLI_USER}
        servers = [Server("A", server_env, logs), Server("B", server_env, logs)]
        try:
            for server in servers:
                server.start()
            load = Load(servers, cli_env, data, tally)
            started = time.monotonic()
            threads = [
                threading.Thread(target=load.http_user, args=(key, user, n), name=f"http-{user}")
                for n, (key, user) in enumerate(HTTP_USERS.items())
            ]
            threads.append(threading.Thread(target=load.cli_user, args=(99,), name="cli"))
            chaos = threading.Thread(target=load.chaos, name="chaos")
            for t in [*threads, chaos]:
                t.start()
            for t in [*threads, chaos]:
                t.join(timeout=SOAK_SECONDS + 1800)
                assert not t.is_alive(), f"{t.name} did not finish"
            elapsed = time.monotonic() - started
        finally:
            for server in servers:
                server.stop()
        _verify(load, data, pg_url, run_log, tally)
    failures = {k: v for k, v in tally.problems.items() if "not counted" not in k}
    summary = {
        "seconds": round(elapsed),
        "conversations": dict(Counter(c.via for c in load.conversations)),
        "answers taken": sum(c.answered for c in load.conversations),
        "counts": dict(sorted(tally.counts.items())),
        "lost answers": len(tally.problems.get("lost answer", [])),
        "duplicate step runs": len(tally.problems.get("duplicate step run", [])),
        "mixed-up results": len(tally.problems.get("mixed-up", [])),
        "problems": {k: v[:5] for k, v in tally.problems.items()},
    }
    print("\nSOAK " + json.dumps(summary, ensure_ascii=False, indent=1))
    (tmp_path / "soak.json").write_text(json.dumps(summary, ensure_ascii=False, indent=1))
    assert not failures, json.dumps(failures, ensure_ascii=False, indent=1)
    assert tally.counts["conversations finished"] == len(load.conversations)
    assert tally.counts["server SIGKILLs"] == 3 and tally.counts["Chroma wipes"] == 1
