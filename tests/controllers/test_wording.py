from __future__ import annotations

from controllers.wording import count, plural


def test_count_says_one_in_the_singular_and_any_other_number_in_the_plural() -> None:
    assert [count(n, "pod") for n in (0, 1, 2)] == ["0 pods", "1 pod", "2 pods"]


def test_plural_takes_an_irregular_form_for_a_verb() -> None:
    assert (plural(1, "waits", "wait"), plural(3, "waits", "wait")) == ("waits", "wait")
