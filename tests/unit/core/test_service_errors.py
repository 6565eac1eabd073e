"""A failing service (model endpoint, database, vector server) is a clear error naming it."""

from __future__ import annotations

import sqlite3

import httpx
import openai
import pytest

from plangraph.runner import PlanRunner, ServiceUnavailableError


def _failing(error: Exception):
    def stream(*args, **kwargs):
        raise error
        yield  # pragma: no cover - makes this a generator like CompiledStateGraph.stream

    return stream


@pytest.mark.parametrize(
    ("error", "service"),
    [
        (sqlite3.OperationalError("database is locked"), "存储或检索服务"),
        (ConnectionError("Could not connect to a Chroma server"), "存储或检索服务"),
        (openai.APIConnectionError(request=httpx.Request("POST", "http://127.0.0.1:9/v1")), "模型服务"),
    ],
)
def test_service_failure_names_the_service_and_how_to_continue(data_dir, monkeypatch, error, service):
    with PlanRunner.open(user_id="u", conversation_id="svc") as runner:
        monkeypatch.setattr(runner.graph, "stream", _failing(error))
        with pytest.raises(ServiceUnavailableError) as failure:
            runner.run("帮我生成一份光伏经济测算报告")
    message = str(failure.value)
    assert message.startswith(f"{service}暂时不可用（{type(error).__name__}")
    assert "plangraph resume --conversation svc" in message
    assert failure.value.exit_code == 1


def test_a_programming_error_is_not_disguised_as_an_outage(data_dir, monkeypatch):
    with PlanRunner.open(user_id="u", conversation_id="bug") as runner:
        monkeypatch.setattr(runner.graph, "stream", _failing(KeyError("plan")))
        with pytest.raises(KeyError):
            runner.run("帮我生成一份光伏经济测算报告")
