"""Go's encoding/json syntax errors, word for word, for bodies orjson refuses.

kube-apiserver quotes the Go decoder's message in its 400s ("invalid character 'b' looking
for beginning of object key string"); clients and people match on it, so the rare bad body
is walked again here by a checker that follows encoding/json's scanner states.
"""

from __future__ import annotations

import json
from decimal import Decimal

_WS = b" \t\r\n"
_DIGITS = b"0123456789"
_HEX = b"0123456789abcdefABCDEF"
_ESCAPES = b'"\\/bfnrt'
_NAMED = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r"}

END = "unexpected end of JSON input"


class _SyntaxError(Exception):
    pass


def syntax_error(data: bytes) -> str | None:
    """The message json.Unmarshal gives for data, or None if data is valid JSON."""
    scanner = _Scanner(data)
    try:
        scanner.value()
        scanner.skip_ws()
        if scanner.i < len(data):
            scanner.bad("after top-level value")
    except _SyntaxError as exc:
        return str(exc)
    return None


def unmarshal_type_error(value: object, into: str) -> str:
    """json.Unmarshal's message for a JSON value of the wrong kind (an array for a struct)."""
    if isinstance(value, bool):
        what = "bool"
    elif isinstance(value, (int, float)):
        what = "number"
    elif isinstance(value, str):
        what = "string"
    elif isinstance(value, list):
        what = "array"
    else:
        what = "object"
    return f"json: cannot unmarshal {what} into Go value of type {into}"


def quote_char(c: int) -> str:
    """encoding/json's quoteChar: the offending byte as Go prints it."""
    if c == ord("'"):
        return "'\\''"
    if c == ord('"'):
        return "'\"'"
    if c in _NAMED:
        return f"'{_NAMED[c]}'"
    if c < 0x20 or c == 0x7F:
        return f"'\\x{c:02x}'"
    if 0x80 <= c < 0xA0 or c == 0xAD:  # not printable as a rune
        return f"'\\u{c:04x}'"
    return f"'{chr(c)}'"


def compact(value: object) -> str:
    """A value as compact JSON, non-ASCII kept: as structured-merge-diff prints a value."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def html_escaped(text: str) -> str:
    """JSON as json.Marshal writes it: `<`, `>` and `&` escaped (\\u003c, \\u003e, \\u0026)."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def go_quote(text: str) -> str:
    """strconv.Quote (fmt's %q): printable runes as they are, the others escaped."""
    out = ['"']
    for ch in text:
        c = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch.isprintable():  # Python's printable is Go's unicode.IsPrint
            out.append(ch)
        elif c in _NAMED:
            out.append(_NAMED[c])
        elif c < 0x20 or c == 0x7F:
            out.append(f"\\x{c:02x}")
        elif c < 0x10000:
            out.append(f"\\u{c:04x}")
        else:
            out.append(f"\\U{c:08x}")
    out.append('"')
    return "".join(out)


class _Scanner:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.i = 0

    def skip_ws(self) -> None:
        while self.i < len(self.data) and self.data[self.i] in _WS:
            self.i += 1

    def peek(self) -> int:
        if self.i >= len(self.data):
            raise _SyntaxError(END)
        return self.data[self.i]

    def at(self, chars: bytes) -> bool:
        return self.i < len(self.data) and self.data[self.i] in chars

    def bad(self, context: str) -> None:
        raise _SyntaxError(f"invalid character {quote_char(self.data[self.i])} {context}")

    def value(self) -> None:
        self.skip_ws()
        c = self.peek()
        if c == ord("{"):
            self.i += 1
            self.object()
        elif c == ord("["):
            self.i += 1
            self.array()
        elif c == ord('"'):
            self.i += 1
            self.string()
        elif c == ord("-") or c in _DIGITS:
            self.number()
        elif c in b"tfn":
            self.literal({ord("t"): b"true", ord("f"): b"false", ord("n"): b"null"}[c])
        else:
            self.bad("looking for beginning of value")

    def object(self) -> None:
        self.skip_ws()
        if self.peek() == ord("}"):
            self.i += 1
            return
        while True:
            if self.peek() != ord('"'):
                self.bad("looking for beginning of object key string")
            self.i += 1
            self.string()
            self.skip_ws()
            if self.peek() != ord(":"):
                self.bad("after object key")
            self.i += 1
            self.value()
            self.skip_ws()
            c = self.peek()
            if c == ord("}"):
                self.i += 1
                return
            if c != ord(","):
                self.bad("after object key:value pair")
            self.i += 1
            self.skip_ws()

    def array(self) -> None:
        self.skip_ws()
        if self.peek() == ord("]"):
            self.i += 1
            return
        while True:
            self.value()
            self.skip_ws()
            c = self.peek()
            if c == ord("]"):
                self.i += 1
                return
            if c != ord(","):
                self.bad("after array element")
            self.i += 1

    def string(self) -> None:
        while True:
            c = self.peek()
            if c == ord('"'):
                self.i += 1
                return
            if c == ord("\\"):
                self.i += 1
                c = self.peek()
                if c == ord("u"):
                    self.i += 1
                    for _ in range(4):
                        if self.peek() not in _HEX:
                            self.bad("in \\u hexadecimal character escape")
                        self.i += 1
                    continue
                if c not in _ESCAPES:
                    self.bad("in string escape code")
            elif c < 0x20:
                self.bad("in string literal")
            self.i += 1

    def number(self) -> None:
        if self.peek() == ord("-"):
            self.i += 1
            if self.peek() not in _DIGITS:
                self.bad("in numeric literal")
        if self.peek() == ord("0"):
            self.i += 1
        else:
            while self.at(_DIGITS):
                self.i += 1
        if self.at(b"."):
            self.i += 1
            if self.peek() not in _DIGITS:
                self.bad("after decimal point in numeric literal")
            while self.at(_DIGITS):
                self.i += 1
        if self.at(b"eE"):
            self.i += 1
            if self.at(b"+-"):
                self.i += 1
            if self.peek() not in _DIGITS:
                self.bad("in exponent of numeric literal")
            while self.at(_DIGITS):
                self.i += 1

    def literal(self, word: bytes) -> None:
        self.i += 1
        for expected in word[1:]:
            if self.peek() != expected:
                self.bad(f"in literal {word.decode()} (expecting {quote_char(expected)})")
            self.i += 1


def go_type(value: object) -> str:
    """fmt's %T of a value json.Unmarshal decoded into interface{} (integers kept as int64):
    "map[string]interface {}", "[]interface {}", "int64", ...; "<nil>" for null."""
    if value is None:
        return "<nil>"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    return "string"


def printed(value: object) -> str:
    """fmt's %v of a value json.Unmarshal decoded (integers kept as int64): `map[a:1 b:[x y]]`,
    its keys sorted, strings bare, null as <nil>."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{printed(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(printed(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _printed_float(value)
    return str(value)


def _printed_float(value: float) -> str:
    """strconv.FormatFloat(v, 'g', -1, 64): the shortest digits, in exponent form from 1e+06
    up and below 1e-04."""
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)  # finite: JSON has no NaN or Infinity
    power = len(digits) + exponent - 1
    if -4 <= power < 6:
        return format(Decimal(repr(value)).normalize(), "f")
    mantissa = "".join(map(str, digits))
    mantissa = mantissa[0] + ("." + mantissa[1:] if len(mantissa) > 1 else "")
    return f"{'-' if sign else ''}{mantissa}e{'-' if power < 0 else '+'}{abs(power):02d}"
