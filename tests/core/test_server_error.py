"""An unhandled error shows opsboard's page: a database that does not answer as a 503
saying so (where it was a bare "Server Error (500)"), anything else as a 500. Neither page
reads the database, nor shows the error's text (the log has it)."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

pytestmark = pytest.mark.urls("tests.core.failing_urls")


@override_settings(DEBUG=False)
def test_a_database_that_does_not_answer_is_a_503_saying_so() -> None:
    response = Client(raise_request_exception=False).get("/db/")
    assert response.status_code == 503
    assert response["Retry-After"] == "10"
    html = response.content.decode()
    assert "Database unavailable" in html and "Nothing was changed" in html
    assert "10.0.0.9" not in html


@override_settings(DEBUG=False)
def test_any_other_error_is_a_500_in_opsboards_words() -> None:
    response = Client(raise_request_exception=False).get("/bug/")
    assert response.status_code == 500
    html = response.content.decode()
    assert "Something went wrong" in html and "a bug" not in html
