"""The emulator's error family.

Every problem a user can cause is one of these, with the place named:
``AsmError`` for text that is not valid assembly (file, line, the text),
``EmuFault`` for a program that does something the machine forbids (line,
instruction, first offending PE), ``MachineError`` for a bad machine file.
"""
from __future__ import annotations


class EmulatorError(Exception):
    """Base of everything the emulator raises on bad input."""


class MachineError(EmulatorError):
    pass


class AsmError(EmulatorError):
    """Invalid assembly: names the source, the line and the offending text."""

    def __init__(self, message: str, line: int = 0, text: str = "", source: str = "<asm>"):
        self.message, self.line, self.text, self.source = message, line, text, source
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}: " if self.line else f"{self.source}: "
        shown = f"\n    {self.text.strip()}" if self.text.strip() else ""
        return f"{where}error: {self.message}{shown}"


class EmuFault(EmulatorError):
    """A run-time fault: names the line, the instruction and the first offending PE."""

    def __init__(self, message: str, line: int = 0, text: str = "", pe: str | None = None,
                 source: str = "<asm>"):
        self.message, self.line, self.text, self.pe, self.source = message, line, text, pe, source
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}: " if self.line else f"{self.source}: "
        at = f" (first at PE {self.pe})" if self.pe else ""
        shown = f"\n    {self.text.strip()}" if self.text.strip() else ""
        return f"{where}fault: {self.message}{at}{shown}"
