"""The recording tracer. Runs INSIDE the sandbox child process only; standard library only.

Usage (by model_backend.sandbox): `python -I tracer.py REQUEST.json OUT_FD`. The request names the
program, entry expression and limits. Every recorded event is written to OUT_FD as one JSON line,
then one final {"end": ...} line. The parent survives whatever the program does: events stream out as
they happen, so a killed child still leaves its trace behind.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import json
import os
import re
import signal
import sys
import time
import types
from typing import Any

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_GENERATOR_FLAGS = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR


ATTRIBUTE_DEPTH = 3  # self.left.right.val: how deep a debugging session sees into the program's objects
MAX_ATTRIBUTES = 200  # attribute paths recorded per event, over all names
MAX_ELEMENTS = 50  # elements of one list, tuple or dict looked into for the program's objects
OBJECT_DEPTH = 3  # Cart(items=[Item(...)]): how many of the program's objects deep one value is written
# Whether values write the program's objects without a __repr__ as `Class(field=value, ...)` (trace
# format 3) or as Python does, `<__main__.Class object>` (format 2). Set once from the request.
_object_values = [True]


def _own_instance(value: object) -> bool:
    """An instance of a class the traced program defines (its module is __main__), not a class itself."""
    try:
        return not isinstance(value, type) and type(value).__module__ == "__main__"
    except Exception:  # a metaclass may make __module__ anything
        return False


def _elements(value: object) -> list[tuple[str, object]]:
    """A plain list's, tuple's or dict's elements by path segment (`[0]`, `['k']`): all of them, or none
    when there are more than MAX_ELEMENTS or a dict key is not an int or a string a path can hold."""
    kind = type(value)
    if kind is list or kind is tuple:
        sequence: list[Any] | tuple[Any, ...] = value  # type: ignore[assignment]
        return [] if len(sequence) > MAX_ELEMENTS else [(f"[{i}]", v) for i, v in enumerate(sequence)]
    if kind is dict:
        mapping: dict[Any, Any] = value  # type: ignore[assignment]
        items = list(mapping.items())
        if len(items) <= MAX_ELEMENTS and all(type(k) in (int, str) and not any(c in repr(k) for c in "[].") for k, _ in items):
            return [(f"[{k!r}]", v) for k, v in items]
    return []


def _holds_objects(value: object, depth: int = 2) -> bool:
    """Is this one of the program's objects, or a container (two levels at most) with one inside?"""
    if _own_instance(value):
        return True
    return depth > 0 and any(_holds_objects(v, depth - 1) for _, v in _elements(value))


def _plain_object(value: object) -> bool:
    """One of the program's objects whose class writes no repr of its own (object's `<C object at ..>`)."""
    try:
        return type(value).__repr__ is object.__repr__ and _own_instance(value)
    except Exception:  # an exotic metaclass
        return False


def _instance_fields(obj: object) -> list[tuple[str, object]]:
    """The object's own state as Python stores it (its __dict__, then its __slots__), read without
    running any of the program's code: no __getattr__, no properties or other descriptors."""
    found: list[tuple[str, object]] = []
    try:
        namespace = object.__getattribute__(obj, "__dict__")
    except Exception:  # no __dict__ (slots only), or an exotic class
        namespace = None
    if isinstance(namespace, dict):
        found.extend((k, v) for k, v in list(namespace.items()) if isinstance(k, str) and k.isidentifier())
    for cls in type(obj).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if isinstance(slot, str) and slot.isidentifier() and slot not in ("__dict__", "__weakref__"):
                with contextlib.suppress(AttributeError):  # a slot never assigned
                    found.append((slot, object.__getattribute__(obj, slot)))
    return found


def _instance_attributes(obj: object) -> list[tuple[str, object]]:
    """The object's fields (`_instance_fields`), then the data its classes hold (e.g. `scale = 10`),
    read without running any of the program's code (a getter could change what the program does next)."""
    found = _instance_fields(obj)
    names = {name for name, _ in found}
    for cls in type(obj).__mro__[:-1]:  # not object's own
        for name, value in list(cls.__dict__.items()):
            if (isinstance(name, str) and name.isidentifier() and name not in names and not name.startswith("__")
                    and not callable(value) and not hasattr(type(value), "__get__")):
                names.add(name)
                found.append((name, value))
    return found


