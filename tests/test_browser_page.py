"""The web page in a real browser: headless Chromium against `opinio serve` on loopback.

One server (uvicorn in a thread, 127.0.0.1, a free port) over the shipped sample's hotel 101
indexed into a temp store with the hashing encoder, plus a small hostile entity; a loopback
OpenAI-compatible model answers the chat (streamed). One browser for the module. The steps:

1. load the page, pick the entity: the critical alerts are on top, aspect chips appear sorted
   by mentions, each with a positive/negative bar;
2. click a chip: its PROS/CONS appear with their support line and evidence quotes;
3. open a quote: the full review opens with exactly that sentence marked;
4. ask the chat: the answer streams in, its ``[S1]`` citations are buttons that open the cited
   review with the sentence marked; a follow-up question sends the conversation back;
5. type your own aspect: a review containing ``<script>`` and ``<img onerror>`` is the
   evidence, and it renders as literal text (no element is created, no script runs);
6. no console errors anywhere; screenshots are saved in the browser's temp dir
   (``OPINIO_SCREENSHOT_DIR=DIR`` keeps them; ``page.png`` is the full page after the chat).
7. at a phone's width the hostile entity's name is text and the layout is one column.
8. the first screen (no entity yet) explains the page and lists the entities as cards; a card, or
   ``/?entity=101``, opens the most discussed aspect with its PROS/CONS without another click
   (``&aspect=NAME`` opens that one); the alerts say "What the 1 review says".
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.browser_support import Browser, browser_fixture  # noqa: F401  (provides `browser`)
from tests.fake_encoder import HashEncoder
from tests.loopback_server import LoopbackServer, ok

pytestmark = pytest.mark.slow

SCRIPT = "<script>window.__pwned=1</script>"
IMG = '<img src=x onerror="window.__pwned=1">'
# The payloads sit both inside the sentence the page marks and around it.
HOSTILE_TEXT = (
    f"Arrived late {IMG}. The zanzibar lamp by the bed {SCRIPT} was broken on arrival {IMG} and nobody "
    f"fixed it. Otherwise a quiet room {SCRIPT}."
)
HOSTILE_NAME = f'Hostile Inn {IMG}'
CHAT_REPLY = "Guests find the wi-fi fast in the rooms [S1] but some say it drops in the evening [S2]."
FOLLOWUP_REPLY = "The reviews say little about the lobby; one guest mentions a paid connection [S1]."


@dataclass
class Site:
    url: str
    loopback: LoopbackServer
    rag: Any


def _entities() -> list[Any]:
    from opinio_agents import load_sample
    from opinio_agents.models import Entity, Review

    hotel = next(e for e in load_sample() if str(e.entity_id) == "101")
    hotel.user_reviews.append(Review(review_id="hostile-1", text=HOSTILE_TEXT, rating=2))
    hostile = Entity(
        entity_id="hostile",
        entity_name=HOSTILE_NAME,
        user_reviews=[
            Review(review_id=f"h{i}", text=f"Room {i} was clean and the breakfast was fine. {SCRIPT}", rating=4)
            for i in range(3)
        ],
    )
    return [hotel, hostile]


@contextlib.contextmanager
def _serving(app: Any) -> Iterator[str]:
    """Run ``app`` with uvicorn in a thread on 127.0.0.1 (a free port); yield its base URL."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                pytest.fail("uvicorn did not start")
            time.sleep(0.02)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    pytest.importorskip("fastapi", reason="the serve extra is not installed (pip install -e '.[serve]')")
    pytest.importorskip("uvicorn", reason="the serve extra is not installed (pip install -e '.[serve]')")
    from langchain_openai import ChatOpenAI

    from opinio_agents import OpinioRAG
    from opinio_agents.serve import create_app

    # The hashing encoder keeps the test fast; OPINIO_BROWSER_REAL_MODEL=1 indexes with MiniLM (nicer aspects
    # for the README's picture, a minute more).
    encoder = None if os.environ.get("OPINIO_BROWSER_REAL_MODEL") == "1" else HashEncoder(dimension=384)
    rag = OpinioRAG(tmp_path_factory.mktemp("web-store"), encoder=encoder)
    rag.index(_entities())
    with LoopbackServer([ok(CHAT_REPLY), ok(FOLLOWUP_REPLY)]) as loopback:
        chat_model = ChatOpenAI(
            model="loopback", base_url=loopback.base_url, api_key="test", max_retries=0, timeout=10  # type: ignore[arg-type]
        )
        with _serving(create_app(rag, llm=chat_model, chat_verify=False)) as url:
            yield Site(url=url, loopback=loopback, rag=rag)


