"""OpenCL C types as the front end sees them, and their LLVM types.

Takes: nothing (a leaf module).  Gives: ``Scalar``, ``Vector``, ``Pointer``,
``Array``, ``Struct``, ``Void`` and ``Function`` type objects, the table of
built-in type names (``SCALARS`` / ``type_by_name``), C99 integer promotion and
the usual arithmetic conversions (``promote``, ``common_type``), and
``llvm_type()`` on every type.  Sizes and layouts come from the host target's
data layout (``target_data()``), so a struct here has the layout the host C
compiler (and numpy's aligned dtype) gives it; a 3-component vector has the
size and alignment of the 4-component one, as OpenCL requires.
"""
from __future__ import annotations

from functools import lru_cache

from llvmlite import ir
import llvmlite.binding as llvm


@lru_cache(maxsize=None)
def target_machine():
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(opt=2, codemodel="jitdefault", jit=True)


@lru_cache(maxsize=None)
def target_data():
    return target_machine().target_data


class CType:
    is_scalar = is_vector = is_pointer = is_array = is_struct = is_void = is_function = False
    is_integer = is_float = is_bool = False
    const = False

    def arith(self) -> bool:
        return self.is_scalar or self.is_vector

    def size(self) -> int:
        return self.llvm_type().get_abi_size(target_data())

    def align(self) -> int:
        return self.llvm_type().get_abi_alignment(target_data())


class Void(CType):
    is_void = True

    def llvm_type(self):
        return ir.VoidType()

    def __str__(self):
        return "void"

    def __eq__(self, o):
        return isinstance(o, Void)

    def __hash__(self):
        return hash("void")


class Scalar(CType):
    """An arithmetic scalar: ``kind`` is 'int' | 'float' | 'bool'."""

    is_scalar = True

    def __init__(self, name, kind, bits, signed, rank):
        self.name, self.kind, self.bits, self.signed, self.rank = name, kind, bits, signed, rank
        self.is_integer = kind in ("int", "bool")
        self.is_float = kind == "float"
        self.is_bool = kind == "bool"

    def llvm_type(self):
        if self.kind == "half":
            return ir.HalfType()
        if self.kind == "float":
            return ir.FloatType() if self.bits == 32 else ir.DoubleType()
        if self.kind == "bool":
            return ir.IntType(8)          # stored as a byte; i1 only in conditions
        return ir.IntType(self.bits)

    def np_dtype(self):
        if self.kind in ("float", "half"):
            return "float%d" % self.bits
        if self.kind == "bool":
            return "bool"
        return ("int%d" if self.signed else "uint%d") % self.bits

    def __str__(self):
        return self.name

    def __eq__(self, o):
        return isinstance(o, Scalar) and o.name == self.name

    def __hash__(self):
        return hash(self.name)


def _s(name, kind, bits, signed, rank):
    return Scalar(name, kind, bits, signed, rank)


BOOL = _s("bool", "bool", 8, False, 0)
CHAR = _s("char", "int", 8, True, 1)
UCHAR = _s("uchar", "int", 8, False, 1)
SHORT = _s("short", "int", 16, True, 2)
USHORT = _s("ushort", "int", 16, False, 2)
INT = _s("int", "int", 32, True, 3)
UINT = _s("uint", "int", 32, False, 3)
LONG = _s("long", "int", 64, True, 4)
ULONG = _s("ulong", "int", 64, False, 4)
FLOAT = _s("float", "float", 32, True, 10)
DOUBLE = _s("double", "float", 64, True, 11)
EVENT = _s("event_t", "int", 32, True, 3)    # async copies complete at once; the event is a token
HALF = _s("half", "half", 16, True, 9)       # a storage-only type: vload_half / vstore_half

SCALARS = {t.name: t for t in (BOOL, CHAR, UCHAR, SHORT, USHORT, INT, UINT, LONG, ULONG, FLOAT, DOUBLE)}
VECTOR_ELEMS = ("char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double")
VECTOR_SIZES = (2, 3, 4, 8, 16)

