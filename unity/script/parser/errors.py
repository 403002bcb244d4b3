"""`ParseError` and `Source`: where a script came from, and errors that point into it.

Example:
    >>> src = Source("x = y\\n", "demo.py")
    >>> import ast
    >>> node = ast.parse(src.text).body[0].value
    >>> print(src.error(node, "unknown name 'y'"))
    demo.py:1:5: error: unknown name 'y'
        x = y
            ^
"""

from __future__ import annotations

import ast
import inspect
import textwrap

from unity.ir.diagnostics import DiagnosticError


class ParseError(DiagnosticError):
    """A script error at `filename:line:column` (line and column are 1-based).

    `str(err)` is `file:line:col: error: message`, then the source line and a caret
    under the offending text.

    Example:
        >>> print(ParseError("bad dtype", "f.py", 3, 5, "x = T.int33(1)", width=7))
        f.py:3:5: error: bad dtype
            x = T.int33(1)
                ^^^^^^^
    """

    def __init__(
        self, message: str, filename: str, line: int, column: int, source_line: str, width: int = 1
    ) -> None:
        super().__init__(message)
        self.filename = filename
        self.line = line
        self.column = column
        self.source_line = source_line
        self.width = max(width, 1)

    def __str__(self) -> str:
        caret = " " * (self.column - 1) + "^" * self.width
        where = f"{self.filename}:{self.line}:{self.column}"
        return f"{where}: error: {self.message}\n    {self.source_line}\n    {caret}"


class Source:
    """Script text (dedented) plus where it sits in its file, for error positions.

    Example:
        >>> Source("def f():\\n    pass\\n").lines[1]
        '    pass'
    """

    def __init__(self, text: str, filename: str = "<string>", line_offset: int = 0) -> None:
        self.full_lines = text.splitlines()
        self.indent = _common_indent(self.full_lines)
        self.text = textwrap.dedent(text)
        self.lines = self.text.splitlines()
        self.filename = filename
        self.line_offset = line_offset

    @staticmethod
    def of(obj: object) -> Source:
        """The source of a Python function or class (via `inspect`).

        Example:
            >>> Source.of(Source.of).filename.endswith("errors.py")
            True
        """
        try:
            lines, start = inspect.getsourcelines(obj)  # type: ignore[arg-type]  # function or class
            filename = inspect.getsourcefile(obj) or "<unknown>"  # type: ignore[arg-type]
        except (OSError, TypeError) as err:
            raise OSError(
                f"cannot read the source of {getattr(obj, '__name__', obj)}: {err}"
            ) from None
        return Source("".join(lines), filename, max(start - 1, 0))

    def error(self, node: ast.AST | None, message: str) -> ParseError:
        """A `ParseError` at `node` (an `ast` node of `self.text`).

        Example:
            >>> import ast
            >>> src = Source("x = foo(1)\\n", "m.py")
            >>> print(src.error(ast.parse(src.text).body[0].value, "unknown name 'foo'"))
            m.py:1:5: error: unknown name 'foo'
                x = foo(1)
                    ^^^^^^
        """
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        end_line = getattr(node, "end_lineno", line)
        end_col = getattr(node, "end_col_offset", col + 1)
        full = self.full_lines[line - 1] if 0 < line <= len(self.full_lines) else ""
        width = (end_col - col) if end_line == line and end_col else 1
        return ParseError(
            message,
            self.filename,
            line + self.line_offset,
            col + self.indent + 1,
            full.strip("\n"),
            width,
        )


def _common_indent(lines: list[str]) -> int:
    widths = [len(s) - len(s.lstrip()) for s in lines if s.strip()]
    return min(widths, default=0)
