"""Fixtures of the web page tests: a live server and the system's headless Chromium (Selenium)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.integration.http.conftest import http_env  # noqa: F401 (fixture)
from tests.integration.http.http_support import KEYS, Live, serve
from tests.support.local_server import backend_missing

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
# No network, no updates, no telemetry, a fresh profile: the page must work on its own.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,1600",
    "--lang=zh-CN",
)


@pytest.fixture(scope="module")
def site(http_env, tmp_path_factory) -> Iterator[Live]:  # noqa: F811
    """The API (and its page) with two users, on a free 127.0.0.1 port."""
    from plangraph.server import create_app

    data = tmp_path_factory.mktemp("web")
    app = create_app(data_dir=data, checkpoint_url="", api_keys=KEYS, rate_limit_per_minute=0)
    with serve(app) as url:
        yield Live(url, data)


@pytest.fixture
def browser(tmp_path) -> Iterator[object]:
    """Headless Chromium driven by chromedriver (both from Debian's packages; nothing downloaded)."""
    if not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)):
        backend_missing("Chromium not installed: apt-get install chromium chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(
        service=Service(CHROMEDRIVER, log_output=str(tmp_path / "chromedriver.log")), options=options
    )
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