SIGNED_OF = {UCHAR: CHAR, USHORT: SHORT, UINT: INT, ULONG: LONG}
UNSIGNED_OF = {CHAR: UCHAR, SHORT: USHORT, INT: UINT, LONG: ULONG}
# the signed integer type of a given width (vector comparison results)
INT_OF_BITS = {8: CHAR, 16: SHORT, 32: INT, 64: LONG}
UINT_OF_BITS = {8: UCHAR, 16: USHORT, 32: UINT, 64: ULONG}


class Vector(CType):
    is_vector = True

    def __init__(self, elem: Scalar, n: int):
        self.elem, self.n = elem, n

    @property
    def is_integer(self):
        return self.elem.is_integer

    @property
    def is_float(self):
        return self.elem.is_float

    def llvm_type(self):
        return ir.VectorType(self.elem.llvm_type(), self.n)

    def size(self):
        return self.elem.bits // 8 * (4 if self.n == 3 else self.n)

    def align(self):
        return self.size()

    def np_dtype(self):
        return self.elem.np_dtype()

    def __str__(self):
        return f"{self.elem.name}{self.n}"

    def __eq__(self, o):
        return isinstance(o, Vector) and o.elem == self.elem and o.n == self.n

    def __hash__(self):
        return hash((self.elem.name, self.n))


class Pointer(CType):
    is_pointer = True

    def __init__(self, pointee: CType, space: str = "private", const_pointee: bool = False):
        self.pointee, self.space, self.const_pointee = pointee, space, const_pointee

    def llvm_type(self):
        return ir.PointerType(storage_type(self.pointee))

    def __str__(self):
        c = "const " if self.const_pointee else ""
        return f"__{self.space} {c}{self.pointee}*"

    def __eq__(self, o):
        return isinstance(o, Pointer) and o.pointee == self.pointee and o.space == self.space

    def __hash__(self):
        return hash(("ptr", self.pointee, self.space))


class Array(CType):
    is_array = True

    def __init__(self, elem: CType, n: int, space: str = "private"):
        self.elem, self.n, self.space = elem, n, space

    def llvm_type(self):
        return ir.ArrayType(storage_type(self.elem), self.n)

    def size(self):
        return self.elem.size() * self.n

    def align(self):
        return self.elem.align()

    def __str__(self):
        return f"{self.elem}[{self.n}]"

    def __eq__(self, o):
        return isinstance(o, Array) and o.elem == self.elem and o.n == self.n

    def __hash__(self):
        return hash(("arr", self.elem, self.n))


class Struct(CType):
    is_struct = True

    def __init__(self, tag: str, union: bool = False):
        self.tag, self.union = tag, union
        self.fields: list[tuple[str, CType]] | None = None      # None: incomplete
        self._lltype = None

    def complete(self):
        return self.fields is not None

    def field(self, name):
        for i, (n, t) in enumerate(self.fields or ()):
            if n == name:
                return i, t
        return None, None

    def llvm_type(self):
        if self._lltype is None:
            if self.union:
                big = max((t for _, t in self.fields), key=lambda t: (t.size(), t.align()))
                size = max(t.size() for _, t in self.fields)
                algn = max(t.align() for _, t in self.fields)
                size = (size + algn - 1) // algn * algn
                members = [storage_type(big)]
                pad = size - big.size()
                if pad:
                    members.append(ir.ArrayType(ir.IntType(8), pad))
                self._lltype = ir.LiteralStructType(members)
            else:
                self._lltype = ir.LiteralStructType([storage_type(t) for _, t in self.fields])
        return self._lltype

    def offsets(self):
        lt = self.llvm_type()
        if self.union:
            return [0] * len(self.fields)
        return [lt.get_element_offset(target_data(), i) for i in range(len(self.fields))]

    def np_descr(self):
        """A numpy dtype spec (dict form) with this struct's offsets and size."""
        names, formats, offsets = [], [], []
        for (n, t), off in zip(self.fields, self.offsets()):
            names.append(n)
            formats.append(np_format(t))
            offsets.append(off)
        return {"names": names, "formats": formats, "offsets": offsets, "itemsize": self.size()}

    typedef_name = None

    def __str__(self):
        if self.typedef_name:
            return self.typedef_name
        return ("union " if self.union else "struct ") + self.tag

    def __eq__(self, o):
        return self is o

    def __hash__(self):
        return id(self)