@pytest.fixture(autouse=True)
def _patient(browser: Browser) -> Iterator[None]:
    """Waits long enough for a loaded machine (and for MiniLM with OPINIO_BROWSER_REAL_MODEL=1)."""
    before = browser.timeout
    browser.timeout = 90.0 if os.environ.get("OPINIO_BROWSER_REAL_MODEL") == "1" else 30.0
    yield
    browser.timeout = before


def _text(browser: Browser, selector: str) -> str:
    return str(browser.driver.find_element("css selector", selector).text)


def _pick_entity(browser: Browser, entity_id: str) -> None:
    from selenium.webdriver.support.ui import Select

    browser.wait_css(f"#entity option[value='{entity_id}']", visible=False)
    Select(browser.driver.find_element("css selector", "#entity")).select_by_value(entity_id)


def _open_quote_and_check_mark(browser: Browser, quote: Any) -> str:
    """Click a quote (or citation) button; the review dialog opens with its sentence marked."""
    sentence_id = quote.get_attribute("data-sentence-id")
    quote.click()
    mark = browser.wait_css("#review #review-mark")
    review_text = _text(browser, "#review-text")
    assert mark.text and mark.text in review_text
    dialog_review = sentence_id.split(":")[1]
    browser.wait_until(lambda: dialog_review in _text(browser, "#review-title"), "the review title")
    return str(mark.text)


def _close_review(browser: Browser) -> None:
    browser.driver.find_element("css selector", "#review-close").click()
    closed = "return !document.getElementById('review').open"
    browser.wait_until(lambda: browser.driver.execute_script(closed), "the dialog to close")


def _pwned(browser: Browser) -> Any:
    return browser.driver.execute_script("return window.__pwned")


