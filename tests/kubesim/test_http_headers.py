"""The fast header reader gives what http.client's own gives, for every kind of block."""

from __future__ import annotations

import http.client
import io
from collections.abc import Callable, Iterator

import pytest
import urllib3

from kubesim import http_headers
from tests.support.http import QuietHandler, serving

BLOCKS = [
    # what API clients and servers send
    b"Host: 127.0.0.1:6443\r\nUser-Agent: kubectl/v1.28.7\r\nAccept: application/json\r\n"
    b"Authorization: Bearer abc\r\nAccept-Encoding: gzip\r\n\r\n",
    b"Audit-Id: 6c0b6c0c-1d0e\r\nCache-Control: no-cache, private\r\n"
    b"Content-Type: application/json\r\nDate: Fri, 27 Nov 2026 16:00:00 GMT\r\n"
    b"Content-Length: 1234\r\n\r\n",
    b"Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n",
    # repeats, odd spacing, empty values, LF-only ends, Latin-1, a colon in the value
    b"Set-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-Spaces:   padded   \r\nX-Tab:\tt\r\n\r\n",
    b"X-Empty:\r\nX-Blank:   \r\nLocation: https://h:6443/x?y=z:1\n\n",
    b"X-Latin: caf\xe9\r\n\r\n",
    # what the fast path leaves to the e-mail parser
    b"X-Folded: one\r\n two\r\nX-After: 1\r\n\r\n",
    b"X-A: 1\r\nno colon here\r\nX-B: 2\r\n\r\n",
    b"Bad Name: x\r\nX-C: 3\r\n\r\n",
    b": no name\r\nX-D: 4\r\n\r\n",
    b"X-CR: a\rb\r\nX-E: 5\r\n\r\n",
    b"From nobody\r\nX-F: 6\r\n\r\n",
    b"Content-Type: multipart/mixed; boundary=zz\r\n\r\n",
    b"content-type:  Message/rfc822\r\n\r\n",
    # no blank line before the end of the stream, or nothing at all
    b"X-Last: 7\r\n",
    b"X-Last: 8",
    b"\r\n",
    b"",
]


def _read(
    reader: Callable[[io.BytesIO], http.client.HTTPMessage], block: bytes
) -> tuple[http.client.HTTPMessage, bytes]:
    """The message, and what the reader left of the stream (the body, next)."""
    fp = io.BytesIO(block + b"body, not to be read")
    return reader(fp), fp.read()


@pytest.mark.parametrize("block", BLOCKS)
def test_the_same_message_as_the_standard_library(block: bytes) -> None:
    ours, our_rest = _read(http_headers.parse_headers, block)
    theirs, their_rest = _read(http_headers.STANDARD, block)
    assert our_rest == their_rest
    assert type(ours) is type(theirs)
    assert ours.items() == theirs.items()
    assert type(ours.get_payload()) is type(theirs.get_payload())
    assert ours.as_string() == theirs.as_string()
    assert [type(d) for d in ours.defects] == [type(d) for d in theirs.defects]
    assert ours.is_multipart() == theirs.is_multipart()
    assert ours.get_content_type() == theirs.get_content_type()


def test_the_plain_lines_are_read_as_headers() -> None:
    block = b"Set-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-Spaces:   padded   \r\n\r\n"
    message, rest = _read(http_headers.parse_headers, block)
    assert rest == b"body, not to be read"
    assert message.get_all("Set-Cookie") == ["a=1", "b=2"]
    assert message["x-spaces"] == "padded   "


def test_limits_are_the_standard_librarys() -> None:
    with pytest.raises(http.client.LineTooLong):
        _read(http_headers.parse_headers, b"X: " + b"a" * 70000 + b"\r\n\r\n")
    with pytest.raises(http.client.HTTPException, match="more than 100 headers"):
        _read(http_headers.parse_headers, b"X: 1\r\n" * 101 + b"\r\n")


@pytest.fixture
def server() -> Iterator[str]:
    class Handler(QuietHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Set-Cookie", "a=1")
            self.send_header("Set-Cookie", "b=2")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    with serving(Handler) as url:
        yield f"{url}/"


def test_urllib3_reads_a_response_through_it(server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http.client, "parse_headers", http_headers.parse_headers)  # install()
    response = urllib3.PoolManager().request("GET", server)
    assert response.status == 200
    assert response.data == b"{}"
    assert response.headers["content-type"] == "application/json"
    assert response.headers.getlist("set-cookie") == ["a=1", "b=2"]


@pytest.mark.kubesim_only
def test_kubesim_reads_request_headers_with_it(kubesim_server: object) -> None:
    assert http.client.parse_headers is http_headers.parse_headers
