"""``report.html``: one self-contained page a data holder can open, print or send with the release.

It holds the graph drawing (inline SVG), the edges with their kind, the privacy
statement in plain words (relation, guarantee, what is assumed public, what
this run spent) and, where one was made, the :func:`dpcd.forecast.forecast` forecast at
the chosen budget. Everything on it is either released (the graph, the privacy
report) or computed from public inputs (the forecast); every text that comes
from the user (column and category names) is HTML-escaped. No script, no
external resource.

>>> page = render_report({"nodes": ["a", "b"], "directed_edges": [["a", "b"]], "undirected_edges": [],
...                       "graph_type": "CPDAG", "algorithm": "em_pc"},
...                      {"label": "EM-PC", "relation": {"name": "replace", "in_words": "replace one record"},
...                       "guarantee": {"epsilon": 1.0, "delta": 0.0}, "assumed_public": {"n": 500}})
>>> page.startswith("<!DOCTYPE html>") and "a → b" in page and "ε = 1" in page
True
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

__all__ = ["render_report", "ARROWS", "FORECAST_HELD_OUT_ERROR", "FORECAST_CAUTION"]

_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;
color:#222;line-height:1.45}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ccc;padding:.25rem .6rem;text-align:left}
th{background:#f4f4f4}.figure svg{max-width:100%;height:auto}.note{color:#555;font-size:.92rem}
.statement{background:#f5f9ff;border-left:4px solid #2a6ebb;padding:.6rem 1rem}
.warning{background:#fff4e5;border-left:4px solid #d9822b;padding:.6rem 1rem}.headline{font-size:1.05rem}
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _number(value: Any, digits: int = 3) -> str:
    try:
        return f"{float(value):.{digits}g}"
    except (TypeError, ValueError):
        return _e(value)


def _sentence(text: str) -> str:
    text = str(text).strip()
    if not text:
        return ""
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


FORECAST_HELD_OUT_ERROR = (0.13, 0.46)
"""How far the forecast's expected skeleton F1 lay above the realised mean at ε = 1, n = 100 000 on the bnlearn
networks no constant was chosen on (the benchmark's held-out set, ``dpcd_papers.benchmark.HELD_OUT``, the ones
the schema admits; ``figures/benchmark/benchmark_held_out_summary.csv``, which a test checks this range against)."""

FORECAST_CAUTION = (
    "How far to trust it: on real networks that no constant of this library was tuned on, this forecast lay "
    f"{FORECAST_HELD_OUT_ERROR[0]:.2f}–{FORECAST_HELD_OUT_ERROR[1]:.2f} above the skeleton F1 the release reached "
    "(docs/benchmark.md, held-out networks): the schema does not show how weak the data's dependencies are. On real data read it "
    "as an upper estimate."
)

ARROWS = ("What an arrow means, and what it does not: a → b says that, if every common cause of the variables is "
          "among them (no hidden confounder) and the data show no independence the graph does not imply "
          "(faithfulness), a causes b; an undirected edge a — b is a direct link whose direction these data cannot "
          "tell; a missing edge is a (conditional) independence the private tests accepted, which noise can also "
          "produce.")
"""The sentence under every released picture."""


def render_report(graph_json: Mapping[str, Any], privacy: Mapping[str, Any], *, svg: str | None = None,
                  aliases: Mapping[str, str] | None = None, forecast: pd.DataFrame | None = None,
                  forecast_note: str = "", headline: str = "", warnings: Sequence[str] = ()) -> str:
    """The page's HTML text from the released graph (:func:`~dpcd.release.writers.graph_to_json` form),
    ``privacy.json``'s content, an inline ``svg`` drawing, ``{id: name}`` for the names the drawing shows as
    a short id (listed under it) and an optional forecast table. The page leads with ``warnings`` and the
    ``headline`` verdict (:func:`dpcd.forecast.worth_releasing`), and says under the picture what an arrow means.

    >>> page = render_report({"nodes": ["a", "b"], "directed_edges": [], "undirected_edges": [["a", "b"]]},
    ...                      {"guarantee": {"epsilon": 1.0, "delta": 0.0}}, headline="Not worth releasing.",
    ...                      warnings=["Not worth releasing. Released anyway (force)."])
    >>> page.index("Released anyway") < page.index("<h2>Edges</h2>"), "hidden confounder" in page
    (True, True)
    """
    guarantee = privacy.get("guarantee", {})
    relation = privacy.get("relation", {})
    eps, delta = guarantee.get("epsilon"), guarantee.get("delta", 0.0)
    budget = f"ε = {_number(eps)}" + (f", δ = {_number(delta, 2)}" if delta else " (pure ε-DP, δ = 0)")
    label = privacy.get("label", privacy.get("algorithm", graph_json.get("algorithm", "")))
    nodes = graph_json.get("nodes", [])
    directed = graph_json.get("directed_edges", [])
    undirected = graph_json.get("undirected_edges", [])
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Private causal graph ({_e(label)}, {_e(budget)})</title>", f"<style>{_STYLE}</style></head><body>",
        f"<h1>Differentially private causal graph: {_e(label)}, {_e(budget)}</h1>",
        *[f"<p class='warning'><b>Warning:</b> {_e(text)}</p>" for text in warnings],
        f"<p class='headline'><b>{_e(headline)}</b></p>" if headline and not any(
            str(text).startswith(headline) for text in warnings) else "",
        f"<p>A {_e(graph_json.get('graph_type', 'graph'))} over {len(nodes)} variables with {len(directed)} directed "
        f"and {len(undirected)} undirected edges.</p>",
        f"<p class='note'>Variables: {', '.join(_e(v) for v in nodes)}.</p>",
    ]
    if svg:
        parts.append(f'<div class="figure">{svg}</div>')
        if aliases:
            parts += ["<p class='note'>Names the drawing's fonts cannot show are drawn as short ids:</p>",
                      _table(["in the drawing", "variable"], [[_e(k), _e(v)] for k, v in aliases.items()])]
    parts.append(f"<p class='note'>{_e(ARROWS)}</p>")
    rows = [[_e(u), "→", _e(v), "directed"] for u, v in directed]
    rows += [[_e(u), "—", _e(v), "undirected (direction not identified)"] for u, v in undirected]
    parts += ["<h2>Edges</h2>", _table(["from", "", "to", "kind"], rows) if rows else "<p>No edge was released.</p>"]
    parts += [f"<p class='note'>Edges in text: {', '.join(_e(f'{u} → {v}') for u, v in directed)}"
              f"{'; ' if directed and undirected else ''}{', '.join(_e(f'{u} — {v}') for u, v in undirected)}</p>"]

    public = privacy.get("assumed_public", {})
    public_items = []
    if "schema" in public:
        public_items.append("the schema (column names, kinds, categories, bounds, fill rules; sha256 "
                            f"<code>{_e(str(public['schema'].get('sha256', ''))[:16])}…</code>)")
    if "algorithm" in public:
        public_items.append(f"the algorithm and its parameters ({_e(public['algorithm'].get('name', label))})")
    if "n" in public:
        public_items.append(f"the number of rows, n = {_e(public['n'])}")
    totals = privacy.get("spent_this_run", {}).get("totals", {})
    pure = not delta  # a pure ε-DP guarantee: the run's charges are pure too, so basic composition is their total
    spent = totals.get("basic" if pure else "tight", {})
    parts += [
        "<h2>Privacy statement</h2>",
        "<div class='statement'><p>"
        f"Guarantee: <b>{_e(budget)}</b> under the <i>{_e(relation.get('name', ''))}</i> relation. "
        f"{_e(_sentence(relation.get('in_words', '')))} This is a worst case over all data sets, fixed before the data "
        f"were "
        "read.</p>"
        + (f"<p>Assumed public (not protected): {'; '.join(public_items)}. Nothing else about the data was used "
           "outside the charged noise mechanisms.</p>" if public_items else "")
        + (f"<p class='note'>What this run happened to charge "
           f"({'basic composition of its pure ε-DP steps' if pure else 'tight accountant'}): "
           f"ε = {_number(spent.get('epsilon'))}" + ("" if pure else f", δ = {_number(spent.get('delta'), 2)}")
           + "; informational, the guarantee above is what holds.</p>" if spent else "")
        + (f"<p class='note'>Noise: {_e(privacy['noise'])}.</p>" if privacy.get("noise") else "")
        + "</div>",
    ]
    if privacy.get("differentially_private") is False:
        parts.append("<p><b>Warning:</b> this algorithm has no differential-privacy guarantee.</p>")

    parts.append("<h2>How good can this graph be? (forecast)</h2>")
    if forecast is not None and len(forecast):
        rows = []
        released = privacy.get("algorithm")
        for _, row in forecast.iterrows():
            name = _e(row["label"]) + (" (released)" if row.get("algorithm") == released else "")
            if row.get("status") != "ok":
                rows.append([name, _number(row["epsilon"]), _e(row["status"]), "", "", "", ""])
                continue
            rows.append([name, _number(row["epsilon"]),
                         f"{_number(row['skeleton_f1'], 2)} ({_number(row['skeleton_f1_low'], 2)}–"
                         f"{_number(row['skeleton_f1_high'], 2)})",
                         _number(row.get("random_f1_high"), 2),
                         f"{_number(row['cpdag_f1'], 2)} ({_number(row['cpdag_f1_low'], 2)}–"
                         f"{_number(row['cpdag_f1_high'], 2)})",
                         f"{_number(row['edges'], 3)} of {_number(row['true_edges'], 3)}", _e(row.get("verdict", ""))])
        parts.append(_table(["algorithm", "ε", "skeleton F1 (10–90 % of runs)",
                             "random graphs, same edges (90 % of mean)", "CPDAG F1 (10–90 %)",
                             "edges released of true", "in words"], rows))
        mine = forecast[(forecast["algorithm"] == released) & (forecast["status"] == "ok")] \
            if "algorithm" in forecast else forecast.iloc[0:0]
        if len(mine) and str(mine["verdict"].iloc[0]).startswith("not better than chance"):
            parts.append("<p><b>At this budget and number of rows the forecast is no better than a random graph with "
                         "as many edges:</b> the released graph is unlikely to be worth having. A larger ε, more rows "
                         "or fewer columns would help; <code>dpcd forecast</code> shows by how much.</p>")
        parts.append(f"<p class='note'>{_e(FORECAST_CAUTION)}</p>")
    parts.append(f"<p class='note'>{_e(forecast_note)}</p>" if forecast_note else "")
    prep = privacy.get("data_preparation")
    if prep:
        parts += ["<h2>Data preparation checked before the release</h2>", f"<p class='note'>{_e(prep)}</p>"]
    parts.append(f"<p class='note'>dpcd {_e(privacy.get('dpcd_version', ''))}; the same content is in "
                 "privacy.json and graph.json beside this page.</p></body></html>")
    return "\n".join(p for p in parts if p) + "\n"
