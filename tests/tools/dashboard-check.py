#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Check a Grafana dashboard against a real Prometheus, without Grafana.

  dashboard-check.py DASHBOARD.json METRICS_SCRAPE [PROM_URL INSTANCE]

Structure (always): a datasource variable (type datasource, Prometheus) and
an instance variable (a query of label_values(..., instance) on
${datasource}); every panel but a row has a title, the ${datasource}
datasource, a unit and at least one target, each with an expression on the
same datasource; ids are unique. Every metric an expression (or a variable's
query) names, xdp_rl_* or any NAME{...} selector, is one of METRICS_SCRAPE,
a scrape of xdp-rld's /metrics, and every selector of a panel filters on
instance=~"$instance". Panels inside a collapsed row are checked too.
With PROM_URL: every expression, its variables substituted ($instance by
INSTANCE, $__rate_interval by 10s), run through /api/v1/query, must return
data, and a number (not only NaN or Inf). Prints one line per problem; exits 1 when there is any.
"""
import json
import re
import sys
import urllib.parse
import urllib.request

DS = {"type": "prometheus", "uid": "${datasource}"}
METRIC = re.compile(r"\b(xdp_rl_[a-z0-9_]+)")
# a selector: a name and its braces (any metric, whatever its prefix)
SELECTOR = re.compile(r"(?<![\w:])([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}")


def scraped_names(path):
    names = set()
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        names.add(re.split(r"[{ ]", line, 1)[0])
    return names


def main():
    dash = json.load(open(sys.argv[1]))
    exported = scraped_names(sys.argv[2])
    prom = sys.argv[3] if len(sys.argv) > 4 else None
    instance = sys.argv[4] if prom else None
    bad = []
    exprs = []

    tv = {v.get("name"): v for v in dash.get("templating", {}).get("list", [])}
    ds = tv.get("datasource")
    if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        bad.append("no datasource variable of type datasource for prometheus")
    inst = tv.get("instance")
    q = inst and inst.get("query")
    q = q.get("query") if isinstance(q, dict) else q
    if (not inst or inst.get("type") != "query" or inst.get("datasource") != DS
            or not q or not re.match(r"label_values\(\w+, *instance\)$", q)):
        bad.append("no instance variable: a query of label_values(METRIC, instance) on ${datasource}")
    elif q:
        exprs.append(("variable instance", q))
    if not dash.get("title"):
        bad.append("the dashboard has no title")

    panels = []
    for p in dash.get("panels", []):
        panels.append(p)
        panels.extend(p.get("panels") or [])    # a collapsed row holds its own
    ids = {}
    for p in panels:
        pid = p.get("id")
        title = p.get("title", "")
        if pid in ids:
            bad.append(f"panel id {pid} twice: '{ids[pid]}' and '{title}'")
        ids[pid] = title
        if p.get("type") == "row":
            continue
        name = f"panel {pid} '{title}'"
        if not title:
            bad.append(f"panel {pid} has no title")
        if p.get("datasource") != DS:
            bad.append(f"{name}: datasource is {p.get('datasource')}, not ${{datasource}}")
        if not p.get("fieldConfig", {}).get("defaults", {}).get("unit"):
            bad.append(f"{name}: no unit")
        if not p.get("gridPos"):
            bad.append(f"{name}: no gridPos")
        targets = p.get("targets") or []
        if not targets:
            bad.append(f"{name}: no target")
        for t in targets:
            if t.get("datasource") != DS:
                bad.append(f"{name} {t.get('refId')}: its datasource is not ${{datasource}}")
            if not t.get("expr"):
                bad.append(f"{name} {t.get('refId')}: no expression")
            else:
                exprs.append((f"{name} {t.get('refId')}", t["expr"]))
                for sel, labels in SELECTOR.findall(t["expr"]):
                    if not re.search(r'\binstance=~"\$instance"', labels):
                        bad.append(f"{name} {t.get('refId')}: {sel}{{{labels}}} does not filter on $instance")

    for where, e in exprs:
        names = set(METRIC.findall(e)) | {n for n, _ in SELECTOR.findall(e)}
        for m in sorted(names):
            if m not in exported:
                bad.append(f"{where}: {m} is not a metric xdp-rld exports")

    if prom:
        for where, e in exprs:
            if where.startswith("variable"):
                m = re.match(r"label_values\((\w+), *instance\)", e)
                e = f'count by (instance) ({m.group(1)})'
            q = e.replace("$instance", instance).replace("$__rate_interval", "10s")
            url = prom + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
            try:
                with urllib.request.urlopen(url, timeout=10) as r:
                    res = json.load(r)
            except OSError as err:
                bad.append(f"{where}: the query failed: {err}: {q}")
                continue
            if res.get("status") != "success":
                bad.append(f"{where}: {res.get('error')}: {q}")
            elif not res["data"]["result"]:
                bad.append(f"{where}: no data: {q}")
            elif all(r.get("value", [0, "NaN"])[1] in ("NaN", "+Inf", "-Inf")
                     for r in res["data"]["result"]):
                bad.append(f"{where}: no number (NaN or Inf only): {q}")
            else:
                print(f"ok {where}: {len(res['data']['result'])} series")

    for b in bad:
        print("BAD " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