def test_page_highlights_reviews_query_and_cited_chat(browser: Browser, site: Site) -> None:
    driver = browser.driver
    driver.set_window_size(1280, 1000)
    browser.get(site.url)
    browser.clear_console()
    browser.wait_until(lambda: "entities indexed" in _text(browser, "#service"), "the service line")

    # The hostile entity name is listed as text.
    browser.wait_css("#entity option[value='hostile']", visible=False)
    options = [o.text for o in driver.find_elements("css selector", "#entity option")]
    assert any(option.startswith(HOSTILE_NAME) for option in options), options

    # 1. pick the entity: its title, the alerts on top, aspect chips sorted by mentions with a bar.
    _pick_entity(browser, "101")
    browser.wait_until(lambda: _text(browser, "#entity-title") == "Harborview City Hotel", "the entity title")
    browser.wait_css("#alerts .alert-head")
    chips = browser.wait_until(lambda: driver.find_elements("css selector", "#chips .chip"), "aspect chips")
    counts = [int(c.find_element("css selector", ".chip-count").text.replace(",", "")) for c in chips]
    assert len(chips) >= 3 and counts == sorted(counts, reverse=True) and counts[0] > 0
    assert chips[0].find_element("css selector", ".bar .pos").size["width"] > 0
    alerts_y = driver.find_element("css selector", "#alerts").location["y"]
    assert alerts_y < driver.find_element("css selector", "#chips").location["y"]

    # 2. click the most discussed aspect: PROS/CONS with support and evidence quotes.
    name = chips[0].find_element("css selector", ".chip-name").text
    chips[0].click()
    assert chips[0].get_attribute("aria-pressed") == "true"
    browser.wait_until(lambda: _text(browser, "#detail-title") == name, "the aspect's title")
    quote = browser.wait_css("#detail .highlight .quote")
    support = _text(browser, "#detail-support")
    assert support.startswith("mentioned in ") and " of 241 reviews, " in support, support
    assert _text(browser, "#detail .highlight .highlight-text")
    browser.screenshot("01-aspect")

    # 3. the quote opens the full review with its sentence marked.
    quoted = quote.text.split("\n")[0].strip("“”")
    marked = _open_quote_and_check_mark(browser, quote)
    assert marked == quoted
    browser.screenshot("02-review")
    _close_review(browser)

    # Another chip: the selection moves, its own highlights replace the first ones.
    other = chips[2].find_element("css selector", ".chip-name").text
    chips[2].click()
    browser.wait_until(lambda: _text(browser, "#detail-title") == other, "the second aspect's title")
    assert chips[0].get_attribute("aria-pressed") == "false" and chips[2].get_attribute("aria-pressed") == "true"
    browser.wait_css("#detail .highlight .quote")

    # 4. the chat streams a cited answer; a citation opens the cited review.
    question = driver.find_element("css selector", "#chat-input")
    question.send_keys("How is the wi-fi?")
    driver.find_element("css selector", "#chat-send").click()
    cite = browser.wait_css("#chat-log .msg.assistant .cite")
    answer = _text(browser, "#chat-log .msg.assistant .msg-text")
    assert "Guests find the wi-fi fast in the rooms" in answer and "[S1]" not in answer
    assert cite.text == "S1"
    sent = site.loopback.requests[-1]["body"]
    assert sent["stream"] is True and sent["messages"][-1]["content"].startswith("Question: How is the wi-fi?")
    browser.screenshot("03-chat")
    _open_quote_and_check_mark(browser, cite)
    _close_review(browser)

    # A follow-up question carries the conversation (the previous answer is sent back).
    question.send_keys("And in the lobby?\n")
    answered = "#chat-log .msg.assistant:not(.streaming) .cite"
    browser.wait_until(
        lambda: len(driver.find_elements("css selector", "#chat-log .msg.assistant")) == 2
        and len(driver.find_elements("css selector", "#chat-log .msg.assistant:not(.streaming)")) == 2
        and len(driver.find_elements("css selector", answered)) == 3,
        "the second answer",
    )
    assert site.loopback.request_count == 2
    followup = site.loopback.requests[-1]["body"]["messages"]
    assert [m["role"] for m in followup] == ["system", "user", "assistant", "user"]
    # History holds the answer as the user saw it (the chat guard puts each sentence's citations at its end).
    earlier = followup[2]["content"]
    assert followup[1]["content"] == "How is the wi-fi?"
    assert earlier.startswith("Guests find the wi-fi fast in the rooms") and "[S1]" in earlier and "[S2]" in earlier
    assert "The reviews say little about the lobby" in _text(browser, "#chat-log .msg.assistant:last-child")
    browser.screenshot("page", full_page=True)  # the README's picture (docs/images/web-page.png)

    # 5. your own aspect; its evidence is the hostile review, rendered as text.
    box = driver.find_element("css selector", "#query")
    box.send_keys("zanzibar lamp\n")
    custom = browser.wait_css("#chips .chip.custom")
    assert custom.get_attribute("aria-pressed") == "true"
    hostile_quote = browser.wait_until(
        lambda: [q for q in driver.find_elements("css selector", "#detail .quote") if "zanzibar" in q.text],
        "a quote of the hostile review",
    )[0]
    _open_quote_and_check_mark(browser, hostile_quote)
    review_text = _text(browser, "#review-text")
    assert review_text.count(SCRIPT) == 2 and review_text.count(IMG) == 2
    assert driver.find_elements("css selector", "#review-text *:not(mark)") == []
    assert driver.find_elements("css selector", "img") == []
    assert _pwned(browser) is None
    browser.screenshot("04-hostile-review")
    _close_review(browser)

    # 6. nothing ran that should not have, and the console is clean.
    assert _pwned(browser) is None
    assert browser.console_errors() == []


