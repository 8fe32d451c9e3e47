"""report.html as a browser shows it: headless Chromium (Debian's ``chromium`` and
``chromium-driver``, driven by selenium; nothing is downloaded at test time).

The page must load without console errors, every chart must render with a size, and scenario
text must stay text (a plan named ``<script>alert(1)</script>`` runs nothing). Without Chromium
the test skips, except in CI (``CI=true``), where a missing browser is a failure.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from costsim.report.charts import CHART_SUBJECTS
from tests.report.runs import SCRIPT_NAME

IN_CI = os.environ.get("CI", "").lower() == "true"


def _require(condition: bool, why: str) -> None:
    if condition:
        return
    if IN_CI:
        pytest.fail(f"{why} (CI=true: .ci/run installs chromium and chromium-driver)")
    pytest.skip(why)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    _require(chromium is not None and driver_path is not None,
             "chromium and chromedriver are not installed")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:  # pragma: no cover - the test extra installs it
        _require(False, "selenium is not installed (pip install -e '.[test]')")
        raise
    options = webdriver.ChromeOptions()
    options.binary_location = str(chromium)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1280,1600"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(driver_path)),
                              options=options)
    try:
        yield driver
    finally:
        driver.quit()


def test_the_report_renders_in_chromium_with_every_chart_and_no_errors(
        browser: Any, report_dir: Path) -> None:
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By

    browser.get((report_dir / "report.html").as_uri())
    assert browser.execute_script("return document.readyState") == "complete"
    severe = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert severe == []
    images = browser.find_elements(By.CSS_SELECTOR, "#charts figure img")
    assert len(images) == len(CHART_SUBJECTS)
    for image in images:
        loaded = browser.execute_script(
            "const i = arguments[0]; return i.complete && i.naturalWidth > 0 "
            "&& i.naturalHeight > 0;", image)
        assert loaded, image.get_attribute("alt")
        assert image.size["width"] > 300
        assert image.size["height"] > 100
    # the markup plan name is shown as text, and nothing ran
    assert browser.find_elements(By.TAG_NAME, "script") == []
    assert SCRIPT_NAME in browser.find_element(By.TAG_NAME, "body").text
    with pytest.raises(NoAlertPresentException):
        _ = browser.switch_to.alert.text
    assert browser.title.startswith("costsim report")
