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

    `str(err)` is the message, then `in pass: NAME`, `at: PATH` (where the node sits in
    the module, e.g. `@main.body.block.body`) and the printed IR (the module when known,
    else the node itself) with the node underlined. Each part is left out when unknown
    (no pass, node not found in the module, or no printer for it).

    Example:
        >>> err = DiagnosticError("loop extent must be positive")
        >>> err.with_context(pass_name="Simplify").pass_name, err.message
        ('Simplify', 'loop extent must be positive')
    """

    def __init__(self, message: str, node: object | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.node = node
        self.pass_name: str | None = None
        self.module: object | None = None

    def with_context(
        self, pass_name: str | None = None, module: object | None = None
    ) -> DiagnosticError:
        """Attach the pass and module the error happened in (first writer wins).

        Example:
            >>> err = DiagnosticError("bad").with_context(pass_name="A")
            >>> err.with_context(pass_name="B").pass_name  # the first writer wins
            'A'
        """
        self.pass_name = self.pass_name or pass_name
        self.module = self.module if self.module is not None else module
        return self

    def __str__(self) -> str:
        lines = [self.message]
        if self.pass_name:
            lines.append(f"  in pass: {self.pass_name}")
        path = self.path
        if path:
            lines.append(f"  at: {path}")
        rendered = self._render()
        if rendered:
            lines += ["", rendered]
        return "\n".join(lines)

    @property
    def path(self) -> str | None:
        """Where `node` is inside `module` (`@main.body...`), or None when unknown.

        Example:
            >>> DiagnosticError("bad", node=None).path is None
            True
        """
        if self.node is None or self.module is None:
            return None
        from unity.ir.path import find_path

        try:
            return find_path(self.module, self.node)
        except Exception:  # noqa: BLE001 - the message must survive an odd module
            return None

    def _render(self) -> str:
        from unity.ir.printer import script

        target = self.module if self.module is not None else self.node
        if target is None or not isinstance(target, Node | object):
            return ""
        try:
            return script(target, underline=(self.node,) if self.node is not None else (),
                          elide_constants=True)  # a weight's bytes would bury the message
        except Exception:  # noqa: BLE001 - the message must survive a printer failure
            return ""
