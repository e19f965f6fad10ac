"""Go's sort.SliceStable (insertion sort in blocks of 20, then SymMerge), for the places where
kube-apiserver sorts with a `less` that is not a strict order and so its exact steps decide the
result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Less = Callable[[Any, Any], bool]


def stable_sort(items: list[Any], less: Less) -> list[Any]:
    data = list(items)
    n = len(data)
    block = 20
    a, b = 0, block
    while b <= n:
        _insertion_sort(data, less, a, b)
        a, b = b, b + block
    _insertion_sort(data, less, a, n)
    while block < n:
        a, b = 0, 2 * block
        while b <= n:
            _sym_merge(data, less, a, a + block, b)
            a, b = b, b + 2 * block
        if a + block < n:
            _sym_merge(data, less, a, a + block, n)
        block *= 2
    return data


def _insertion_sort(data: list[Any], less: Less, a: int, b: int) -> None:
    for i in range(a + 1, b):
        j = i
        while j > a and less(data[j], data[j - 1]):
            data[j], data[j - 1] = data[j - 1], data[j]
            j -= 1


def _sym_merge(data: list[Any], less: Less, a: int, m: int, b: int) -> None:
    if m - a == 1:
        i, j = m, b
        while i < j:
            h = (i + j) // 2
            if less(data[h], data[a]):
                i = h + 1
            else:
                j = h
        for k in range(a, i - 1):
            data[k], data[k + 1] = data[k + 1], data[k]
        return
    if b - m == 1:
        i, j = a, m
        while i < j:
            h = (i + j) // 2
            if not less(data[m], data[h]):
                i = h + 1
            else:
                j = h
        for k in range(m, i, -1):
            data[k], data[k - 1] = data[k - 1], data[k]
        return
    mid = (a + b) // 2
    n = mid + m
    start, r = (n - b, mid) if m > mid else (a, m)
    p = n - 1
    while start < r:
        c = (start + r) // 2
        if not less(data[p - c], data[c]):
            start = c + 1
        else:
            r = c
    end = n - start
    if start < m < end:
        _rotate(data, start, m, end)
    if a < start < mid:
        _sym_merge(data, less, a, start, mid)
    if mid < end < b:
        _sym_merge(data, less, mid, end, b)


def _rotate(data: list[Any], a: int, m: int, b: int) -> None:
    i, j = m - a, b - m
    while i != j:
        if i > j:
            _swap_range(data, m - i, m, j)
            i -= j
        else:
            _swap_range(data, m - i, m + j - i, i)
            j -= i
    _swap_range(data, m - i, m, i)


def _swap_range(data: list[Any], a: int, b: int, n: int) -> None:
    for i in range(n):
        data[a + i], data[b + i] = data[b + i], data[a + i]
