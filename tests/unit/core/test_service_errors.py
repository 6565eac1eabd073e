"""A failing service (model endpoint, database, vector server) is a clear error naming it."""

from __future__ import annotations

import sqlite3

import httpx
import openai
import pytest

from plangraph.runner import PlanRunner, ServiceUnavailableError, UserFacingError


def _failing(error: Exception):
    def stream(*args, **kwargs):
        raise error
        yield  # pragma: no cover - makes this a generator like CompiledStateGraph.stream

    return stream


def _locked() -> sqlite3.OperationalError:
    error = sqlite3.OperationalError("database is locked")
    error.sqlite_errorcode = sqlite3.SQLITE_BUSY  # type: ignore[attr-defined] - set by sqlite3 itself
    return error


@pytest.mark.parametrize(
    ("error", "service"),
    [
        (sqlite3.OperationalError("unable to open database file"), "检查点数据库"),
        (_locked(), "检查点数据库（正被其他进程占用）"),
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


@pytest.mark.parametrize("status", [400, 401, 404])
def test_a_model_endpoint_rejecting_the_request_names_the_status_and_the_settings(
    data_dir, monkeypatch, status
):
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    error = openai.APIStatusError("rejected", response=httpx.Response(status, request=request), body=None)
    with PlanRunner.open(user_id="u", conversation_id="rej") as runner:
        monkeypatch.setattr(runner.graph, "stream", _failing(error))
        with pytest.raises(UserFacingError) as failure:
            runner.run("帮我生成一份光伏经济测算报告")
    message = str(failure.value)
    assert message.startswith(f"模型服务拒绝了请求（HTTP {status}）")
    assert "OPENAI_API_KEY" in message and "plangraph resume --conversation rej" in message
    assert failure.value.exit_code == 1


def test_over_http_the_same_failures_advise_the_api_not_the_command_line(data_dir, monkeypatch):
    from plangraph.runner import HTTP_ADVICE

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    rejected = openai.APIStatusError("rejected", response=httpx.Response(401, request=request), body=None)
    with PlanRunner.open(user_id="u", conversation_id="web") as cli_runner:
        runner = PlanRunner(cli_runner.graph, cli_runner.context, advice=HTTP_ADVICE)
        messages = []
        for error in (ConnectionError("Could not connect to a Chroma server"), rejected):
            monkeypatch.setattr(runner.graph, "stream", _failing(error))
            with pytest.raises(UserFacingError) as failure:
                runner.run("帮我生成一份光伏经济测算报告")
            messages.append(str(failure.value))
    for message in messages:
        assert "plangraph" not in message and "--conversation" not in message
        assert '在会话 web 上发送 {"resume": null} 继续' in message
    assert "OPENAI_API_KEY" not in messages[1] and "服务管理员" in messages[1]
