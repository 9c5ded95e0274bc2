"""Task-kernel compile errors (translator/backend/task.py) are located as the front end locates an
ordinary kernel's: ``file:line:col: error: ...``, the line quoted, a caret under the column, the
column mapped back through macro expansions (translator/srcloc.py).  Compiled for the 'tiny'
machine without running anything; the expected places are read off the sources here."""
import dataclasses

import pytest

from emulator.machine import load_machine
from translator import CompileError, compile_opencl
from translator.backend import compile_kernel


def task_error(src, kernel="bad"):
    """The one diagnostic compiling task kernel `kernel` of src for 'tiny' gives, and the module."""
    module = compile_opencl(src, filename="kernel.cl", spmd=True)
    with pytest.raises(CompileError) as e:
        compile_kernel(module, kernel, load_machine("tiny"), "task")
    [d] = e.value.diagnostics
    return d, e.value.log


def at(src, line, marker, nth=0):
    """(line, column) of the nth occurrence of marker on line `line` (1-based) of src."""
    text = src.splitlines()[line - 1]
    col = -1
    for _ in range(nth + 1):
        col = text.index(marker, col + 1)
    return line, col + 1


def expect(src, line, marker, message, nth=0):
    d, log = task_error(src)
    ln, col = at(src, line, marker, nth)
    assert (d.filename, d.line, d.column) == ("kernel.cl", ln, col), log
    assert message in d.message, log
    head, quoted, caret = log.splitlines()
    assert head.startswith(f"kernel.cl:{ln}:{col}: error: task kernel 'bad': "), log
    assert quoted == src.splitlines()[ln - 1], log
    assert caret == " " * (col - 1) + "^", log


def test_unknown_name():
    src = "__task void bad(DRAM float *y, int n)\n{\n    int q = n + zz;\n}\n"
    expect(src, 3, "zz", "use of undeclared identifier 'zz'")


def test_unknown_name_after_a_macro_expansion():
    """The column is the user's, not the preprocessed text's (LONGNAME expands to 3)."""
    src = "#define LONGNAME 3\n__task void bad(DRAM float *y)\n{\n    int q = LONGNAME + zz;\n}\n"
    expect(src, 4, "zz", "use of undeclared identifier 'zz'")


def test_unsupported_type():
    src = "__task void bad(DRAM float *y)\n{\n    int k = 0;\n    float f = 1;\n}\n"
    expect(src, 4, "f", "type 'float' is not supported in task kernels", nth=1)


def test_vector_type_mismatch():
    src = ("__task void bad(DRAM float *y)\n{\n    L1BM float b[256];\n    mnint8 v = mn_broadcast(b);\n}\n")
    expect(src, 4, "v =", "assigning mnfloat8 to mnint8")


def test_size_that_is_not_a_constant():
    src = ("__task void bad(DRAM const float *x, int n)\n{\n    L2BM float a[256];\n"
           "    mn_distribute(a, x, n);\n}\n")
    expect(src, 4, "n)", "the size of 'mn_distribute' (it is part of the instruction) must be a compile-time "
                          "constant")


def test_array_size_that_is_not_a_constant():
    src = "__task void bad(DRAM float *y, int n)\n{\n    L2BM float a[n * 64];\n}\n"
    expect(src, 3, "n *", "an array size must be a compile-time constant")


def test_transfer_in_a_direction_it_does_not_move():
    src = ("__task void bad(DRAM const float *x)\n{\n    L1BM float b[256];\n"
           "    mn_broadcast(b, x, 128);\n}\n")
    expect(src, 4, "mn_broadcast", "'mn_broadcast' cannot move DRAM -> L1BM")


def test_waiting_twice_on_an_event():
    src = ("__task void bad(DRAM const float *x)\n{\n    L2BM float a[256];\n"
           "    mn_event e = mn_distribute_async(a, x, 512);\n    mn_wait(e);\n    mn_wait(e);\n}\n")
    expect(src, 6, "mn_wait", "waiting on event 'e', which has no transfer in flight")


def test_event_taking_a_synchronous_transfer():
    src = ("__task void bad(DRAM const float *x)\n{\n    L2BM float a[256];\n"
           "    mn_event e = mn_distribute(a, x, 512);\n}\n")
    expect(src, 4, "mn_distribute", "an mn_event takes the result of an mn_*_async transfer")


