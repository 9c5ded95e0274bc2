"""Block scopes: the names a C block sees, innermost binding first.

A ``Scopes`` is a list of name -> entity maps, the file scope first and the
innermost block last: a block pushes a map on entry and pops it on exit, a
declaration goes into the last map, a use looks from the last map back.  The
lowering keeps three (ordinary identifiers, struct/union/enum tags, typedef
names: C99 6.2.3's name spaces) and the task compiler one; what an entity is
(a ``Sym``, a task ``Var``) is each compiler's business.
"""
from __future__ import annotations


class Scopes(list):
    """Nested scopes, outermost first (a list of dicts, so a caller may index or replace one)."""

    def __init__(self, maps=None):
        super().__init__([{}] if maps is None else maps)

    def lookup(self, name, default=None):
        """The innermost binding of name, or default when no scope has it."""
        for scope in reversed(self):
            if name in scope:
                return scope[name]
        return default

    def declared_here(self, name) -> bool:
        """Whether the innermost scope already binds name (a second declaration is an error)."""
        return name in self[-1]
