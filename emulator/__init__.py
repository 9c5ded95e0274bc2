"""A cycle-approximate emulator of an MN-Core 2-style accelerator.

    from emulator import Emulator, assemble
    emu = Emulator("tiny")                    # or "mncore2", or a TOML file
    prog = assemble(open("prog.vsm").read(), source="prog.vsm")
    emu.write_dram(0, 0, np.arange(64, dtype=np.float64))
    profile = emu.run(prog)
    print(emu.dump, profile.summary())

The emulator knows nothing of C; the translator targets its Program form and
its assembly, the runtime drives it through this API.
"""
from .asm import assemble
from .errors import AsmError, EmuFault, EmulatorError, MachineError
from .executor import Emulator
from .machine import Machine, load_machine, PRESETS
from .observers import Observer
from .profile import Profile
from .program import Program

__all__ = ["assemble", "Emulator", "Observer", "Profile", "Program", "Machine", "load_machine", "PRESETS",
           "AsmError", "EmuFault", "EmulatorError", "MachineError"]
