"""The CPU device's fault guard: a kernel's hardware fault fails its launch instead of killing the process.

The CPU device runs kernels as native code in the host process, so a fault in
one (a pointer far outside its buffer, private arrays deeper than the thread's
stack, an integer division by zero) would be a fault of the process.  The
guard turns each into an error of the launch, in the manner of the JVM and
WebAssembly runtimes:

- ``mncl_dispatch`` (cpu.py) calls ``sigsetjmp`` before it runs any work-group
  and publishes the jump buffer in a thread-specific slot (``pthread_setspecific``)
  for as long as it runs kernel code;
- a handler for SIGSEGV, SIGBUS, SIGFPE and SIGILL (``mncl_on_fault`` below,
  installed once per process, on an alternate signal stack so that it runs on
  a thread whose stack overflowed) finds that slot set, stores the signal and
  the faulting address, and ``siglongjmp``s back: the dispatcher returns, the
  work-groups the thread had left are abandoned, and the launch raises naming
  the kernel;
- a signal outside kernel code goes to the handler that was installed before
  (Python's ``faulthandler``, say) or to the default action, as if the guard
  were not there (a handler installed after the guard, such as a later
  ``faulthandler.enable()``, runs first: it prints its report, then hands the
  signal back to the guard, which still recovers);
- every JIT-compiled function probes its stack page by page when it grows it
  (LLVM's ``"probe-stack"="inline-asm"``), so a large private frame meets the
  thread's guard page instead of stepping over it into other memory.

What it does not catch: a wild write that lands in mapped memory (another
buffer, the Python heap) does not fault; the bounds checks on private and
``__local`` arrays (translator/lower.py) and the buffers' guard zones (cpu.py)
catch the common cases of those.  The guard needs Linux (glibc's
``sigaction`` layout); elsewhere kernels run unguarded.
"""
from __future__ import annotations

import ctypes
import re
import signal
import sys
import threading

SIGNALS = (signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE, signal.SIGILL)
SA_SIGINFO, SA_ONSTACK, SA_NODEFER = 0x4, 0x08000000, 0x40000000
SS_DISABLE = 2
ALT_STACK_BYTES = 64 << 10          # the handler's stack on each thread that runs kernels
JMP_WORDS = 78                      # int64 words of the jump buffer (glibc's sigjmp_buf: 25 on x86-64, 39 on arm64)
FAULT_SIGNAL, FAULT_ADDRESS = JMP_WORDS, JMP_WORDS + 1   # after it: what the handler found
ENABLED = sys.platform.startswith("linux")

