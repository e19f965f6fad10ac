"""HTTP headers read without the e-mail package.

http.server (like http.client) hands every request's header block to `email.parser`, a
feed parser built for MIME messages: 60-70 µs a request, 3-4 % of kubesim's CPU in a
cold start. Clients send plain "Name: value" lines; `parse_headers` reads those into the
same `HTTPMessage` the standard library builds, and gives any other block (a folded
line, a line without a name, a stray CR, a multipart type) to the standard library's
parser, as before. `install()` puts it in http.client's place, where http.server's
`parse_request` (and urllib3, in the same process) call it; the tests compare the two on
every kind of block.
"""

from __future__ import annotations

import email.parser
import http.client
import re
from typing import IO, Any

STANDARD = http.client.parse_headers  # the standard library's, kept for comparison
MAX_LINE = 65536  # http.client's limits (its _MAXLINE, _MAXHEADERS)
MAX_HEADERS = 100
_NESTED = ("multipart/", "message/")
# A line the e-mail parser reads as one header and nothing more: a name of printable
# characters but the colon (its headerRE), not "From " (an mbox separator to it), no CR
# or LF inside (it splits lines at either).
_PLAIN = re.compile(rb"(?!From )[\x21-\x39\x3b-\x7e]+:[^\r\n]*\r?\n")


def parse_headers(
    fp: IO[bytes], _class: type[http.client.HTTPMessage] = http.client.HTTPMessage, **kw: Any
) -> http.client.HTTPMessage:
    """http.client.parse_headers, same arguments and result."""
    limit = kw.get("_max_headers") or MAX_HEADERS
    lines = []
    while True:
        line = fp.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise http.client.LineTooLong("header line")
        lines.append(line)
        if len(lines) > limit:
            raise http.client.HTTPException(f"got more than {limit} headers")
        if line in (b"\r\n", b"\n", b""):
            break
    if all(_PLAIN.fullmatch(line) for line in lines[:-1]):
        message = _class()
        for line in lines[:-1]:
            name, _, value = line.decode("iso-8859-1").partition(":")
            message[name] = value.lstrip(" \t").rstrip("\r\n")
        # A multipart or message type has the e-mail parser look into the (empty) body.
        if not message.get("Content-Type", "").lstrip().lower().startswith(_NESTED):
            message.set_payload("")  # what the e-mail parser leaves after the blank line
            return message
    text = b"".join(lines).decode("iso-8859-1")
    return email.parser.Parser(_class=_class).parsestr(text)


def install() -> None:
    """Makes http.server and http.client read headers with `parse_headers`."""
    http.client.parse_headers = parse_headers  # type: ignore[assignment]
