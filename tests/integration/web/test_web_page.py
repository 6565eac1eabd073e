"""The chat page in a real headless Chromium: S1 from request to report, as a person would use it."""

from __future__ import annotations

import json

import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from tests.integration.http.http_support import KEY_ALICE, KEY_BOB

pytestmark = pytest.mark.slow

REQUEST = "帮我生成一份光伏经济测算报告"
ANSWER = "地点是杭州余杭区，进行工商业光伏测算，装机容量500kW"


def _sign_in(browser, url: str, key: str = KEY_ALICE) -> None:
    browser.get(url + "/")
    WebDriverWait(browser, 30).until(ec.url_contains("/login"))  # no session: sent to sign in
    browser.find_element(By.NAME, "key").send_keys(key)
    browser.find_element(By.CSS_SELECTOR, "form button").click()
    WebDriverWait(browser, 30).until(ec.presence_of_element_located((By.ID, "composer")))


def _cards(browser, status: str) -> list:
    return browser.find_elements(By.CSS_SELECTOR, f'#cards .card[data-status="{status}"]')


def _streaming(browser) -> bool:
    """True while a turn streams (the page re-draws its cards when the turn ends)."""
    return "streaming" in (browser.find_element(By.TAG_NAME, "body").get_attribute("class") or "")


def _loaded(browser, img) -> bool:
    return bool(browser.execute_script("return arguments[0].complete && arguments[0].naturalWidth > 0", img))


def test_s1_in_the_browser_question_card_answer_three_cards_and_the_report(site, browser, tmp_path):
    _sign_in(browser, site.url)
    assert browser.current_url.rstrip("/") == site.url
    wait = WebDriverWait(browser, 180)

    browser.find_element(By.ID, "request").send_keys(REQUEST)
    browser.find_element(By.ID, "send").click()
    wait.until(lambda b: _cards(b, "interrupted") and not _streaming(b))
    waiting = _cards(browser, "interrupted")[0]
    question = waiting.find_element(By.CSS_SELECTOR, ".question .ask").text
    assert "项目地点" in question and "装机容量" in question
    assert waiting.find_element(By.CSS_SELECTOR, ".badge").text == "待用户输入中"
    assert "等待您的回答" in browser.find_element(By.CSS_SELECTOR, ".conversation-status").text

    waiting.find_element(By.CSS_SELECTOR, "textarea.answer").send_keys(ANSWER)
    waiting.find_element(By.CSS_SELECTOR, ".answer-button").click()
    wait.until(
        lambda b: len(_cards(b, "completed")) == 3 and b.find_elements(By.CSS_SELECTOR, ".card.summary")
    )
    wait.until(lambda b: not _streaming(b))

    cards = browser.find_elements(By.CSS_SELECTOR, "#cards .card")
    assert [c.find_element(By.CSS_SELECTOR, ".title").text for c in cards] == [
        "步骤 0 · pv_calc",
        "步骤 1 · sensitivity",
        "步骤 2 · report",
    ]
    assert [c.find_element(By.CSS_SELECTOR, ".badge").text for c in cards] == ["完成"] * 3
    assert "杭州市余杭区" in cards[0].find_element(By.CSS_SELECTOR, ".output").text
    assert "NPV" in cards[0].find_element(By.CSS_SELECTOR, ".output").text
    # The sensitivity table is a table: the base row and 20 variations.
    assert len(cards[1].find_elements(By.CSS_SELECTOR, ".output table tbody tr")) == 21
    # Text streamed while the steps ran stays on their cards.
    progress = [li.text for li in cards[1].find_elements(By.CSS_SELECTOR, ".progress li")]
    assert any("龙卷风图" in line for line in progress), progress
    # Figures (charts) are shown and load; the plan is drawn.
    figures = browser.find_elements(By.CSS_SELECTOR, "#cards .figures img")
    assert len(figures) >= 2 and all(_loaded(browser, img) for img in figures)
    graph = browser.find_element(By.CSS_SELECTOR, ".plan-graph")
    drawn = graph.find_elements(By.CSS_SELECTOR, "img") or graph.find_elements(By.CSS_SELECTOR, "svg")
    assert drawn and (drawn[0].tag_name == "svg" or _loaded(browser, drawn[0]))
    # No path of the server's disk reaches the page (only /artifacts/... URLs and file names).
    assert str(site.data_dir) not in browser.page_source
    # The conversation is listed, finished.
    listed = browser.find_element(By.CSS_SELECTOR, "#conversations li.current")
    assert REQUEST in listed.text and "已完成" in listed.text

    shot = tmp_path / "s1-finished.png"
    browser.set_window_size(1280, int(browser.execute_script("return document.body.scrollHeight")) + 40)
    browser.save_screenshot(str(shot))
    assert shot.stat().st_size > 20_000
    print(f"screenshot: {shot}")

    # The report link opens the HTML report.
    link = browser.find_element(By.CSS_SELECTOR, ".card.summary a.file.html")
    href = link.get_attribute("href")
    assert href.startswith(site.url + "/artifacts/") and href.endswith("_report.html")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", link)
    link.click()
    WebDriverWait(browser, 30).until(lambda b: len(b.window_handles) == 2)
    browser.switch_to.window(browser.window_handles[1])
    WebDriverWait(browser, 30).until(lambda b: "内部收益率" in b.find_element(By.TAG_NAME, "body").text)
    assert browser.current_url == href
    browser.close()
    browser.switch_to.window(browser.window_handles[0])

    # (the sign-in page and the report file have no icon: the browser's favicon probe is not the page's)
    errors = [
        e for e in browser.get_log("browser") if e["level"] == "SEVERE" and "favicon.ico" not in e["message"]
    ]
    assert not errors, errors


