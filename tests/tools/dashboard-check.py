#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Check a Grafana dashboard against a real Prometheus, without Grafana.

  dashboard-check.py DASHBOARD.json METRICS_SCRAPE [PROM_URL INSTANCE]

Structure (always): a datasource variable (type datasource, Prometheus) and
an instance variable (a query of label_values(..., instance) on
${datasource}); every panel but a row has a title, the ${datasource}
datasource, a unit and at least one target, each with an expression on the
same datasource; ids are unique. Every metric an expression (or a variable's
query) names is one of METRICS_SCRAPE, a scrape of xdp-rld's /metrics.
With PROM_URL: every expression, its variables substituted ($instance by
INSTANCE, $__rate_interval by 10s), run through /api/v1/query, must return
data. Prints one line per problem; exits 1 when there is any.
"""
import json
import re
import sys
import urllib.parse
import urllib.request

DS = {"type": "prometheus", "uid": "${datasource}"}
METRIC = re.compile(r"\b(xdp_rl_[a-z0-9_]+)")


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

    ids = {}
    for p in dash.get("panels", []):
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

    for where, e in exprs:
        for m in METRIC.findall(e):
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
            else:
                print(f"ok {where}: {len(res['data']['result'])} series")

    for b in bad:
        print("BAD " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
