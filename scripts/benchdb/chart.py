"""The chart: one panel per measure, one bar per variant, written as SVG.

Hand-written SVG needs nothing installed and diffs as text. Each bar is the
median, the thin line across its end the min–max spread, and the label the
value and the speedup against plain.
"""

from xml.sax.saxutils import escape

COLORS = {"plain": "#8c8c8c", "eatmydata": "#d62728", "tmpfs": "#1f77b4",
          "db knobs": "#2ca02c"}
OTHERS = ["#ff7f0e", "#9467bd", "#8c564b", "#e377c2"]
WIDTH, LEFT, BAR_AREA, ROW, TITLE = 900, 130, 560, 22, 26


def color(variant, others):
    """The mode's colour: "eatmydata @xfs" is drawn like "eatmydata"."""
    variant = variant.split(" @")[0]
    if variant not in COLORS:
        COLORS[variant] = others.pop(0) if others else "#17becf"
    return COLORS[variant]


def svg(panels, caption):
    others = list(OTHERS)
    parts, y = [], 34
    for title, unit, bars in panels:
        better = "higher is better" if unit == "tps" else "shorter is better"
        parts.append(f'<text x="10" y="{y + 16}" class="title">{escape(title)} '
                     f'<tspan class="note">({unit}, {better})</tspan></text>')
        y += TITLE
        top = max(b[3] for b in bars) or 1
        for variant, median, low, high, speedup in bars:
            scale = BAR_AREA / top
            length = max(median * scale, 1)
            parts.append(f'<text x="{LEFT - 8}" y="{y + 15}" class="label">{escape(variant)}</text>')
            parts.append(f'<rect x="{LEFT}" y="{y + 3}" width="{length:.1f}" height="{ROW - 6}" '
                         f'fill="{color(variant, others)}"/>')
            parts.append(f'<line x1="{LEFT + low * scale:.1f}" x2="{LEFT + high * scale:.1f}" '
                         f'y1="{y + ROW / 2}" y2="{y + ROW / 2}" class="spread"/>')
            value = f"{median:,.0f} tps" if unit == "tps" else f"{median:.2f} s"
            if speedup is not None and variant != "plain":
                value += f"  ({speedup:.2f}x)"
            parts.append(f'<text x="{LEFT + max(length, high * scale) + 6:.1f}" y="{y + 15}" '
                         f'class="value">{escape(value)}</text>')
            y += ROW
        y += 14
    height = y + 24
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
            f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif">'
            '<style>.title{font-size:14px;font-weight:bold}.note{font-weight:normal;fill:#555}'
            '.label{font-size:12px;text-anchor:end}.value{font-size:12px}'
            '.spread{stroke:#000;stroke-width:1.5}.caption{font-size:11px;fill:#555}</style>'
            f'<rect width="{WIDTH}" height="{height}" fill="#fff"/>'
            f'<text x="10" y="20" class="title">eatmydata: real workloads, median of runs '
            f'(line: min–max)</text>')
    foot = f'<text x="10" y="{height - 8}" class="caption">{escape(caption)}</text></svg>\n'
    return head + "".join(parts) + foot