class Function(CType):
    is_function = True

    def __init__(self, ret, params, names=()):
        self.ret, self.params, self.names = ret, params, names

    def __str__(self):
        return f"{self.ret}({', '.join(map(str, self.params))})"


VOID = Void()


def np_format(t: CType):
    if t.is_scalar:
        return t.np_dtype()
    if t.is_vector:
        return (t.np_dtype(), (4 if t.n == 3 else t.n,))
    if t.is_array:
        f = np_format(t.elem)
        if isinstance(f, tuple):
            return (f[0], (t.n,) + f[1])
        return (f, (t.n,))
    if t.is_struct:
        return t.np_descr()
    if t.is_pointer:
        return "uint64"
    return "uint8"


def storage_type(t: CType):
    """The LLVM type of a value of ``t`` in memory (3-vectors take 4 slots)."""
    if t.is_vector and t.n == 3:
        return ir.VectorType(t.elem.llvm_type(), 4)
    if t.is_void:
        return ir.IntType(8)
    return t.llvm_type()


def type_by_name(name: str):
    """A built-in type name (``float4``, ``uint``, ``size_t``...) or None."""
    if name == "half":
        return HALF
    if name == "event_t":
        return EVENT
    if name in SCALARS:
        return SCALARS[name]
    alias = _ALIASES.get(name)
    if alias:
        return SCALARS[alias]
    for e in VECTOR_ELEMS:
        if name.startswith(e):
            rest = name[len(e):]
            if rest.isdigit() and int(rest) in VECTOR_SIZES:
                return Vector(SCALARS[e], int(rest))
    return None


_ALIASES = {
    "size_t": "ulong", "ptrdiff_t": "long", "intptr_t": "long", "uintptr_t": "ulong",
    "intmax_t": "long", "uintmax_t": "ulong",
    "int8_t": "char", "uint8_t": "uchar", "int16_t": "short", "uint16_t": "ushort",
    "int32_t": "int", "uint32_t": "uint", "int64_t": "long", "uint64_t": "ulong",
}


def c_specifiers_type(names: list[str]):
    """A list of C type specifier words (``unsigned long int``) -> Scalar/Void, or None."""
    words = list(names)
    if words == ["void"]:
        return VOID
    unsigned = "unsigned" in words
    signed = "signed" in words
    words = [w for w in words if w not in ("unsigned", "signed")]
    if words.count("long") >= 1:
        words = [w for w in words if w != "int"]
        if words in (["long"], ["long", "long"]):
            return ULONG if unsigned else LONG
        if words == ["long", "double"]:
            return None
        return None
    if words in ([], ["int"]):
        return UINT if unsigned else INT
    if words == ["short"] or words == ["short", "int"]:
        return USHORT if unsigned else SHORT
    if words == ["char"]:
        return UCHAR if unsigned else CHAR
    if unsigned or signed:
        return None
    if len(words) == 1:
        return type_by_name(words[0])
    return None


def promote(t: Scalar) -> Scalar:
    """C99 integer promotion."""
    if t.is_integer and t.rank < INT.rank:
        return INT
    return t


def common_scalar(a: Scalar, b: Scalar) -> Scalar:
    """The usual arithmetic conversions of two scalars."""
    if a.is_float or b.is_float:
        if a == DOUBLE or b == DOUBLE:
            return DOUBLE
        return FLOAT
    a, b = promote(a), promote(b)
    if a == b:
        return a
    if a.signed == b.signed:
        return a if a.rank > b.rank else b
    u, s = (a, b) if not a.signed else (b, a)
    if u.rank >= s.rank:
        return u
    if s.bits > u.bits:
        return s
    return UNSIGNED_OF[s]


def elem_of(t: CType) -> Scalar:
    return t.elem if t.is_vector else t
