"""Small inline SVG plots for the Compare page: no script, no network asset,
themed by CSS classes, and well-formed so tests can read them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

ROW = 26
LABEL_WIDTH = 300
PLOT_WIDTH = 360
PAD = 12


def _x(value: float, low: float, high: float) -> float:
    span = high - low or 1.0
    return LABEL_WIDTH + PAD + (value - low) / span * PLOT_WIDTH


def forest_plot(
    title: str,
    rows: Sequence[tuple[str, float, float, float]],
    fmt: Callable[[float], str] = lambda v: f"{v:+.3f}",
) -> str:
    """Differences with their 95% intervals, one row each, around a zero line.

    rows: (label, difference, ci_low, ci_high).
    """
    if not rows:
        return ""
    low = min(0.0, *(r[2] for r in rows))
    high = max(0.0, *(r[3] for r in rows))
    margin = (high - low) * 0.08 or 0.5
    low, high = low - margin, high + margin
    height = PAD * 2 + ROW * (len(rows) + 1)
    width = LABEL_WIDTH + PLOT_WIDTH + PAD * 2 + 80
    zero = _x(0.0, low, high)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="cl-plot" role="img" width="{width}" height="{height}"'
        f' viewBox="0 0 {width} {height}"><title>{escape(title)}</title>',
        f'<text x="{PAD}" y="{PAD + 10}" class="cl-plot-title">{escape(title)}</text>',
        f'<line x1="{zero:.1f}" y1="{PAD + 16}" x2="{zero:.1f}" y2="{height - PAD}" class="cl-plot-zero"/>',
    ]
    for number, (label, difference, ci_low, ci_high) in enumerate(rows, start=1):
        y = PAD + ROW * number + 10
        clear = ci_low > 0 or ci_high < 0
        kind = "cl-plot-clear" if clear else "cl-plot-unclear"
        shown = label if len(label) <= 44 else label[:43] + "…"
        parts += [
            f'<g class="{kind}" data-label="{escape(label, quote=True)}">',
            f'<text x="{PAD}" y="{y + 4}" class="cl-plot-label">{escape(shown)}</text>',
            f'<line x1="{_x(ci_low, low, high):.1f}" y1="{y}" x2="{_x(ci_high, low, high):.1f}" y2="{y}"'
            ' class="cl-plot-ci"/>',
            f'<circle cx="{_x(difference, low, high):.1f}" cy="{y}" r="4" class="cl-plot-dot"/>',
            f'<text x="{LABEL_WIDTH + PLOT_WIDTH + PAD * 2 + 4}" y="{y + 4}" class="cl-plot-value">'
            f"{escape(fmt(difference))}</text></g>",
        ]
    parts.append("</svg>")
    return "".join(parts)
