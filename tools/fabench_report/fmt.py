"""fmt: numbers, sizes and context values as the report writes them."""

import html
import json
import math


def fmt_bytes(n):
    n = int(n)
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k and n % k == 0:
            return f"{n // k} {unit}"
    return f"{n} B"


def fmt_num(v):
    """Five significant digits, no exponent: 41.83, 0.0008765, 6201, 12,345."""
    if v == 0 or not math.isfinite(v):
        return f"{v:g}"
    if abs(v) >= 1e5:
        return f"{v:,.0f}"
    digits = max(0, 4 - int(math.floor(math.log10(abs(v)))))
    text = f"{v:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def rate_of(ctx, key="port_rate_Gbps"):
    try:
        v = float(ctx.get(key, ""))
    except (TypeError, ValueError):
        return None
    return v if v > 0 else None


def ctx_text(v):
    if isinstance(v, list):
        return ", ".join(ctx_text(x) for x in v)
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, dict):
        return json.dumps(v, sort_keys=True)
    return str(v)


def esc(x):
    return html.escape(str(x))