def test_a_past_conversation_reopens_from_the_list_and_stays_with_its_user(site, browser):
    with httpx.Client(base_url=site.url, headers={"X-API-Key": KEY_ALICE}, timeout=120) as alice:
        body = {"input": {"messages": [{"role": "user", "content": REQUEST}]}}
        body["config"] = {"configurable": {"thread_id": "past-1"}}
        assert alice.post("/plangraph/invoke", json=body).status_code == 200
    _sign_in(browser, site.url)
    entry = WebDriverWait(browser, 30).until(
        ec.presence_of_element_located((By.CSS_SELECTOR, '#conversations a[data-conversation="past-1"]'))
    )
    assert "等待回答" in entry.text
    entry.click()
    card = WebDriverWait(browser, 30).until(lambda b: _cards(b, "interrupted"))[0]
    assert "项目地点" in card.find_element(By.CSS_SELECTOR, ".ask").text
    assert browser.current_url.endswith("#c=past-1")

    with httpx.Client(base_url=site.url, headers={"X-API-Key": KEY_BOB}, timeout=30) as bob:
        assert all(c["conversationId"] != "past-1" for c in bob.get("/conversations").json()["conversations"])
        assert bob.get("/conversations/past-1").status_code == 404
        assert bob.get("/conversations/past-1/plan.svg").status_code == 404


def test_the_page_loads_nothing_from_another_origin(site):
    with httpx.Client(base_url=site.url, headers={"X-API-Key": KEY_ALICE}, timeout=30) as alice:
        page = alice.get("/")
        assert page.status_code == 200
        assert "default-src 'self'" in page.headers["content-security-policy"]
        for text in (page.text, alice.get("/web/app.js").text, alice.get("/web/app.css").text):
            assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")
            assert "https://" not in text and "//cdn" not in text
        assert json.loads(alice.get("/conversations").text)["user"] == "alice"


def test_without_graphviz_the_page_draws_the_plan_itself(site, browser, monkeypatch):
    import plangraph.web

    monkeypatch.setattr(plangraph.web, "graphviz_installed", lambda: False)
    with httpx.Client(base_url=site.url, headers={"X-API-Key": KEY_ALICE}, timeout=120) as alice:
        body = {"input": {"messages": [{"role": "user", "content": REQUEST}]}}
        body["config"] = {"configurable": {"thread_id": "drawn-1"}}
        assert alice.post("/plangraph/invoke", json=body).status_code == 200
        assert alice.get("/conversations/drawn-1").json()["graph"] is None
    _sign_in(browser, site.url)
    browser.get(site.url + "/#c=drawn-1")
    svg = WebDriverWait(browser, 30).until(
        ec.presence_of_element_located((By.CSS_SELECTOR, ".plan-graph svg.drawn-plan"))
    )
    nodes = svg.find_elements(By.CSS_SELECTOR, "rect.node")
    assert len(nodes) == 3
    assert [n.get_attribute("fill") for n in nodes] == ["#fed7aa", "#f3f4f6", "#f3f4f6"]  # waiting, not ready
    assert len(svg.find_elements(By.CSS_SELECTOR, "line.edge")) >= 2
    titles = [t.text for t in svg.find_elements(By.CSS_SELECTOR, "text.node-title")]
    assert titles == ["0 · pv_calc", "1 · sensitivity", "2 · report"]
