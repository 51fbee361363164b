#!/usr/bin/env python3
"""Medians of several scripts/hostile.sh runs (issue 41: the machine is shared and
noisy). For each vector and kind (analyze, job submit, job read): each run's p99
over that run's own baseline p99, and the median of those ratios.

    scripts/hostile.sh ... > run1.log; ...; scripts/load/hostile_median.py run*.log
"""
import re
import statistics
import sys

runs = []
for path in sys.argv[1:]:
    txt = open(path).read()
    m = re.search(r"baseline .*?analyze p50/p99 ([\d.]+)/([\d.]+) ms.*?job submit p50/p99 ([\d.]+)/([\d.]+) ms.*?job read ([\d.]+)/([\d.]+) ms.*?peak RSS (\d+)", txt)
    if not m:
        continue
    base = {"analyze": (float(m[1]), float(m[2])), "submit": (float(m[3]), float(m[4])), "read": (float(m[5]), float(m[6]))}
    vec = {}
    for line in txt.splitlines():
        if not line.startswith("| ") or line.startswith("| vector") or line.startswith("| ---"): continue
        c = [x.strip() for x in line.strip("|").split("|")]
        def pp(s): a, b = s.split(" ")[0].split("/"); return float(a), float(b)
        vec[c[0]] = {"abuser": c[1], "analyze": pp(c[2]), "submit": pp(c[4]), "read": pp(c[5]), "rss": int(c[8]), "refused": c[6], "alive": c[9]}
    runs.append((path, base, vec))
print("runs:", [r[0].split('/')[-1] for r in runs])
kinds = ["analyze", "submit", "read"]
print("baseline p50/p99 (median of runs): " + ", ".join("%s %.1f/%.1f" % (k, statistics.median(r[1][k][0] for r in runs), statistics.median(r[1][k][1] for r in runs)) for k in kinds))
print("| vector | " + " | ".join("%s p50/p99 ms (median), p99/baseline per run -> median" % k for k in kinds) + " | peak RSS MiB (max) | bystander refused | alive |")
print("| --- |" + " --- |" * (len(kinds) + 3))
worst = 0
for v in runs[0][2]:
    cells = []
    for k in kinds:
        p50 = statistics.median(r[2][v][k][0] for r in runs)
        p99 = statistics.median(r[2][v][k][1] for r in runs)
        ratios = [r[2][v][k][1] / r[1][k][1] for r in runs]
        med = statistics.median(ratios); worst = max(worst, med)
        cells.append("%.1f/%.1f; %s -> **%.1f**" % (p50, p99, " ".join("%.1f" % x for x in ratios), med))
    print("| %s | %s | %d | %s | %s |" % (v, " | ".join(cells), max(r[2][v]["rss"] for r in runs), ",".join(sorted(set(r[2][v]["refused"] for r in runs))), ",".join(sorted(set(r[2][v]["alive"] for r in runs)))))
print("worst median ratio: %.2f" % worst)