class _StopTracing(BaseException):
    """Never raised into user code; used only to unwind our own driver."""


_LONGEST_ADDRESS = 22  # " at 0x" and 16 hex digits: how much a cut through an address can hide


def safe_repr(value: object, max_len: int) -> str:
    """repr() that never raises, hides memory addresses (they differ per run) and is cut at max_len.

    A long list, tuple, dict or set is written only as far as the cut needs (`_repr_prefix`): a program
    holding 100,000 numbers must not spend milliseconds of every event on a repr mostly thrown away.
    The text is the same as the whole repr's, cut."""
    try:
        need = max_len + 4 * _LONGEST_ADDRESS
        while True:
            text = _repr_prefix(value, need, set())
            if len(text) <= need:  # the whole repr
                break
            shown = _ADDRESS.sub("", text)
            if len(shown) > max_len + _LONGEST_ADDRESS:  # what the cut keeps lies before any partial address
                return shown[:max_len] + "..."
            need *= 4  # addresses took up most of the prefix: write further
    except BaseException as exc:  # a user __repr__ may raise anything
        text = f"<repr failed: {type(exc).__name__}>"
    if not isinstance(text, str):
        text = "<repr failed: not a string>"
    text = _ADDRESS.sub("", text)
    if len(text) > max_len:
        text = text[:max_len] + "..."
    return text


_FEW = 64  # a container of at most this many elements, none a container, is written by repr() at once
_DISPLAYS: dict[type, tuple[str, str]] = {list: ("[", "]"), tuple: ("(", ")"), dict: ("{", "}"), set: ("{", "}"),
                                          frozenset: ("frozenset({", "})")}


def _repr_prefix(value: object, need: int, active: set[int], depth: int = OBJECT_DEPTH) -> str:
    """repr(value), or a prefix of it longer than `need` characters. Only non-empty lists, tuples, dicts,
    sets and frozensets (exactly those types: a subclass may write its own repr) are written part way,
    as Python writes them, `[...]` for a list or dict inside itself included. With object values on,
    the program's objects without a __repr__ of their own are written by `_object_prefix`; `depth`
    counts how many more of them may be opened on the way down."""
    kind = type(value)
    if kind not in _DISPLAYS or not value:  # type: ignore[truthy-bool]
        if _object_values[0] and _plain_object(value):
            return _object_prefix(value, need, active, depth)
        return repr(value)
    elements: Any = value.values() if kind is dict else value  # type: ignore[attr-defined]
    if len(elements) <= _FEW and not any(
        type(v) in _DISPLAYS or (_object_values[0] and _plain_object(v)) for v in elements
    ):
        return repr(value)  # a few plain values: Python's own repr is quicker than the walk
    if id(value) in active:  # Python's Py_ReprEnter: a container met again inside itself
        return "[...]" if kind is list else "{...}" if kind is dict else "(...)" if kind is tuple else repr(value)
    opener, closer = _DISPLAYS[kind]
    out = _Written(opener, need)
    active.add(id(value))
    try:
        items = value.items() if kind is dict else value  # type: ignore[attr-defined]
        for i, item in enumerate(items):  # type: ignore[arg-type]
            if i:
                out.add(", ")
            if kind is dict:
                if out.add(_repr_prefix(item[0], out.left, active, depth)):
                    return out.text
                out.add(": ")
                item = item[1]
            if out.add(_repr_prefix(item, out.left, active, depth)):
                return out.text
    finally:
        active.discard(id(value))
    if kind is tuple and len(value) == 1:  # type: ignore[arg-type]
        out.add(",")
    out.add(closer)
    return out.text


class _Written:
    """A repr written piece by piece, while it is at most `need` characters long."""

    def __init__(self, start: str, need: int) -> None:
        self.parts, self.size, self.need = [start], len(start), need

    def add(self, piece: str) -> bool:
        """Write `piece`; whether the text is now longer than `need` (then the writer stops)."""
        self.parts.append(piece)
        self.size += len(piece)
        return self.size > self.need

    @property
    def left(self) -> int:
        return self.need - self.size

    @property
    def text(self) -> str:
        return "".join(self.parts)