def test_first_screen_lists_the_entities_and_an_entity_url_opens_its_pros_and_cons(
    browser: Browser, site: Site
) -> None:
    driver = browser.driver
    driver.set_window_size(1280, 1000)
    browser.get(site.url)
    browser.clear_console()

    # Before an entity is picked: what the page does and one card per entity, not two empty panels.
    cards = browser.wait_until(lambda: driver.find_elements("css selector", "#entity-cards .entity-card"), "cards")
    assert len(cards) == 2
    assert driver.find_element("css selector", "#welcome").is_displayed()
    assert not driver.find_element("css selector", "#workspace").is_displayed()
    assert "2 entities are indexed" in _text(browser, "#welcome-status")
    assert "Pick an entity" in _text(browser, "#welcome .steps")
    hotel = next(card for card in cards if card.get_attribute("data-entity") == "101")
    assert "Harborview City Hotel" in hotel.text and "entity 101 · 241 reviews" in hotel.text
    hostile = next(card for card in cards if card.get_attribute("data-entity") == "hostile")
    assert HOSTILE_NAME in hostile.text and driver.find_elements("css selector", "img") == []
    browser.screenshot("00-first-screen")

    # A card opens the entity, and its most discussed aspect with its PROS/CONS, without another click.
    hotel.click()
    browser.wait_until(lambda: _text(browser, "#entity-title") == "Harborview City Hotel", "the entity title")
    assert not driver.find_element("css selector", "#welcome").is_displayed()
    browser.wait_css("#detail .highlight .quote")
    assert driver.find_element("css selector", "#entity").get_attribute("value") == "101"

    # /?entity=101 shows the PROS/CONS of the most discussed aspect straight away, its chip pressed.
    browser.get(site.url + "?entity=101")
    chips = browser.wait_until(lambda: driver.find_elements("css selector", "#chips .chip"), "aspect chips")
    first = chips[0].find_element("css selector", ".chip-name").text
    browser.wait_until(lambda: _text(browser, "#detail-title") == first, "the first aspect opened")
    browser.wait_css("#detail .highlight .quote")
    assert chips[0].get_attribute("aria-pressed") == "true"
    assert driver.find_elements("css selector", "#pros .highlight, #cons .highlight")
    assert _text(browser, "#detail-support").startswith("mentioned in ")
    assert f"aspect={first}" in driver.current_url.replace("%20", " ").replace("+", " ")
    # The alerts are on top, in words that agree with their count.
    alerts = browser.wait_until(lambda: driver.find_elements("css selector", "#alerts summary"), "the alerts")
    summaries = [s.text for s in alerts]
    assert summaries and all(
        (t == "What the 1 review says") or (t.startswith("What the ") and t.endswith(" reviews say")) for t in summaries
    ), summaries
    browser.screenshot("00-entity-url", full_page=True)

    # ... and /?entity=101&aspect=NAME opens that aspect instead.
    other = chips[1].find_element("css selector", ".chip-name").text
    browser.get(site.url + "?" + urlencode({"entity": "101", "aspect": other}))
    browser.wait_until(lambda: _text(browser, "#detail-title") == other, "the aspect named in the URL")
    browser.wait_css("#detail .highlight .quote")
    assert browser.console_errors() == []


