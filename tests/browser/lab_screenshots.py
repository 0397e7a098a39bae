"""Screenshots for failures: of a whole page or of one element, saved under test-artifacts/browser/ and named
from the test's words; ``screenshot_on_failure`` adds the file's path to the failure's message."""

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

from lab_server import REPO

ARTIFACTS = REPO / "test-artifacts" / "browser"


def _safe_file_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")


def screenshot(page, *parts: object) -> Path | None:
    """Save a full-page PNG of ``page`` under test-artifacts/browser/, named from ``parts``; None if that fails."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{_safe_file_name('-'.join(str(part) for part in parts))}.png"
    try:
        page.screenshot(path=str(path), full_page=True)
    except Exception:  # a crashed page must not hide the failure being reported
        return None
    return path


def screenshot_element(locator, *parts: object) -> Path | None:
    """Save a PNG of one element (scrolled into view) under test-artifacts/browser/; None if that fails."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{_safe_file_name('-'.join(str(part) for part in parts))}.png"
    try:
        locator.scroll_into_view_if_needed()
        locator.screenshot(path=str(path))
    except Exception:
        return screenshot(locator.page, *parts)
    return path


@contextlib.contextmanager
def screenshot_on_failure(page_or_locator, *parts: object) -> Iterator[None]:
    """On an exception inside the block, save a screenshot (of the element, or the whole page) and add its path to
    the exception's message (AssertionError, TimeoutError) or as a note."""
    try:
        yield
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt):
            raise
        if hasattr(page_or_locator, "element_handle"):
            path = screenshot_element(page_or_locator, *parts)
        else:
            path = screenshot(page_or_locator, *parts)
        note = f"screenshot: {path}" if path else "screenshot: could not be taken"
        error.add_note(note)
        if isinstance(error, AssertionError) and error.args:
            error.args = (f"{error.args[0]}\n{note}", *error.args[1:])
        raise
