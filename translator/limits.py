"""The translator's documented limits (docs/language.md, "Limits").

Compile time and memory grow with the source, and a few lines can ask for
without-bound work: a macro that expands to two copies of another, twenty
deep, is a million tokens.  The front end stops at these limits with an error
naming the place, instead of running for minutes or until the host's memory
is gone.
"""

MAX_SOURCE_CHARS = 1 << 20          # characters of one kernel source (1 MiB of ASCII)
MAX_SOURCE_BYTES = 4 * MAX_SOURCE_CHARS     # a source file the CLIs read (any such text fits)
MAX_EXPANDED_TOKENS = 1 << 18       # tokens produced by macro replacement in one translation unit