def test_a_module_without_its_sources_quotes_the_preprocessed_line():
    """A module read back from a binary has the preprocessed text only: the error still has its
    column and quotes that text (here the macro expanded)."""
    src = "#define K 3\n__task void bad(DRAM float *y)\n{\n    int q = K + zz;\n}\n"
    module = dataclasses.replace(compile_opencl(src, filename="kernel.cl", spmd=True), task_sources={})
    with pytest.raises(CompileError) as e:
        compile_kernel(module, "bad", load_machine("tiny"), "task")
    assert e.value.log.splitlines() == ["kernel.cl:4:17: error: task kernel 'bad': use of undeclared identifier 'zz'",
                                        "    int q = 3 + zz;", " " * 16 + "^"]


def test_parameter_type_error_keeps_its_place():
    src = "#define SCALE_TYPE float\n__task void bad(DRAM float *y, SCALE_TYPE s)\n{\n}\n"
    with pytest.raises(CompileError) as e:
        compile_opencl(src, filename="kernel.cl", spmd=True)
    [d] = e.value.diagnostics
    assert (d.line, d.column) == at(src, 2, "s)"), e.value.log
    assert e.value.log.splitlines()[1:] == [src.splitlines()[1], " " * (d.column - 1) + "^"]


def test_redeclaration_in_one_scope():
    src = "__task void bad(DRAM float *y)\n{\n    int k = 1;\n    {\n        int k = 2;\n    }\n    int k = 3;\n}\n"
    expect(src, 7, "k =", "'k' is declared twice")


def test_negative_constant_shift():
    src = "__task void bad(DRAM float *y)\n{\n    L2BM float a[64 << -1];\n}\n"
    expect(src, 3, "64", "shift by a negative amount (-1)")


# -- the front end's literals and type names ---------------------------------------------------
def test_character_constants_are_uniform_integers():
    """'c' - 'a' folds to 2 (constfold.parse_char): the loop unrolls into two gathers."""
    src = ("__task void chars(DRAM const float *x, DRAM float *y)\n{\n    L2BM float a[256];\n"
           "    mn_distribute(a, x, 512);\n    for (int i = 0; i < 'c' - 'a'; i++)\n        mn_gather(y, a, 512);\n}\n")
    module = compile_opencl(src, filename="kernel.cl", spmd=True)
    asm = compile_kernel(module, "chars", load_machine("tiny"), "task").asm
    assert len([ln for ln in asm.splitlines() if ln.split()[:1] == ["mvd/n256i250"]]) == 3, asm


def test_parameter_types_in_any_c_spelling():
    src = "__task void k(DRAM float *y, unsigned long int n, signed m, unsigned short int s)\n{\n}\n"
    with pytest.raises(CompileError) as e:
        compile_opencl(src, filename="kernel.cl", spmd=True)
    assert "parameter 's' has type 'ushort'" in e.value.log, e.value.log
    module = compile_opencl(src.replace(", unsigned short int s", ""), filename="kernel.cl", spmd=True)
    assert [(p.type_name, p.dtype, p.size) for p in module.kernels["k"].params[1:]] == \
        [("ulong", "uint64", 8), ("int", "int32", 4)]


def test_vector_constants_read_as_c_literals():
    """Octal and hex literals splat into vectors as C reads them (constfold), not as Python does."""
    src = ("__task void lits(DRAM const int *x, DRAM int *y)\n{\n    L2BM int a[512];\n    L1BM int b[256];\n"
           "    mn_distribute(a, x, 512);\n    mn_distribute(b, a, 256);\n"
           "    mnint8 k = 010;\n    mnlong4 m = 0x1F;\n    mnfloat8 f = 0x10;\n    mnint8 v = mn_distribute(b);\n"
           "    mn_gather(b, v + k);\n    mn_gather(a, b, 256);\n    mn_gather(y, a, 512);\n}\n")
    module = compile_opencl(src, filename="kernel.cl", spmd=True)
    asm = compile_kernel(module, "lits", load_machine("tiny"), "task").asm
    ops = [op.split()[:2] for ln in asm.splitlines() for op in ln.split("#")[0].split(";")]    # VLIW: a; b
    assert ["imm", "0x00000008"] in ops and ["limm", "0x000000000000001f"] in ops and \
        ["imm", "0x41800000"] in ops, ops
    with pytest.raises(CompileError) as e:
        compile_kernel(compile_opencl(src.replace("010", "1.5"), filename="kernel.cl", spmd=True), "lits",
                       load_machine("tiny"), "task")
    assert "kernel.cl:7:16: error: task kernel 'lits': '1.5' is not an integer (the lanes of mnint8)" in e.value.log