def _object_prefix(value: object, need: int, active: set[int], depth: int) -> str:
    """`Cart(items=[Item(name='a', qty=1)], total=1.5)`: the class's name and the object's fields
    (`_instance_fields`, at most MAX_ELEMENTS, then `...`), each written as `_repr_prefix` writes it.
    An object met again inside itself is `...` (as Python writes a list inside itself); one deeper than
    OBJECT_DEPTH objects is `Name(...)`. Reading fields runs none of the program's code."""
    name = type(value).__name__
    if id(value) in active:
        return "..."
    if depth <= 0:
        return name + "(...)"
    fields = _instance_fields(value)
    out = _Written(name + "(", need)
    active.add(id(value))
    try:
        for i, (attr, field) in enumerate(fields):
            if i:
                out.add(", ")
            if i == MAX_ELEMENTS:
                out.add("...")
                break
            if out.add(attr + "=" + _repr_prefix(field, out.left, active, depth - 1)):
                return out.text
    finally:
        active.discard(id(value))
    out.add(")")
    return out.text


class _Capture(io.TextIOBase):
    """sys.stdout replacement: keeps what the program prints until the next event takes it."""

    def __init__(self, limit: int) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self.size + len(text) <= self.limit:
            self.parts.append(text)
        elif self.size <= self.limit:  # said once, where the output stops
            self.parts.append(text[: self.limit - self.size] + f"\n[output truncated at {self.limit} characters]\n")
        self.size += len(text)
        return len(text)

    def take(self) -> str:
        text = "".join(self.parts)
        self.parts.clear()
        return text


