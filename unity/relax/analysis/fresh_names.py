"""`FreshNames`: names for new variables that no variable of a function uses yet.

Example:
    >>> names = FreshNames("storage")
    >>> names.taken.add("storage")
    >>> names.fresh(), names.fresh()
    ('storage1', 'storage2')
"""

from __future__ import annotations

from unity.relax.expr import Function, Var
from unity.relax.expr_functor import ExprVisitor


class FreshNames(ExprVisitor):
    """Hands out `prefix`, `prefix1`, ... skipping names the visited function defines.

    Example:
        >>> FreshNames.of(func, "_").fresh()  # doctest: +SKIP
        '_'
    """

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self.prefix = prefix
        self.taken: set[str] = set()
        self.count = 0

    @classmethod
    def of(cls, func: Function, prefix: str) -> FreshNames:
        """The fresh-name source for `func`: every var it defines is already taken.

        Example:
            >>> FreshNames.of(func, "storage").fresh()  # doctest: +SKIP
            'storage'
        """
        names = cls(prefix)
        names.visit_expr(func)
        return names

    def visit_var_def(self, var: Var) -> None:
        """Record a defined var's name as taken."""
        self.taken.add(var.name_hint)

    def fresh(self) -> str:
        """The next name not taken (and mark it taken).

        Example:
            >>> FreshNames("_").fresh()
            '_'
        """
        while True:
            name = self.prefix if self.count == 0 else f"{self.prefix}{self.count}"
            self.count += 1
            if name not in self.taken:
                self.taken.add(name)
                return name
