"""Tiny inline SVG charts for the reports: no scripts, no external assets.

Every label goes through html.escape; numbers are formatted here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

PALETTE = ("#2b6cb0", "#dd6b20", "#38a169", "#805ad5", "#d53f8c", "#319795", "#b7791f", "#4a5568")
FONT = 'font-family="system-ui, sans-serif" font-size="12"'


def _fmt_default(value: float) -> str:
    return f"{value:.3g}"


def bar_chart(
    title: str,
    labels: Sequence[str],
    series: dict[str, Sequence[float]],
    fmt: Callable[[float], str] = _fmt_default,
    max_value: float | None = None,
) -> str:
    """Horizontal grouped bars: one group per label, one bar per series."""
    names = list(series)
    label_w, bar_h, gap, width = 330, 14, 10, 820
    plot_w = width - label_w - 70
    top = max(max_value or 0.0, *(v for values in series.values() for v in values), 1e-12)
    group_h = bar_h * len(names) + gap
    legend_h = 22
    height = 30 + legend_h + group_h * len(labels) + 10
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" {FONT}>',
        f"<title>{escape(title)}</title>",
        f'<text x="0" y="16" font-weight="bold">{escape(title)}</text>',
    ]
    x = label_w
    for i, name in enumerate(names):
        colour = PALETTE[i % len(PALETTE)]
        parts.append(f'<rect x="{x}" y="28" width="10" height="10" fill="{colour}"/>')
        parts.append(f'<text x="{x + 14}" y="37">{escape(name)}</text>')
        x += 20 + 7 * len(name) + 16
    y = 30 + legend_h
    for row, label in enumerate(labels):
        parts.append(f'<text x="{label_w - 8}" y="{y + group_h / 2}" text-anchor="end">{escape(_short(label, 52))}</text>')
        for i, name in enumerate(names):
            value = series[name][row]
            w = max(0.0, plot_w * value / top)
            colour = PALETTE[i % len(PALETTE)]
            by = y + i * bar_h
            parts.append(f'<rect x="{label_w}" y="{by}" width="{w:.1f}" height="{bar_h - 2}" fill="{colour}"/>')
            parts.append(f'<text x="{label_w + w + 4:.1f}" y="{by + bar_h - 4}">{escape(fmt(value))}</text>')
        y += group_h
    parts.append("</svg>")
    return "".join(parts)


def scatter(
    title: str,
    points: Sequence[tuple[str, float, float]],
    x_label: str,
    y_label: str,
    fmt_x: Callable[[float], str] = _fmt_default,
    fmt_y: Callable[[float], str] = _fmt_default,
) -> str:
    """Labelled points (label, x, y): e.g. tokens sent against a quality measure."""
    width, height, left, bottom, top_pad, right = 820, 380, 70, 50, 40, 40
    plot_w, plot_h = width - left - right, height - top_pad - bottom
    xs = [p[1] for p in points] or [0.0]
    ys = [p[2] for p in points] or [0.0]
    x_max = max(xs) * 1.1 or 1.0
    y_max = max(ys) * 1.1 or 1.0
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" {FONT}>',
        f"<title>{escape(title)}</title>",
        f'<text x="0" y="16" font-weight="bold">{escape(title)}</text>',
        f'<line x1="{left}" y1="{top_pad + plot_h}" x2="{left + plot_w}" y2="{top_pad + plot_h}" stroke="#555"/>',
        f'<line x1="{left}" y1="{top_pad}" x2="{left}" y2="{top_pad + plot_h}" stroke="#555"/>',
        f'<text x="{left + plot_w / 2}" y="{height - 10}" text-anchor="middle">{escape(x_label)}</text>',
        f'<text x="14" y="{top_pad + plot_h / 2}" transform="rotate(-90 14 {top_pad + plot_h / 2})" '
        f'text-anchor="middle">{escape(y_label)}</text>',
    ]
    for fraction in (0.0, 0.5, 1.0):
        tx = left + plot_w * fraction
        ty = top_pad + plot_h * (1 - fraction)
        parts.append(f'<text x="{tx:.1f}" y="{top_pad + plot_h + 16}" text-anchor="middle">'
                     f"{escape(fmt_x(x_max * fraction))}</text>")
        parts.append(f'<text x="{left - 6}" y="{ty:.1f}" text-anchor="end">{escape(fmt_y(y_max * fraction))}</text>')
    for i, (label, x, y) in enumerate(points):
        px = left + plot_w * x / x_max
        py = top_pad + plot_h * (1 - y / y_max)
        colour = PALETTE[i % len(PALETTE)]
        parts.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="6" fill="{colour}"/>')
        # Labels of points in the right half go to their left, so none runs off the chart.
        anchor, dx = ("end", -9) if px > left + plot_w / 2 else ("start", 9)
        parts.append(f'<text x="{px + dx:.1f}" y="{py + 4:.1f}" text-anchor="{anchor}">{escape(_short(label, 52))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _short(text: str, limit: int = 32) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