class Recorder:
    def __init__(self, path: str, out: io.TextIOBase, cfg: dict[str, Any]) -> None:
        self.path = path
        self.out = out
        self.max_events: int = cfg["max_events"]
        self.max_repr: int = cfg["max_repr"]
        self.record_globals: bool = bool(cfg.get("record_globals"))
        self.record_attributes: bool = bool(cfg.get("record_attributes"))
        self.deadline = time.monotonic() + cfg["time_limit"]
        self.wall_clock_reason = f"wall-clock limit of {cfg['time_limit']:g}s reached"
        self.patches: dict[int, list[tuple[str, str]]] = {}
        self.jumps: dict[int, int] = {}  # line event index -> the line it jumps to
        for p in cfg.get("patches", []):
            if p.get("jump") is not None:
                self.jumps[p["index"]] = int(p["jump"])
            else:
                self.patches.setdefault(p["index"], []).append((p["name"], p["value"]))
        self.capture = _Capture(cfg["max_stdout"])
        self.count = 0
        self.frame_ids: dict[int, int] = {}  # id(frame) -> our id, for live frames
        self.generator_frames: list[types.FrameType] = []  # kept alive so their id() is never reused
        self.next_id = 0
        self.locals_to_fast: Any = None  # bound before the audit hook forbids ctypes
        self.lines: list[str] = []

    # ---- helpers -------------------------------------------------------------------------------
    def is_user(self, frame: types.FrameType | None) -> bool:
        return frame is not None and frame.f_code.co_filename == self.path

    def frame_id(self, frame: types.FrameType) -> int:
        key = id(frame)
        if key not in self.frame_ids:
            self.frame_ids[key] = self.next_id
            self.next_id += 1
            if frame.f_code.co_flags & _GENERATOR_FLAGS:
                self.generator_frames.append(frame)
        return self.frame_ids[key]

    def user_stack(self, frame: types.FrameType) -> list[types.FrameType]:
        stack = []
        f: types.FrameType | None = frame
        while f is not None:
            if self.is_user(f):
                stack.append(f)
            f = f.f_back
        stack.reverse()
        return stack

    def visible_locals(self, frame: types.FrameType) -> dict[str, str]:
        names = frame.f_locals
        # Module and class bodies: only the names the user defined (not dunders, not imported modules).
        namespace = frame.f_code.co_name == "<module>" or not (frame.f_code.co_flags & 0x02)  # CO_NEWLOCALS
        result = {}
        for name, value in list(names.items()):
            if namespace and (
                (name.startswith("__") and name.endswith("__")) or isinstance(value, types.ModuleType)
            ):
                continue
            result[name] = safe_repr(value, self.max_repr)
        return result

    def visible_globals(self, frame: types.FrameType) -> dict[str, str]:
        """The module globals a function's code names (what `p NAME` can mean there besides its locals),
        dunders and modules left out; nothing for the module's own frame, whose locals are its globals."""
        if frame.f_code.co_name == "<module>" or frame.f_globals is frame.f_locals:
            return {}
        module, local = frame.f_globals, frame.f_locals
        result = {}
        for name in frame.f_code.co_names:
            if name in module and name not in local and not (name.startswith("__") and name.endswith("__")):
                value = module[name]
                if not isinstance(value, types.ModuleType):
                    result[name] = safe_repr(value, self.max_repr)
        return result

    def object_attributes(self, names: dict[str, Any]) -> dict[str, dict[str, str]]:
        """For each name holding an instance of a class the program defines, or a list, tuple or dict of
        them: the reprs inside, by path (`val`, `next.val`, `children[0].val`, `[1].name`). An object's
        attributes are all recorded; a container's elements only when they are (or hold) such objects.
        Objects are followed ATTRIBUTE_DEPTH deep, MAX_ELEMENTS elements a container, MAX_ATTRIBUTES
        paths an event. A debugging session expands `self` and reads `p node.next.val` from them; a
        default repr (`<__main__.Node object>`) shows none of it."""
        result: dict[str, dict[str, str]] = {}
        budget = [MAX_ATTRIBUTES]
        for name, value in names.items():
            paths: dict[str, str] = {}
            with contextlib.suppress(Exception):  # an exotic class: what was read so far is kept
                self._walk_inside(value, "", ATTRIBUTE_DEPTH, frozenset(), paths, budget)
            if paths:
                result[name] = paths
        return result

    def _walk_inside(self, value: object, path: str, depth: int, ancestors: frozenset[int],
                     paths: dict[str, str], budget: list[int]) -> None:
        if id(value) in ancestors:  # a cycle: it stops at the repr already recorded
            return
        ancestors = ancestors | {id(value)}
        if _own_instance(value):
            if depth < 1:
                return
            depth -= 1
            inside = [(("." if path else "") + attr, v) for attr, v in _instance_attributes(value)]
        elif _holds_objects(value):  # every element, so that the debugger can rebuild the container
            inside = _elements(value)
        else:
            return
        for segment, child in inside:
            if budget[0] <= 0:
                return
            budget[0] -= 1
            paths[path + segment] = safe_repr(child, self.max_repr)
            self._walk_inside(child, path + segment, depth, ancestors, paths, budget)

    def source_line(self, lineno: int) -> str:
        lines = self.lines
        return lines[lineno - 1] if 0 < lineno <= len(lines) else ""

    def apply_patches(self, frame: types.FrameType, index: int) -> None:
        for name, value_text in self.patches.get(index, []):
            value = eval(value_text, frame.f_globals, dict(frame.f_locals))  # oracle mode runs user code
            frame.f_locals[name] = value
            if self.locals_to_fast is not None and frame.f_code.co_flags & 0x02:
                self.locals_to_fast(frame, 0)

    # ---- sys.settrace --------------------------------------------------------------------------
    def global_trace(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if not self.is_user(frame):
            return None  # not our program's code: no local tracing inside it
        if frame.f_code.co_name == "<module>" and frame.f_back is not None and not self.is_user(frame.f_back):
            return self.local_trace  # the module's own call event is not a state; its lines are
        self.record(frame, "call", arg)
        return self.local_trace

    def local_trace(self, frame: types.FrameType, event: str, arg: Any) -> Any:
        if event in ("line", "return", "exception"):
            self.record(frame, event, arg)
        return self.local_trace

    @staticmethod
    def internal_stop_iteration(frame: types.FrameType, arg: Any) -> bool:
        """The interpreter's own StopIteration (no traceback) inside a generator driving `yield from`:
        machinery rather than an exception of the program; pdb's step and next do not stop there."""
        return bool(frame.f_code.co_flags & _GENERATOR_FLAGS) and arg[0] is StopIteration and arg[2] is None

    def record(self, frame: types.FrameType, event: str, arg: Any) -> None:
        # The program may be at the edge of the recursion limit: give our own bookkeeping headroom.
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(limit + 200)
        try:
            self._record(frame, event, arg)
        except MemoryError:
            self.finish("error", "MemoryError: the program exhausted the sandbox's memory limit")
        except Exception as exc:  # our own failure must not leak into the user's program
            self.finish("error", f"tracer failed: {type(exc).__name__}: {exc}")
        finally:
            sys.setrecursionlimit(limit)

    def _record(self, frame: types.FrameType, event: str, arg: Any) -> None:
        if not frame.f_lineno:
            return  # CPython's events at "line 0" of a module with no statements: no line of the program
        if self.count >= self.max_events:
            self.finish("never", f"event limit {self.max_events} reached", truncated=True)
        if self.count % 256 == 0 and time.monotonic() > self.deadline:
            self.finish("never", self.wall_clock_reason)
        index = self.count
        if index in self.patches:
            self.apply_patches(frame, index)
        stack = self.user_stack(frame)
        parent = frame.f_back
        value = None
        if event == "return":
            value = safe_repr(arg, self.max_repr)
        elif event == "exception":
            value = safe_repr(arg[1], self.max_repr)
        record = {
            "index": index,
            "event": event,
            "line": frame.f_lineno,
            "source": self.source_line(frame.f_lineno),
            "function": frame.f_code.co_name,
            "depth": len(stack) - 1,
            "frame_id": self.frame_id(frame),
            "parent_id": self.frame_id(parent) if parent is not None and self.is_user(parent) else -1,
            "is_generator": bool(frame.f_code.co_flags & _GENERATOR_FLAGS),
            "internal": event == "exception" and self.internal_stop_iteration(frame, arg),
            "locals": (visible := self.visible_locals(frame)),
            "value": value,
            "stdout": self.capture.take(),
            "stack": [{"function": f.f_code.co_name, "line": f.f_lineno} for f in stack],
        }
        module_names = self.visible_globals(frame) if self.record_globals else {}
        if self.record_globals:
            record["globals"] = module_names
        if self.record_attributes:
            local, module = frame.f_locals, frame.f_globals
            shown = {name: local[name] for name in local if name in visible}
            shown.update((name, module[name]) for name in module_names if name in module)
            record["attributes"] = self.object_attributes(shown)
        if event == "return" and not record["is_generator"]:
            self.frame_ids.pop(id(frame), None)  # the frame dies; its id() may be reused
        self.emit(record)
        target = self.jumps.pop(index, None)
        if target is not None:
            if event != "line":
                self.finish("error", f"jump refused: event {index} is a {event} event, not a line")
            try:
                frame.f_lineno = target  # type: ignore[misc]  # as pdb's jump does, from the line trace event
            except ValueError as exc:
                self.finish("error", f"jump refused: {exc}")
            # Python fires no event for the line jumped to; record the pause there (pdb shows it too),
            # so that the next step runs that line.
            self.count += 1
            self._record(frame, "line", None)
            return
        self.count += 1

    def emit(self, obj: dict[str, Any]) -> None:
        # Each event goes out at once: a program killed in a long call of C code (which holds the
        # interpreter, so no alarm or thread of ours can run) must not take its last events with it.
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.out.flush()

    def on_alarm(self, signum: int, frame: types.FrameType | None) -> None:
        """The wall-clock limit, while the program sleeps or waits (no event to check the deadline at):
        end the trace from here, so that the events and output so far are kept."""
        self.finish("never", self.wall_clock_reason)

    def finish(self, code: str, reason: str | None, truncated: bool = False) -> None:
        """Write the end record and leave at once (user code must not get a chance to catch this)."""
        sys.settrace(None)
        end = {"end": code, "reason": reason, "stdout": self.capture.take(), "truncated": truncated}
        try:
            self.emit(end)
            self.out.flush()
        except RuntimeError:  # the wall-clock alarm came in the middle of a write: write past the buffer
            os.write(self.out.fileno(), ("\n" + json.dumps(end, ensure_ascii=False) + "\n").encode("utf-8"))
        os._exit(0)


_FORBIDDEN_EVENTS = (
    "os.fork", "os.forkpty", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.kill",
    "os.killpg", "subprocess.Popen", "socket.connect", "socket.bind", "socket.sendto",
    "ctypes.dlopen", "ctypes.dlsym", "ctypes.addressof", "ctypes.string_at", "ctypes.wstring_at",
    "ctypes.cdata", "os.chdir", "os.setuid", "signal.pthread_kill", "_thread.start_new_thread",
    "os.remove", "os.rmdir", "os.rename", "shutil.rmtree", "os.truncate", "os.symlink", "os.link",
    "os.chmod", "os.chown",
)


def _install_audit_hook(workdir: str, allowed_call: int | None) -> None:
    """Refuse the operations a traced program has no business doing (a second line of defence
    beside the rlimits: fork bombs, signals, network, writes outside the sandbox directory)."""
    workdir = os.path.realpath(workdir)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "ctypes.call_function" and allowed_call is not None and args and args[0] == allowed_call:
            return
        if event.startswith(_FORBIDDEN_EVENTS) or event == "ctypes.call_function":
            raise PermissionError(f"the sandbox does not allow {event}")
        if event == "open" and len(args) >= 2 and isinstance(args[0], str | bytes):
            mode = args[1] if isinstance(args[1], str) else ""
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            writing = any(c in mode for c in "wax+") or bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
            if writing:
                target = os.path.realpath(os.fsdecode(args[0]))
                if not (target == workdir or target.startswith(workdir + os.sep)):
                    raise PermissionError(f"the sandbox allows writing only inside its directory, not {target}")

    sys.addaudithook(hook)


def main(request_path: str, out_fd: int) -> None:
    if request_path == "-":  # the request comes on stdin; the program then finds stdin closed
        with os.fdopen(0, "rb", closefd=False) as fh:
            req = json.loads(fh.read().decode("utf-8"))
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    else:
        with open(request_path, encoding="utf-8") as fh:
            req = json.load(fh)
        os.unlink(request_path)
    out = open(out_fd, "w", encoding="utf-8", buffering=1 << 16)  # noqa: SIM115 - lives until exit
    path, source, entry = req["path"], req["source"], req.get("entry")
    _object_values[0] = bool(req.get("objects", True))
    recorder = Recorder(path, out, req)
    recorder.lines = source.splitlines()

    allowed = None
    if req.get("patches"):
        import ctypes  # only oracle set_variable needs it, before the hook forbids ctypes

        fn = ctypes.pythonapi.PyFrame_LocalsToFast
        fn.argtypes = [ctypes.py_object, ctypes.c_int]
        recorder.locals_to_fast = fn
        allowed = ctypes.cast(fn, ctypes.c_void_p).value

    # Import what our own error handling needs before the program can interfere.
    import traceback  # noqa: F401

    code = compile(source, path, "exec")
    module = types.ModuleType("__main__")
    module.__file__ = path
    module.__builtins__ = builtins  # type: ignore[attr-defined]
    sys.modules["__main__"] = module
    globals_ = module.__dict__
    sys.stdout = recorder.capture  # type: ignore[assignment]
    sys.stdin = io.StringIO("")  # closed input: input() raises EOFError
    sys.argv = [path, *[str(a) for a in req.get("argv") or []]]  # as `python path args...` would set it
    signal.signal(signal.SIGALRM, recorder.on_alarm)
    signal.setitimer(signal.ITIMER_REAL, float(req["time_limit"]))
    _install_audit_hook(os.getcwd(), allowed)

    try:
        if req.get("no_trace"):
            exec(code, globals_)  # a check (e.g. CruxEval's assert): run, record nothing
        elif entry is not None:
            exec(code, globals_)  # the definitions: set-up, not part of the debugged trajectory
            recorder.capture.take()
            sys.settrace(recorder.global_trace)
            eval(compile(entry, "<entry>", "eval"), globals_)
        else:
            sys.settrace(recorder.global_trace)
            exec(code, globals_)
    except SystemExit as exc:
        sys.settrace(None)
        code_ = exc.code
        if code_ is None or code_ == 0:
            recorder.finish("normal", None)
        recorder.finish("error", f"SystemExit: {code_}")
    except BaseException as exc:  # the program's uncaught exception
        sys.settrace(None)
        try:
            detail = str(exc) or ("the sandbox's memory limit was exceeded" if isinstance(exc, MemoryError) else "")
        except BaseException:
            detail = safe_repr(exc, recorder.max_repr)
        recorder.finish("error", f"{type(exc).__name__}: {detail}"[: recorder.max_repr])
    sys.settrace(None)
    recorder.finish("normal", None)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
