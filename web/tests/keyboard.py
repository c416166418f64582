"""Filling a page with the keyboard only: Tab to each control, then type, Space or arrows,
as a participant without a mouse would (en-US date and time fields)."""

from __future__ import annotations

from typing import List, Tuple

MAX_TABS = 400


def _active_is(page, handle) -> bool:
    return page.evaluate("(el) => document.activeElement === el", handle)


def tab_to(page, handle) -> None:
    """Presses Tab until ``handle`` has the focus (a date field's inner parts take Tabs too)."""
    for _ in range(MAX_TABS):
        if _active_is(page, handle):
            return
        page.keyboard.press("Tab")
    raise AssertionError("not reachable with Tab: " + page.evaluate("(el) => el.outerHTML", handle))


def _time_keys(hhmm: str) -> str:
    """The keys Chromium's time field takes: hours, minutes, seconds when the field has them
    (a value HH:mm:ss, asked for with step 1), then AM or PM."""
    h, m, s = int(hhmm[:2]), hhmm[3:5], hhmm[6:8]
    return f"{(h % 12) or 12:02d}{m}{s}{'A' if h < 12 else 'P'}"


def fill(page, pairs: List[Tuple[str, str]]) -> None:
    for name, value in pairs:
        choice = value.isdigit() or value in ("true", "false")  # choices: index or boolean
        radio = choice and page.query_selector(f'input[type=radio][name="{name}"][value="{value}"]')
        if radio:
            # Tab into the group (it focuses the first radio), then arrows until the target.
            first = page.query_selector(f'input[type=radio][name="{name}"]')
            tab_to(page, first)
            for _ in range(50):
                if _active_is(page, radio):
                    page.keyboard.press("Space")
                    break
                page.keyboard.press("ArrowDown")
            assert radio.is_checked(), (name, value)
            continue
        box = choice and page.query_selector(f'input[type=checkbox][name="{name}"][value="{value}"]')
        if box:
            tab_to(page, box)
            if not box.is_checked():
                page.keyboard.press("Space")
            assert box.is_checked()
            continue
        el = page.query_selector(f'[name="{name}"]')
        assert el is not None, name
        tag = el.evaluate("e => e.tagName.toLowerCase()")
        kind = el.get_attribute("type") or ""
        tab_to(page, el)
        if tag == "select":
            index = int(value) + 1  # after "Choose…"
            for _ in range(index):
                page.keyboard.press("ArrowDown")
            assert el.evaluate("e => e.value") == value, (name, value)
        elif kind == "date":
            y, m, d = value.split("-")
            page.keyboard.type(f"{m}{d}{y}")
        elif kind == "time":
            page.keyboard.type(_time_keys(value))
        elif kind == "datetime-local":
            date, t = value.split("T")
            y, m, d = date.split("-")
            page.keyboard.type(f"{m}{d}{y}")
            if el.get_attribute("max") is None:
                # Chromium moves on from the year by itself only when a maximum bounds its digits.
                page.keyboard.press("ArrowRight")
            page.keyboard.type(_time_keys(t))
        else:
            page.keyboard.press("Control+A")
            page.keyboard.press("Delete")
            page.keyboard.type(value)
        got = el.evaluate("e => e.value")
        assert got == value, (name, value, got)


def press_button(page, action: str) -> None:
    """Tabs to the submit button with this action and presses Enter; waits for the next page."""
    button = page.query_selector(f'button[name=action][value="{action}"]')
    assert button is not None, action
    tab_to(page, button)
    with page.expect_navigation():
        page.keyboard.press("Enter")
