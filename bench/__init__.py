"""Benchmarks: how fast opsboard converges, what it costs, and how it compares (issue 9).

`python -m bench` (or `make bench`) prints a table and writes JSON and PNG plots
under bench/results/. Benchmarks report what they measured; they never assert.
"""
