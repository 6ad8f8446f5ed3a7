"""Two small documents and ten hand-made questions about them, each answered by one exact
excerpt: what the tuning study's end-to-end tests (the CLI's `chunklab tune` and the "Find the
best configuration" page) search on. Ten questions: the smallest set a study splits into a
tuning half and a confirmation half of at least four each."""

from __future__ import annotations

import json

HARBOUR = """# Harbour handbook

## Berths

Visiting yachts moor at the east pontoon, which has twenty berths with water and power.
Fishing boats keep the west quay, where the ice plant stands beside the fish market.

## Fees

A night on the pontoon costs fourteen euros for a boat under ten metres.
Longer boats pay two euros for each extra metre, and the seventh night is free.

## Tides

The harbour dries at low water springs, so deep keels should arrive within three hours of high water.
The tide tables hang in the harbour office window and on the notice board by the slipway.

## Fuel

Diesel is sold at the fuel berth from eight until noon, paid by card at the pump.
Petrol comes only in cans from the garage on Mill Street.

## Waste

Oily bilge water goes into the grey tank behind the crane, never into the harbour.
Recycling bins for glass and cans stand at the head of each pontoon.
"""

LIGHTHOUSE = """# Lighthouse visits

## Opening

The lighthouse opens to visitors from April to October, Wednesday to Sunday.
Tours leave on the hour and the last one starts at four in the afternoon.

## Tickets

Adults pay six euros; children under twelve climb for free with a paying adult.
Tickets are sold at the keeper's cottage, cash only.

## The climb

There are one hundred and twelve steps to the lantern room, with two landings to rest on.
Visitors need closed shoes, and bags stay in the lockers at the foot of the tower.

## The light

The lamp flashes white twice every fifteen seconds and is seen from eighteen nautical miles.
It has been automatic since 1991, checked by an engineer every quarter.

## Weather

In winds above force seven the gallery door stays shut and tours stop at the lantern room.
"""

# Names no other test's documents have: a question names its document by file name, and the
# e2e tests share one stack, where another test's "harbour.md" would make the name ambiguous.
HARBOUR_NAME, LIGHTHOUSE_NAME = "tuning-harbour.md", "tuning-lighthouse.md"
DOCUMENTS = {HARBOUR_NAME: HARBOUR, LIGHTHOUSE_NAME: LIGHTHOUSE}

QUESTIONS = [
    (HARBOUR_NAME, "Where do visiting yachts moor?", "Visiting yachts moor at the east pontoon"),
    (HARBOUR_NAME, "How much is a night for a small boat?", "costs fourteen euros for a boat under ten metres"),
    (HARBOUR_NAME, "When should deep keels arrive?", "arrive within three hours of high water"),
    (HARBOUR_NAME, "When can I buy diesel?", "Diesel is sold at the fuel berth from eight until noon"),
    (HARBOUR_NAME, "Where does oily bilge water go?", "Oily bilge water goes into the grey tank behind the crane"),
    (LIGHTHOUSE_NAME, "In which months can I visit the lighthouse?", "opens to visitors from April to October"),
    (LIGHTHOUSE_NAME, "Do children pay to climb?", "children under twelve climb for free with a paying adult"),
    (LIGHTHOUSE_NAME, "How many steps lead to the lantern room?", "one hundred and twelve steps to the lantern room"),
    (LIGHTHOUSE_NAME, "How far can the light be seen?", "is seen from eighteen nautical miles"),
    (LIGHTHOUSE_NAME, "What happens to tours in strong wind?", "the gallery door stays shut and tours stop"),
]


def questions_jsonl() -> str:
    return "".join(
        json.dumps({"question": asked, "references": [{"document": name, "content": excerpt}]}) + "\n"
        for name, asked, excerpt in QUESTIONS
    )
