"""`DiagnosticError`: an error that points at a node of the IR.

Example:
    >>> from unity import tir
    >>> x = tir.Var("x", "int32")
    >>> err = DiagnosticError("x is not bound", node=x)
    >>> err.message
    'x is not bound'
"""

from __future__ import annotations

from unity.ir.node import Node


class DiagnosticError(Exception):
    """An error about `node`; the pass runner adds the pass name and the module.

    `str(err)` is the message, then `in pass: NAME` and the printed IR (the module
    when known, else the node itself) with the node underlined.
    """

    def __init__(self, message: str, node: object | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.node = node
        self.pass_name: str | None = None
        self.module: object | None = None

    def with_context(self, pass_name: str | None = None, module: object | None = None) -> DiagnosticError:
        """Attach the pass and module the error happened in (first writer wins)."""
        self.pass_name = self.pass_name or pass_name
        self.module = self.module if self.module is not None else module
        return self

    def __str__(self) -> str:
        lines = [self.message]
        if self.pass_name:
            lines.append(f"  in pass: {self.pass_name}")
        rendered = self._render()
        if rendered:
            lines += ["", rendered]
        return "\n".join(lines)

    def _render(self) -> str:
        from unity.ir.printer import script

        target = self.module if self.module is not None else self.node
        if target is None or not isinstance(target, Node | object):
            return ""
        try:
            return script(target, underline=(self.node,) if self.node is not None else ())
        except Exception:  # noqa: BLE001 - the message must survive a printer failure
            return ""
