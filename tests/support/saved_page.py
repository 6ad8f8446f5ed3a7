"""A web page saved from a browser (tests/fixtures/saved_page.html) and the Markdown
its main content must read as."""

from __future__ import annotations

from tests.support.repo import FIXTURES

SAVED_PAGE = (FIXTURES / "saved_page.html").read_bytes()


SAVED_PAGE_TEXT = """# Leave policy

Updated 1 February 2024

Every employee gets 25 days of annual leave & public holidays. Café staff follow the same rules.

## Requesting leave

Ask your manager at least two weeks ahead.
Urgent cases are handled by HR.

1. Open the leave form.
2. Pick the dates <from> and <to>.
3. Submit it.

### Carry-over

- Up to five days carry over.
- Unused days expire on 31 March.

## Entitlement by grade

| Grade | Days |
|---|---|
| Junior | 25 |
| Senior \\| Lead | 28 |

## Checking your balance

Query the API:

```python
balance = api.get("/leave")
if balance < 5:
    print("plan ahead")
```"""