# Declarations and the handler; cpu.py's dispatcher IR is compiled in the same module.
FAULT_IR = r"""
declare ptr @pthread_getspecific(i32)
declare i32 @pthread_setspecific(i32, ptr)
declare i32 @__sigsetjmp(ptr, i32) #9
declare void @siglongjmp(ptr, i32) noreturn
declare ptr @signal(i32, ptr)
declare i32 @raise(i32)
declare void @abort() noreturn
attributes #9 = { returns_twice }

@mncl_fault_key = global i32 0                         ; the pthread key of the jump buffer
@mncl_old_handler = global [65 x i64] zeroinitializer  ; per signal: the handler installed before ours
@mncl_old_flags = global [65 x i64] zeroinitializer    ; ... and its sa_flags

; a kernel's bounds check failed (translator/lower.py checked_index): record the place and the index
; in the launch's status words and leave the work-groups, as a fault does
define void @mncl_oob_abort(ptr %status, i64 %message, i64 %index) noreturn {
entry:
  store i64 %message, ptr %status
  %ip = getelementptr i64, ptr %status, i64 1
  store i64 %index, ptr %ip
  %key = load i32, ptr @mncl_fault_key
  %jb = call ptr @pthread_getspecific(i32 %key)
  %outside = icmp eq ptr %jb, null
  br i1 %outside, label %die, label %jump
jump:
  call void @siglongjmp(ptr %jb, i32 2)
  unreachable
die:                                                   ; not under mncl_dispatch: cannot happen
  call void @abort()
  unreachable
}

define void @mncl_on_fault(i32 %sig, ptr %info, ptr %uc) {
entry:
  %key = load i32, ptr @mncl_fault_key
  %jb = call ptr @pthread_getspecific(i32 %key)
  %running = icmp ne ptr %jb, null                    ; this thread is running kernel code
  br i1 %running, label %recover, label %chain
recover:
  %sig64 = sext i32 %sig to i64
  %js = getelementptr i64, ptr %jb, i64 78
  store i64 %sig64, ptr %js
  %ap = getelementptr i8, ptr %info, i64 16           ; si_addr
  %addr = load i64, ptr %ap
  %ja = getelementptr i64, ptr %jb, i64 79
  store i64 %addr, ptr %ja
  call void @siglongjmp(ptr %jb, i32 1)
  unreachable
chain:
  %i = sext i32 %sig to i64
  %hp = getelementptr [65 x i64], ptr @mncl_old_handler, i64 0, i64 %i
  %h = load i64, ptr %hp
  %default = icmp ule i64 %h, 1                        ; SIG_DFL or SIG_IGN: the default action
  br i1 %default, label %reset, label %call
reset:
  %prev = call ptr @signal(i32 %sig, ptr null)
  %r = call i32 @raise(i32 %sig)
  ret void
call:
  %fp = getelementptr [65 x i64], ptr @mncl_old_flags, i64 0, i64 %i
  %f = load i64, ptr %fp
  %siginfo = and i64 %f, 4
  %hf = inttoptr i64 %h to ptr
  %three = icmp ne i64 %siginfo, 0
  br i1 %three, label %call3, label %call1
call3:
  call void %hf(i32 %sig, ptr %info, ptr %uc)
  ret void
call1:
  call void %hf(i32 %sig)
  ret void
}
"""

# Where there is no guard: the bounds checks' target still records, then ends the process as before.
OOB_ABORT_UNGUARDED = r"""
declare void @abort() noreturn
define void @mncl_oob_abort(ptr %status, i64 %message, i64 %index) noreturn {
  store i64 %message, ptr %status
  call void @abort()
  unreachable
}
"""

# The dispatcher's prologue and epilogue (cpu.py splices them around its loop).
GUARD_ENTRY = f"""
  %jb = alloca [{JMP_WORDS + 2} x i64], align 16
  %js0 = getelementptr i64, ptr %jb, i64 {FAULT_SIGNAL}
  store i64 0, ptr %js0                                 ; stays 0 when mncl_oob_abort jumps
  %key = load i32, ptr @mncl_fault_key
  %outer = call ptr @pthread_getspecific(i32 %key)
  %set = call i32 @pthread_setspecific(i32 %key, ptr %jb)
  %jumped = call i32 @__sigsetjmp(ptr %jb, i32 0) #9
  %caught = icmp ne i32 %jumped, 0
  br i1 %caught, label %fault, label %body
fault:
  %js = getelementptr i64, ptr %jb, i64 {FAULT_SIGNAL}
  %sig = load i64, ptr %js
  %ja = getelementptr i64, ptr %jb, i64 {FAULT_ADDRESS}
  %addr = load i64, ptr %ja
  %r8 = getelementptr i64, ptr %rec, i64 8
  store i64 %sig, ptr %r8
  %r9 = getelementptr i64, ptr %rec, i64 9
  store i64 %addr, ptr %r9
  %unset1 = call i32 @pthread_setspecific(i32 %key, ptr %outer)
  ret i64 1
"""
GUARD_EXIT = """
  %unset2 = call i32 @pthread_setspecific(i32 %key, ptr %outer)
"""

_DEFINE = re.compile(r"^(define [^\n]*?)( !dbg ![0-9]+)? \{$", re.M)
PROBE_GROUP = "#65000"


def with_stack_probes(llvm_ir: str) -> str:
    """``llvm_ir`` with every defined function probing its stack as it grows it (see the module doc)."""
    text = _DEFINE.sub(lambda m: f"{m.group(1)} {PROBE_GROUP}{m.group(2) or ''} {{", llvm_ir)
    return text + f'\nattributes {PROBE_GROUP} = {{ "probe-stack"="inline-asm" }}\n'