def test_hostile_entity_renders_as_text_at_a_narrow_width(browser: Browser, site: Site) -> None:
    driver = browser.driver
    driver.set_window_size(420, 900)
    try:
        browser.get(site.url + "?entity=hostile")
        browser.clear_console()
        browser.wait_until(lambda: _text(browser, "#entity-title") == HOSTILE_NAME, "the hostile entity's title")
        browser.wait_until(lambda: _text(browser, "#aspects-source"), "the aspects line")
        assert driver.find_elements("css selector", "img") == []
        # One column: the chat sits below the highlights, nothing overflows sideways.
        main = driver.find_element("css selector", ".col-main").rect
        chat = driver.find_element("css selector", ".col-chat").rect
        assert chat["y"] >= main["y"] + main["height"] - 1
        width = driver.execute_script("return document.documentElement.scrollWidth")
        assert width <= driver.execute_script("return window.innerWidth")
        browser.screenshot("05-narrow")

        # Keyboard only: Enter on a chip shows its highlights, Enter on a quote opens the review,
        # Escape closes it and gives the focus back to the quote.
        from selenium.webdriver.common.keys import Keys

        chip = browser.wait_css("#chips .chip")
        chip.send_keys(Keys.ENTER)
        assert chip.get_attribute("aria-pressed") == "true"
        quote = browser.wait_css("#detail .quote")
        quote.send_keys(Keys.ENTER)
        browser.wait_css("#review #review-mark")
        assert SCRIPT in _text(browser, "#review-text")
        driver.switch_to.active_element.send_keys(Keys.ESCAPE)
        browser.wait_until(lambda: driver.execute_script("return !document.getElementById('review').open"), "Esc")
        assert driver.switch_to.active_element == quote

        # A highlight with a verification verdict and a trend gets a badge and a trend line.
        rendered = driver.execute_script(
            """const h = window.opinio.renderHighlight(arguments[0]);
               document.getElementById('pros').append(h);
               return [h.querySelector('.badge').className, h.querySelector('.badge').textContent,
                       h.querySelector('.trend').textContent, h.textContent];""",
            {
                "query": "wi-fi", "polarity": "pros", "text": "Fast wi-fi <b>everywhere</b>.",
                "evidence": [], "notes": [],
                "support": {"reviews": 143, "positive": 20, "negative": 116, "neutral": 7, "total_reviews": 1500},
                "verification": {"verdict": "weak", "reason": "one review only", "aspect_relevance": 0.4,
                                 "sentiment_factuality": None, "opinion_faithfulness": None, "action": "rewritten"},
                "trend": {"label": "worsening", "summary": "Complaints doubled since 2022.", "granularity": "year",
                          "points": [], "test": "chi2", "p_value": 0.01},
            },
        )
        assert rendered[0] == "badge weak" and rendered[1] == "weak" and "rewritten from its quotes" in rendered[3]
        assert "one review only" in rendered[3]
        badge = driver.find_element("css selector", "#pros .highlight:last-child .badge")
        assert badge.get_attribute("title") == (
            "Checked against its own quotes: weak, rewritten (AR 0.40, SF n/a, OF n/a): one review only"
        )
        assert rendered[2] == "Trend: worsening · Complaints doubled since 2022."
        assert "mentioned in 143 of 1,500 reviews, 81% negative" in rendered[3]
        assert "Fast wi-fi <b>everywhere</b>." in rendered[3] and driver.find_elements("css selector", "#pros b") == []
        assert _pwned(browser) is None
        assert browser.console_errors() == []
    finally:
        driver.set_window_size(1280, 1000)



def test_api_key_page_is_opened_once_with_the_key_then_works_by_cookie(browser: Browser, site: Site) -> None:
    from opinio_agents.serve import create_app

    driver = browser.driver
    with _serving(create_app(site.rag, api_key="s3cret-key")) as url:
        driver.delete_all_cookies()
        browser.get(url)
        assert "API key" in driver.find_element("css selector", "body").text  # the server's 401, not the page
        browser.get(url + "?api_key=s3cret-key")
        browser.clear_console()
        browser.wait_css("#entity option[value='101']", visible=False)  # GET entities was authenticated
        browser.wait_until(lambda: "entities indexed" in _text(browser, "#service"), "GET healthz")
        assert "api_key" not in driver.current_url
        driver.refresh()  # the key is gone from the URL: the HttpOnly cookie authenticates the page's calls
        browser.wait_css("#entity option[value='101']", visible=False)
        assert driver.execute_script("return document.cookie") == ""  # HttpOnly: not readable by scripts
        assert browser.console_errors() == []
        driver.delete_all_cookies()
