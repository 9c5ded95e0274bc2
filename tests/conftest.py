"""The runtime tests were written against the CPU device: they ask for it unless a test says otherwise.
(The runtime's own default, with no MNCL_DEVICE, is the emulator device; tests of that set it explicitly.)"""
import os

os.environ.setdefault("MNCL_DEVICE", "cpu")