class _Sigaction(ctypes.Structure):
    _fields_ = [("handler", ctypes.c_void_p), ("mask", ctypes.c_ulong * 16), ("flags", ctypes.c_int),
                ("restorer", ctypes.c_void_p)]


class _StackT(ctypes.Structure):
    _fields_ = [("sp", ctypes.c_void_p), ("flags", ctypes.c_int), ("size", ctypes.c_size_t)]


_libc = ctypes.CDLL(None, use_errno=True) if ENABLED else None
thread_state = threading.local()   # .ready: the thread has its alternate signal stack
_handler_address = None


def install(engine) -> None:
    """Point the guard's globals in ``engine`` (the dispatcher's) at a new pthread key and install the
    handler for SIGNALS, remembering the handlers it displaces.  Once per process (cpu.py's lock)."""
    global _handler_address
    if not ENABLED:
        return
    key = ctypes.c_uint()
    if _libc.pthread_key_create(ctypes.byref(key), None) != 0:
        raise OSError(ctypes.get_errno(), "pthread_key_create failed")
    ctypes.c_uint32.from_address(engine.get_global_value_address("mncl_fault_key")).value = key.value
    _handler_address = engine.get_function_address("mncl_on_fault")
    _old_handlers.update(old=engine.get_global_value_address("mncl_old_handler"),
                         flags=engine.get_global_value_address("mncl_old_flags"))
    _install_handler()


_old_handlers = {}


def _install_handler():
    old_h = (ctypes.c_int64 * 65).from_address(_old_handlers["old"])
    old_f = (ctypes.c_int64 * 65).from_address(_old_handlers["flags"])
    for sig in SIGNALS:
        new, old = _Sigaction(), _Sigaction()
        new.handler = _handler_address
        new.flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER   # NODEFER: the signal is not left blocked after the jump
        if _libc.sigaction(int(sig), None, ctypes.byref(old)) != 0:
            raise OSError(ctypes.get_errno(), f"sigaction({sig.name}) failed")
        if old.handler == _handler_address:
            continue
        old_h[sig], old_f[sig] = old.handler or 0, old.flags
        if _libc.sigaction(int(sig), ctypes.byref(new), None) != 0:
            raise OSError(ctypes.get_errno(), f"sigaction({sig.name}) failed")


def prepare_thread() -> None:
    """Give the calling thread an alternate signal stack, unless it has one: the handler must run even
    when a kernel overflowed the thread's own stack.  Cheap after the first call on a thread."""
    if getattr(thread_state, "ready", False):
        return
    thread_state.ready = True
    if not ENABLED:
        return
    old = _StackT()
    _libc.sigaltstack(None, ctypes.byref(old))
    if old.flags & SS_DISABLE or old.size < ALT_STACK_BYTES // 2:
        buf = ctypes.create_string_buffer(ALT_STACK_BYTES)
        new = _StackT(ctypes.addressof(buf), 0, ALT_STACK_BYTES)
        if _libc.sigaltstack(ctypes.byref(new), None) == 0:
            thread_state.stack = buf            # lives as long as the thread


_SIGNAL_TEXT = {
    signal.SIGSEGV: "SIGSEGV, an access to memory it may not touch at address 0x{addr:x} (a pointer far out of "
                    "its buffer, or private arrays deeper than the thread's stack)",
    signal.SIGBUS: "SIGBUS, an access the memory cannot serve at address 0x{addr:x}",
    signal.SIGFPE: "SIGFPE, an integer division by zero (or of the most negative value by -1)",
    signal.SIGILL: "SIGILL, code the compiler had proved unreachable (undefined behaviour in the kernel)",
}


def describe(sig: int, addr: int) -> str:
    """The fault a record holds, for "kernel 'k' faulted: ..."."""
    try:
        text = _SIGNAL_TEXT[signal.Signals(sig)]
    except (KeyError, ValueError):
        text = f"signal {sig}"
    return text.format(addr=addr & ((1 << 64) - 1))
