"""A typed answer (``chat.ask(..., output_type=City)``) in a real JupyterLab: while the JSON streams, the chat and the
asking cell show an object card that fills in key by key; a refused first answer shows what was wrong above the new
one; the card ends on the validated object (its default filled in), and the next cell uses the object."""

from __future__ import annotations

import textwrap

import pytest
from chat_ui import IMPORTS, WAIT, assert_no_widget_errors, open_and_run, screenshot
from playwright.sync_api import expect

pytestmark = pytest.mark.e2e

# The first answer misses a field (refused, asked again); the second streams slowly enough to watch it fill in.
SETUP = IMPORTS + textwrap.dedent(
    """\
    import pydantic


    class City(pydantic.BaseModel):
        name: str
        population: int
        sights: list[str]
        country: str = "Portugal"


    answers = [
        ScriptedReply(status=None, text='{"name": "Lisbon", "sights": []}'),
        ScriptedReply(
            status=None,
            text='{"name": "Lisbon", "population": 545000, "sights": ["Belém Tower", "Alfama", "Jerónimos Monastery"]}',
        ),
    ]
    chat = ChatWidget(transport=ScriptedTransport(answers, delay=0.2, slice_size=(3, 4)))
    chat
    """
)
ASK = "city = await chat.ask('The capital of Portugal?', output_type=City)\nprint('CITY', repr(city))"
USE = "print('NEXT CELL', city.name.upper(), city.population // 1000, len(city.sights))"


def test_a_typed_answer_fills_in_as_it_streams_and_ends_on_the_object(chromium_page, server, notebook_name, artifacts):
    page, srv, nb = chromium_page, server("lab"), notebook_name
    srv.write_notebook(nb, [SETUP, ASK, USE])
    chat = open_and_run(page, srv, nb, wait_executed=False)
    cells = page.locator(".jp-Notebook .jp-CodeCell")
    turn = cells.nth(1).locator(".aiw.aiw-turn[data-rendered='true']")
    expect(turn).to_be_visible(timeout=WAIT)

    # The second answer streaming: a card (never markdown) that says what was wrong with the first, and fills in.
    card, turn_card = chat.locator(".aiw-answer"), turn.locator(".aiw-answer")
    expect(card.locator(".aiw-answer-refusal")).to_contain_text("population: Field required", timeout=WAIT)
    expect(card).to_have_attribute("data-state", "streaming")
    expect(card.locator(".aiw-answer-type")).to_have_text("City")
    expect(card.locator(".aiw-json-key").first).to_have_text("name", timeout=WAIT)
    expect(card.locator(".aiw-json-key", has_text="sights")).to_have_count(1, timeout=WAIT)
    keys_mid_stream = card.locator(".aiw-json-key").all_inner_texts()
    assert card.get_attribute("data-state") == "streaming", "the answer was over before it could be watched"
    assert "country" not in keys_mid_stream  # the default comes with the validated object, not the text
    expect(turn_card).to_have_attribute("data-state", "streaming")
    expect(chat.locator(".aiw-message[data-role='assistant'] .aiw-md")).to_have_count(0)
    screenshot(chat, artifacts, "test_typed_answer_streaming")
    # Filling in: the sights arrive one by one in the same card.
    expect(card.locator(".aiw-json-str", has_text="Jerónimos Monastery")).to_have_count(1, timeout=WAIT)

    # Validated: the object (with its default), in both views; the asking cell has the object, the next cell uses it.
    expect(card).to_have_attribute("data-state", "valid", timeout=WAIT)
    expect(card.locator(".aiw-answer-state")).to_have_text("✓ matches City")
    expect(card.locator(":scope > .aiw-json > .aiw-json-obj > .aiw-json-row > .aiw-json-key")).to_have_text(
        ["name", "population", "sights", "country"]
    )
    expect(turn_card).to_have_attribute("data-state", "valid", timeout=WAIT)
    expect(turn_card.locator(".aiw-answer-refusal")).to_contain_text("population: Field required")
    expect(cells.nth(1).locator(".jp-OutputArea-output pre").last).to_contain_text(
        "CITY City(name='Lisbon', population=545000", timeout=WAIT
    )
    expect(cells.nth(2).locator(".jp-OutputArea-output pre").last).to_contain_text(
        "NEXT CELL LISBON 545 3", timeout=WAIT
    )
    assert srv.kernel_json(nb, "chat.session.messages[-1].parts[0].answer.state") == "valid"
    screenshot(chat, artifacts, "test_typed_answer_valid")
    screenshot(turn, artifacts, "test_typed_answer_valid_in_the_asking_cell")
    assert_no_widget_errors(page)
