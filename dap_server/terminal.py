"""`ndb debug`: a pdb-like terminal debugger on the same session core as the debug adapter.

Commands follow pdb (s, n, r, c, b, cl, l, ll, p, pp, w, a, whatis, retval, source, alias, commands,
interact, q, ...) and add back-stepping: `back`
(inverse step over) and `rc` (reverse continue). Works with stdin from a pipe: commands are read line by
line, and the end of input quits. As in pdb, Ctrl-C while a command runs pauses the program where it got
to (a long predicted `c`, say) and cancels an inference; a second Ctrl-C ends the debugger (the engine
may be cut mid-prediction). Ctrl-C at the prompt prints `--KeyboardInterrupt--` and prompts again.
"""

from __future__ import annotations

import ast
import cmd
import contextlib
import pprint
import re
import shutil
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from dap_server.core import (
    INFER_SECONDS,
    CommandCancelled,
    CoreError,
    DebugCore,
    EngineFactory,
    Stop,
    exception_parts,
)
from model_backend import safe_ast
from model_backend.engine.base import CallerFrame
from model_backend.state import State

PROMPT = "(ndb) "
LIST_CONTEXT = 5  # lines before/after the current one, as pdb's `list`


class TerminalDebugger(cmd.Cmd):
    prompt = PROMPT
    doc_header = "Commands (type help <command>):"
    use_rawinput = False

    def __init__(self, core: DebugCore, stdin: IO[str], stdout: IO[str]) -> None:
        super().__init__(stdin=stdin, stdout=stdout)
        self.core = core
        self.out = stdout
        self.use_rawinput = False
        self._list_next: int | None = None
        self.frame_id = 1  # the frame `up`/`down` selected (1: the innermost); reset at every stop
        self.temporary: set[int] = set()  # numbers of tbreak breakpoints not hit yet
        self.displays: dict[str, str] = {}  # `display` expressions -> what was last shown for them
        self.aliases: dict[str, str] = {}  # `alias NAME COMMAND`
        self.bp_commands: dict[int, list[str]] = {}  # `commands N`: run when breakpoint N stops the program
        self._resume: str | None = None  # a breakpoint's resuming command (continue, next, ...), run next
        self.quitting = False
        self.infer_seconds = INFER_SECONDS
        self._cancel = threading.Event()  # Ctrl-C during an inference
        self._cut_short = False  # a second Ctrl-C cut a command short: the debugger ends
        try:
            self.echo = not stdin.isatty()
        except (AttributeError, ValueError):
            self.echo = True

    def cmdloop(self, intro: Any = None) -> None:
        """As pdb: Ctrl-C at the prompt is no reason to quit."""
        while True:
            try:
                super().cmdloop(intro)
                return
            except KeyboardInterrupt:
                if self._cut_short:
                    raise
                self.out.write("\n--KeyboardInterrupt--\n")
                intro = None

    # ---- output helpers -------------------------------------------------------------------------------
    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def error(self, text: str) -> None:
        self.say(f"*** {text}")

    def show_stop(self, stop: Stop) -> None:
        self.frame_id = 1
        for out in stop.outputs:
            if out.category == "console" and out.text.startswith("Neural Debug:"):
                self.say(out.text.rstrip("\n"))
            else:
                self.out.write(out.text)
        if stop.outputs and not stop.outputs[-1].text.endswith("\n"):
            self.say()  # the program's last output (an input() prompt) did not end its line
        if stop.exited:
            self.say("--Exit--")
            self.say("Use 'back' or 'rc' to go back in time, 'restart' to start again, 'q' to quit.")
            return
        state = stop.state
        silent = False
        if stop.reason == "breakpoint" and stop.breakpoint_ids:
            if not any(self.bp_commands.get(n, [""])[0] == "silent" for n in stop.breakpoint_ids):
                self.say(f"Breakpoint {', '.join(str(i) for i in stop.breakpoint_ids)} at line {state.line}")
            path = self.core.program.path if self.core.program else "<program>"
            for number in stop.breakpoint_ids:
                if number in self.temporary:  # a tbreak: gone once hit, as in pdb
                    self.temporary.discard(number)
                    self.core.breakpoints.remove_id(number)
                    self.say(f"Deleted breakpoint {number} at {path}:{state.line}")
            silent = self._run_bp_commands(stop.breakpoint_ids)
        if not silent:
            self.print_location(state)
        self._list_next = None
        for expression, old_text in self.displays.items():  # as pdb: only those whose value changed
            text = self._display_text(expression)
            if text != old_text:
                self.displays[expression] = text
                self.say(f"display {expression}: {text}  [old: {old_text}]")

    def print_location(self, state: State) -> None:
        if state.event == "exit":
            self.say("--Exit--")
            return
        if state.event == "call":
            self.say("--Call--")
        elif state.event == "return":
            self.say("--Return--")
        elif state.event == "exception":
            name, message = exception_parts(state.value)  # pdb's form: `ValueError: too big`
            self.say(f"{name}: {message}" if message else name)
            if name == "EOFError" and self.core.engine_name == "oracle":
                self.say("(the program's stdin is closed in the sandbox: input() has nothing to read)")
        path = self.core.program.path if self.core.program else "<program>"
        function = state.function or "<module>"
        suffix = f"->{state.value}" if state.event == "return" and state.value is not None else ""
        self.say(f"> {path}({state.line}){function}(){suffix}")
        source = state.source
        lines = self.core.source_lines
        if source is None and state.line and 0 < state.line <= len(lines):
            source = lines[state.line - 1].strip()
        self.say(f"-> {(source or '').strip()}")

    # ---- cmd.Cmd plumbing ---------------------------------------------------------------------------
    def emptyline(self) -> bool:
        if self.lastcmd:
            return bool(self.onecmd(self.lastcmd))
        return False

    def default(self, line: str) -> bool:  # type: ignore[override]
        text = line.strip()
        if text.startswith("!"):
            return self._bang(text[1:])
        word = text.split(None, 1)[0] if text else ""
        try:
            value = self.core.evaluate(text, self.frame_id)
        except CoreError as exc:
            message = str(exc)
            if word.isidentifier() and ("is not defined" in message or "syntax error" in message):
                self.error(f"Unknown command {word!r}. Type 'help' for the list of commands.")
            else:
                self.error(message)
            return False
        self.say(_show(value))
        return False

    def onecmd(self, line: str) -> bool:
        done = self._one(line)
        while self._resume is not None and not done:  # a breakpoint's commands ended with continue, next, ...
            line, self._resume = self._resume, None
            done = self._one(self.precmd_alias(line))
        return done

    def _one(self, line: str) -> bool:
        try:
            with self._ctrl_c_pauses():
                return bool(super().onecmd(line))
        except CoreError as exc:
            self.error(str(exc))
            return False
        except Exception as exc:  # noqa: BLE001 - the debugger must survive anything typed at it
            self.error(f"internal error: {type(exc).__name__}: {exc}")
            return False

    @contextlib.contextmanager
    def _ctrl_c_pauses(self) -> Iterator[None]:
        """While a command runs, the first Ctrl-C pauses it at the next state the engine reaches and
        cancels an inference; the second raises KeyboardInterrupt. Python lets only the main thread
        handle signals: elsewhere (tests driving the debugger from a thread) Ctrl-C is left as it is."""
        self.core.interrupt.clear()
        self._cancel.clear()
        # Only the main thread may handle signals; a process started with SIGINT ignored (a background
        # job, nohup) keeps ignoring it.
        if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            yield
            return

        def pause(signum: int, frame: Any) -> None:
            if self.core.interrupt.is_set():
                self._cut_short = True
                raise KeyboardInterrupt
            self.core.interrupt.set()
            self._cancel.set()

        previous = signal.signal(signal.SIGINT, pause)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    def precmd(self, line: str) -> str:
        if line == "EOF":
            return line
        if self.echo:
            self.out.write(line.rstrip("\n") + "\n")  # a transcript of piped input reads like a session
        return self.precmd_alias(line.strip())

    def _read_line(self, prompt: str) -> str:
        """A line read after `prompt` at a prompt of a command's own (`commands`, `interact`), echoed as
        precmd echoes; "" at the end of the input."""
        self.out.write(prompt)
        self.out.flush()
        line = self.stdin.readline()
        if line and self.echo:
            self.out.write(line.rstrip("\n") + "\n")
        return line

    def precmd_alias(self, line: str) -> str:
        """As pdb: an alias at the start of the line is replaced (%1, %2, ... its arguments, %* all of
        them), repeatedly; then `;;` separates commands (except in an alias definition)."""
        args = line.split()
        for _ in range(MAX_ALIAS_DEPTH):
            if not args or args[0] not in self.aliases:
                break
            line = self.aliases[args[0]]
            for number, value in enumerate(args[1:], start=1):
                line = line.replace(f"%{number}", value)
            line = line.replace("%*", " ".join(args[1:]))
            args = line.split()
        else:
            self.error(f"alias {args[0]!r} expands into itself")
            return ""
        if args and args[0] != "alias" and (marker := line.find(";;")) >= 0:
            self.cmdqueue.append(line[marker + 2:].lstrip())
            line = line[:marker].rstrip()
        return line

    def do_EOF(self, arg: str) -> bool:
        """End of input: quit."""
        self.say("")
        self.quitting = True
        return True

    # ---- stepping ---------------------------------------------------------------------------------------
    def _step(self, kind: str) -> bool:
        if self.core.exited and kind not in ("stepBack", "reverseContinue"):
            self.error("The program has exited; use 'back', 'rc', 'restart' or 'q'.")
            return False
        self.show_stop(self.core.step(kind))
        return False

    def do_step(self, arg: str) -> bool:
        """s(tep): execute the current line, stop at the first possible occasion (in a called function or
        on the next line)."""
        return self._step("stepIn")

    do_s = do_step

    def do_next(self, arg: str) -> bool:
        """n(ext): continue until the next line in the current function is reached or it returns."""
        return self._step("next")

    do_n = do_next

    def do_return(self, arg: str) -> bool:
        """r(eturn): continue until the current function returns."""
        return self._step("stepOut")

    do_r = do_return

    def do_continue(self, arg: str) -> bool:
        """c(ont(inue)): continue until a breakpoint is reached or the program ends."""
        return self._step("continue")

    do_c = do_cont = do_continue

    def do_until(self, arg: str) -> bool:
        """unt(il) [LINE]: continue until a line greater than the current one (or at least LINE) is reached
        in the current function, or it returns."""
        if self.core.exited:
            self.error("The program has exited; use 'back', 'rc', 'restart' or 'q'.")
            return False
        text = arg.strip()
        if text and not text.isdigit():
            self.error(f"{text!r} is not a line number (usage: until [LINE])")
            return False
        try:
            stop = self.core.until(int(text) if text else None)
        except CoreError as exc:
            self.error(str(exc))
            return False
        self.show_stop(stop)
        return False

    do_unt = do_until

    def do_back(self, arg: str) -> bool:
        """back: step back over the previous line (the inverse of next). A line that made calls is shown
        once, before its calls."""
        return self._step("stepBack")

    do_bs = do_back

    def do_rc(self, arg: str) -> bool:
        """rc: reverse continue: run backwards to the previous breakpoint, or to the start."""
        return self._step("reverseContinue")

    def do_restart(self, arg: str) -> bool:
        """restart / run: start the program again from its first line (breakpoints are kept)."""
        self.show_stop(self.core.restart())
        return False

    do_run = do_restart

    def do_quit(self, arg: str) -> bool:
        """q(uit): quit the debugger."""
        self.quitting = True
        return True

    do_q = do_exit = do_quit

    # ---- breakpoints ------------------------------------------------------------------------------------
    def do_break(self, arg: str) -> bool:
        """b(reak) [([FILE:]LINE | FUNCTION)[, CONDITION]]: set a breakpoint at LINE of the program, or at
        the first line of FUNCTION's body (with a condition, it stops only when the condition is true).
        Without argument, list the breakpoints."""
        arg = arg.strip()
        if not arg:
            return self._list_breakpoints()
        where, _, condition = arg.partition(",")
        line = self._breakpoint_line(where.strip())
        if line is None:
            return False
        table = self.core.breakpoints
        bp = table.add(line, condition.strip() or None, keep_refused=False)
        path = self.core.program.path if self.core.program else "<program>"
        if not bp.verified:
            self.error(f"Cannot set a breakpoint at line {line}: {bp.message}")
            return False
        moved = f" (moved from line {line}: no code there)" if bp.line != line else ""
        self.say(f"Breakpoint {bp.id} at {path}:{bp.line}{moved}")
        return False

    def _breakpoint_line(self, where: str) -> int | None:
        """The line `b` means by LINE, FILE:LINE (the file must be the program) or a function's name."""
        program = self.core.program
        if ":" in where:
            name, _, where = where.rpartition(":")
            if program is not None and Path(name).name != Path(program.path).name:
                self.error(f"{name!r} is not the program ({program.path}): only its own lines can stop")
                return None
        if where.isdigit():
            return int(where)
        if where.isidentifier() and program is not None:
            first = _first_body_line(program.source, where)
            if first is not None:
                return first
            self.error(f"the program defines no function {where!r}")
            return None
        self.error(f"{where!r} is not a line number or a function name (usage: b LINE[, CONDITION])")
        return None

    do_b = do_break

    def do_tbreak(self, arg: str) -> bool:
        """tbreak [([FILE:]LINE | FUNCTION)[, CONDITION]]: a temporary breakpoint, removed when first hit."""
        if not arg.strip():
            return self._list_breakpoints()
        before = {b.id for b in self.core.breakpoints.items}
        self.do_break(arg)
        self.temporary.update(b.id for b in self.core.breakpoints.items if b.id not in before)
        return False

    def _list_breakpoints(self) -> bool:
        items = self.core.breakpoints.items
        if not items:
            self.say("No breakpoints.")
            return False
        path = self.core.program.path if self.core.program else "<program>"
        self.say("Num Type         Disp Enb   Where")
        for bp in items:
            disposition = "del " if bp.id in self.temporary else "keep"
            self.say(f"{bp.id:<3} breakpoint   {disposition} {'yes' if bp.enabled else 'no '}   at {path}:{bp.line}")
            if bp.condition:
                self.say(f"\tstop only if {bp.condition}")
            if bp.ignore:
                self.say(f"\twill ignore next {bp.ignore} hit{'s' if bp.ignore != 1 else ''}")
            if bp.hits:
                self.say(f"\tbreakpoint already hit {bp.hits} time{'s' if bp.hits != 1 else ''}")
        return False

    def do_clear(self, arg: str) -> bool:
        """cl(ear) [([FILE]:LINE | BPNUMBER) ...]: clear breakpoints by number, as pdb does, or those at a
        line (`:9` or `prog.py:9`); without argument, clear all breakpoints."""
        arg = arg.strip()
        table = self.core.breakpoints
        if not arg:
            gone = table.remove_line(None)
            self.say(f"Deleted {len(gone)} breakpoint{'s' if len(gone) != 1 else ''}.")
            return False
        path = self.core.program.path if self.core.program else "<program>"
        for token in arg.replace(",", " ").split():
            if ":" in token:
                line = self._breakpoint_line(token if token[0] != ":" else token[1:])
                if line is None:
                    continue
                gone = table.remove_line(line)
                if not gone:
                    self.error(f"There is no breakpoint at line {line}.")
            else:
                bp = table.by_id(int(token)) if token.isdigit() else None
                if bp is None:
                    self.error(f"No breakpoint numbered {token!r} (usage: cl [BPNUMBER ... | [FILE]:LINE])")
                    continue
                table.remove_id(bp.id)
                gone = [bp]
            for bp in gone:
                self.temporary.discard(bp.id)
                self.say(f"Deleted breakpoint {bp.id} at {path}:{bp.line}")
        return False

    def _numbered(self, arg: str, usage: str) -> list[Any]:
        """The breakpoints `arg` numbers (errors for the numbers that name none)."""
        found = []
        for token in arg.replace(",", " ").split() or [""]:
            bp = self.core.breakpoints.by_id(int(token)) if token.isdigit() else None
            if bp is None:
                self.error(f"No breakpoint numbered {token!r} (usage: {usage})" if token else f"usage: {usage}")
            else:
                found.append(bp)
        return found

    def do_disable(self, arg: str) -> bool:
        """disable BPNUMBER ...: keep these breakpoints but let them never fire, until `enable`."""
        for bp in self._numbered(arg, "disable BPNUMBER ..."):
            bp.enabled = False
            self.say(f"Disabled breakpoint {bp.id} at line {bp.line}")
        return False

    def do_enable(self, arg: str) -> bool:
        """enable BPNUMBER ...: let disabled breakpoints fire again."""
        for bp in self._numbered(arg, "enable BPNUMBER ..."):
            bp.enabled = True
            self.say(f"Enabled breakpoint {bp.id} at line {bp.line}")
        return False

    def do_ignore(self, arg: str) -> bool:
        """ignore BPNUMBER [COUNT]: the next COUNT times the breakpoint is reached (its condition true), it
        does not stop; COUNT 0 (the default) makes it stop again at once."""
        number, _, count_text = arg.strip().partition(" ")
        count_text = count_text.strip() or "0"
        if not count_text.isdigit():
            self.error(f"{count_text!r} is not a count (usage: ignore BPNUMBER [COUNT])")
            return False
        for bp in self._numbered(number, "ignore BPNUMBER [COUNT]"):
            bp.ignore = int(count_text)
            if bp.ignore:
                times = "1 crossing" if bp.ignore == 1 else f"{bp.ignore} crossings"
                self.say(f"Will ignore next {times} of breakpoint {bp.id}.")
            else:
                self.say(f"Will stop next time breakpoint {bp.id} is reached.")
        return False

    do_cl = do_clear

    def do_condition(self, arg: str) -> bool:
        """condition BPNUMBER [CONDITION]: set a new condition for the breakpoint (none: unconditional)."""
        num, _, condition = arg.strip().partition(" ")
        for bp in self.core.breakpoints.items:
            if num.isdigit() and bp.id == int(num):
                bp.condition = condition.strip() or None
                self.say(f"New condition set for breakpoint {bp.id}." if bp.condition
                         else f"Breakpoint {bp.id} is now unconditional.")
                return False
        self.error(f"no breakpoint number {num!r}")
        return False

    # ---- looking around ---------------------------------------------------------------------------------
    def do_list(self, arg: str) -> bool:
        """l(ist) [FIRST[, LAST]]: list source around the current line (again: continue the listing).
        `->` marks the current line, `B` a breakpoint."""
        lines = self.core.source_lines
        current = self._current_line()
        arg = arg.strip()
        if arg == ".":
            self._list_next = None
            arg = ""
        if arg:
            parts = [p.strip() for p in arg.split(",")]
            first = _parse_line(parts[0])
            last = _parse_line(parts[1]) if len(parts) > 1 and parts[1] else None
            if first is None or (len(parts) > 1 and parts[1] and last is None):
                self.error(f"bad line range {arg!r} (usage: l [FIRST[, LAST]])")
                return False
            if last is None:
                first, last = max(first - LIST_CONTEXT, 1), first + LIST_CONTEXT
            elif last < first:
                last = first + last  # pdb: a second number smaller than the first is a count
        elif self._list_next is not None:
            first = self._list_next
            last = first + 2 * LIST_CONTEXT
        else:
            first = max((current or 1) - LIST_CONTEXT, 1)
            last = first + 2 * LIST_CONTEXT
        if first > len(lines):
            self.error("end of file")
            return False
        self._print_lines(first, min(last, len(lines)), current)
        self._list_next = min(last, len(lines)) + 1
        return False

    do_l = do_list

    def do_longlist(self, arg: str) -> bool:
        """ll / longlist: list the whole source of the current function (or the whole module)."""
        lines = self.core.source_lines
        current = self._current_line()
        first, last = 1, len(lines)
        state = self.core.state
        if state.function and state.function != "<module>" and current:
            first, last = _function_span(self.core.program.source if self.core.program else "", current)
        self._print_lines(first, last, current)
        return False

    do_ll = do_longlist

    def _current_line(self) -> int | None:
        state = self.core.state
        return state.line if state.event != "exit" else None

    def _print_lines(self, first: int, last: int, current: int | None) -> None:
        lines = self.core.source_lines
        bp_lines = self.core.breakpoints.active_lines()
        for n in range(first, last + 1):
            mark = "B" if n in bp_lines else " "
            arrow = "->" if n == current else "  "
            self.say(f"{n:>4} {mark}{arrow}\t{lines[n - 1]}")

    def do_where(self, arg: str) -> bool:
        """w(here) / bt: print the stack, the most recent frame at the bottom (marked with >)."""
        if self.core.exited:
            self.error("The program has exited: there is no stack.")
            return False
        path = self.core.program.path if self.core.program else "<program>"
        lines = self.core.source_lines
        for frame in reversed(self.core.frames()):
            marker = ">" if frame.id == self.frame_id else " "
            self.say(f"{marker} {path}({frame.line}){frame.name}()")
            if 0 < frame.line <= len(lines):
                self.say(f"-> {lines[frame.line - 1].strip()}")
        return False

    do_w = do_bt = do_where

    def do_args(self, arg: str) -> bool:
        """a(rgs) / locals: print the current frame's variables (with the model's confidence, if any)."""
        if self.core.exited:
            self.error("The program has exited: there are no variables.")
            return False
        state = self.core.state
        if self.frame_id != 1:
            caller = self._selected_caller()
            if caller is None:
                return False
            for name, value in caller.locals.items():
                self.say(f"{name} = {value}")
            if not caller.locals:
                self.say("(no variables)")
            return False
        shown = self.core.display_locals()
        if not shown:
            self.say("(no variables)")
        for name, value in shown.items():
            conf = ""
            if state.confidence and name in state.confidence:
                conf = f"   (p={state.confidence[name]:.2f})"
            self.say(f"{name} = {value}{conf}")
        return False

    do_a = do_locals = do_args

    def _selected_caller(self) -> CallerFrame | None:
        """The variables of the frame `up` selected; None, and an error said, when the engine does not
        know them."""
        caller = self.core.caller_frame(self.frame_id)
        if caller is None:
            self.error("only the innermost frame's variables are known in this state")
        return caller

    def _display_text(self, expression: str) -> str:
        try:
            return _show(self.core.evaluate(expression))
        except CoreError as exc:
            return f"** {exc} **"

    def do_display(self, arg: str) -> bool:
        """display [EXPR]: show EXPR's value now and at every stop where it changed (no argument: list
        the display expressions)."""
        expression = arg.strip()
        if not expression:
            self.say("Currently displaying:" if self.displays else "No expression is being displayed")
            for item, text in self.displays.items():
                self.say(f"{item}: {text}")
            return False
        text = self._display_text(expression) if not self.core.exited else "** the program has exited **"
        self.displays[expression] = text
        self.say(f"display {expression}: {text}")
        return False

    def do_undisplay(self, arg: str) -> bool:
        """undisplay [EXPR]: stop displaying EXPR (no argument: all display expressions)."""
        expression = arg.strip()
        if not expression:
            self.displays.clear()
        elif self.displays.pop(expression, None) is None:
            self.error(f"not displaying {expression}")
        return False

    def _print_value(self, command: str, arg: str, text: Callable[[Any], str]) -> bool:
        """Print what `text` makes of the value of the expression `arg` over the current variables (the
        program is never run); `usage: COMMAND EXPR` without one."""
        if not arg.strip():
            self.error(f"usage: {command} EXPR")
            return False
        self.say(text(self.core.evaluate(arg, self.frame_id)))
        return False

    def do_p(self, arg: str) -> bool:
        """p EXPR: print the value of an expression over the current variables (the program is never run)."""
        return self._print_value("p", arg, _show)

    def do_pp(self, arg: str) -> bool:
        """pp EXPR: pretty-print the value of an expression."""
        return self._print_value("pp", arg, lambda value: pprint.pformat(value, width=80))

    def do_jump(self, arg: str) -> bool:
        """j(ump) LINE: continue at LINE of the current function; the lines between are not run."""
        if self.core.exited:
            self.error("The program has exited; use 'back', 'rc', 'restart' or 'q'.")
            return False
        try:
            line = int(arg)
        except ValueError:
            self.error("The 'jump' command requires a line number")
            return False
        self.show_stop(self.core.goto(line))
        return False

    do_j = do_jump

    def do_up(self, arg: str) -> bool:
        """u(p) [COUNT]: select an older frame (the caller) for p, pp, a and expressions."""
        return self._move(arg, +1)

    def do_down(self, arg: str) -> bool:
        """d(own) [COUNT]: select a newer frame."""
        return self._move(arg, -1)

    do_u, do_d = do_up, do_down

    def _move(self, arg: str, direction: int) -> bool:
        if self.core.exited:
            self.error("The program has exited: there is no stack.")
            return False
        try:
            count = int(arg) if arg.strip() else 1
        except ValueError:
            self.error(f"Invalid frame count ({arg.strip()})")
            return False
        frames = self.core.frames()
        target = self.frame_id + direction * count
        if target > len(frames):
            if self.frame_id == len(frames):
                self.error("Oldest frame")
                return False
            target = len(frames)
        if target < 1:
            if self.frame_id == 1:
                self.error("Newest frame")
                return False
            target = 1
        self.frame_id = target
        frame = frames[target - 1]
        path = self.core.program.path if self.core.program else "<program>"
        lines = self.core.source_lines
        self.say(f"> {path}({frame.line}){frame.name}()")
        if 0 < frame.line <= len(lines):
            self.say(f"-> {lines[frame.line - 1].strip()}")
        return False

    def do_set(self, arg: str) -> bool:
        """set NAME = VALUE (also: !NAME = VALUE): change a variable of the current frame; later states
        are computed (or predicted) from the new value."""
        return self._bang(arg)

    def _bang(self, text: str) -> bool:
        name, eq, value = text.partition("=")
        name = name.strip()
        if not eq or not name.isidentifier() or not value.strip() or value.startswith("="):
            self.error("only assignments are supported here: NAME = VALUE")
            return False
        new = self.core.set_variable(name, value.strip())
        self.say(f"{name} = {new}")
        return False

    def do_infer(self, arg: str) -> bool:
        """infer FUNCTION VALUE: which arguments make the program's top-level FUNCTION return VALUE (a
        Python literal), as the model infers them: inverse jumps propose, predicted runs confirm; nothing
        runs. The session stays where it is."""
        from dap_server.core import infer_request, inference_lines, inference_verdict

        asked = infer_request(f"infer {arg}")
        if asked is None:
            self.error("Usage: infer FUNCTION VALUE, e.g. infer longest 'debugger'")
            return False
        self.say(f"Inferring the arguments of {asked[0]} (up to {self.infer_seconds:g} s; Ctrl-C cancels)...")
        status = _StatusLine(self.out) if _is_terminal(self.out) else None
        try:
            result = self.core.infer(*asked, seconds=self.infer_seconds, cancel=self._cancel,
                                     on_checked=status.checked if status else None)
        except CommandCancelled:
            self.say("Inference cancelled.")
            return False
        finally:
            if status is not None:
                status.clear()
        for line in inference_lines(result):
            self.say(f"  {line}")
        self.say(inference_verdict(result))
        return False

    def do_whatis(self, arg: str) -> bool:
        """whatis EXPR: print the type of an expression's value (Function f, Class C, <class 'int'>)."""
        return self._print_value("whatis", arg, _type_text)

    def do_retval(self, arg: str) -> bool:
        """retval / rv: print the value the current function returns (at its return event)."""
        state = self.core.state
        if self.frame_id != 1 or state.event != "return" or state.value is None:
            self.error("Not yet returned!")
            return False
        self.say(state.value)
        return False

    do_rv = do_retval

    def do_source(self, arg: str) -> bool:
        """source NAME: show the source of the program's function or class NAME (Class.method too)."""
        name = arg.strip()
        span = _definition_span(self.core.program.source if self.core.program else "", name) if name else None
        if span is None:
            self.error("could not get source code" if name else "usage: source NAME")
            return False
        self._print_lines(span[0], span[1], self._current_line())
        return False

    def do_alias(self, arg: str) -> bool:
        """alias [NAME [COMMAND]]: make NAME run COMMAND (%1, %2, ... its arguments, %* all of them);
        alias NAME: show it; no argument: list the aliases."""
        args = arg.split()
        if not args:
            for name in sorted(self.aliases):
                self.say(f"{name} = {self.aliases[name]}")
            return False
        if len(args) == 1:
            if args[0] in self.aliases:
                self.say(f"{args[0]} = {self.aliases[args[0]]}")
            else:
                self.error(f"Unknown alias '{args[0]}'")
            return False
        self.aliases[args[0]] = arg.strip()[len(args[0]):].strip()
        return False

    def do_unalias(self, arg: str) -> bool:
        """unalias NAME: delete the alias NAME."""
        args = arg.split()
        if not args:
            self.error("usage: unalias NAME")
        elif self.aliases.pop(args[0], None) is None:
            self.error(f"Unknown alias '{args[0]}'")
        return False

    def do_commands(self, arg: str) -> bool:
        """commands [N]: the commands to run when breakpoint N (default: the last one set) stops the
        program, one a line, ended by `end`. `silent` leaves out the location; a command that resumes
        (continue, step, next, return, until, jump, quit) ends the list and runs after the others."""
        numbers = [b.id for b in self.core.breakpoints.items if b.id is not None]
        text = arg.strip()
        if text and not text.isdigit():
            self.error(f"Usage: commands [bnum]  ({text!r} is not a breakpoint number)")
            return False
        number = int(text) if text else (max(numbers) if numbers else None)
        if number is None or number not in numbers:
            self.error(f"Breakpoint {number} does not exist" if number is not None else "No breakpoints")
            return False
        lines: list[str] = []
        while True:
            if self.cmdqueue:
                line = self.cmdqueue.pop(0)
            else:
                line = self._read_line("(com) ")
                if not line:
                    break
            line = line.strip()
            if not line:
                continue
            if line == "end":
                break
            lines.append(line)
            if line.split()[0] in RESUMING:
                break
        if lines:
            self.bp_commands[number] = lines
        else:
            self.bp_commands.pop(number, None)
        return False

    def _run_bp_commands(self, numbers: list[int]) -> bool:
        """Run the commands of the breakpoints that stopped the program; True when one says `silent`.
        A resuming command among them runs after the location is shown (self._resume)."""
        silent = False
        for number in numbers:
            for line in self.bp_commands.get(number, []):
                word = line.split()[0]
                if word == "silent":
                    silent = True
                elif word in RESUMING:
                    self._resume = line
                    return silent
                else:
                    self._one(self.precmd_alias(line))
        return silent

    def do_interact(self, arg: str) -> bool:
        """interact: a Python prompt over the current frame's variables, ended by Ctrl-D, exit() or quit().
        Expressions are evaluated as p evaluates them (the program's code never runs). On the oracle
        engine an assignment binds a name of this prompt only (as pdb's interact: the program's variables
        keep their values); on the neural engine the prompt is read-only."""
        if self.core.exited:
            self.error("The program has exited: there are no variables.")
            return False
        from dap_server.evaluator import EvalError, Evaluator

        if self.frame_id != 1:
            caller = self._selected_caller()
            if caller is None:
                return False
            raw, attributes = dict(caller.locals), caller.attributes
        else:
            raw, attributes = self.core.eval_names(), self.core.object_attributes()
        read_only = self.core.engine_name != "oracle"
        own: dict[str, str] = {}
        self.say("*interactive*" + ("  (read-only: the values are the model's predictions)" if read_only else ""))
        while True:
            line = self._read_line(">>> ")
            if not line:
                self.say("")
                break
            text = line.strip()
            if not text:
                continue
            if text in ("exit()", "quit()", "exit", "quit"):
                break
            target, value_text = _assignment(text)
            try:
                if target is not None and value_text is not None:
                    if read_only:
                        self.error("read-only: on the neural engine interact evaluates expressions, it binds no names")
                        continue
                    value = Evaluator({**raw, **own}, attributes=attributes).evaluate(value_text)
                    own[target] = _show(value)
                    continue
                value = Evaluator({**raw, **own}, attributes=attributes).evaluate(text)
            except EvalError as exc:
                self.error(str(exc))
                continue
            if value is not None:
                self.say(_show(value))
        self.say("now exiting InteractiveConsole...")
        return False

    def do_help(self, arg: str) -> bool | None:
        """h(elp) [COMMAND]: list the commands, or show one command's help."""
        if arg.strip() in _ALIASES:
            arg = _ALIASES[arg.strip()]
        if not arg.strip():
            self.say("Commands:")
            for names, text in _SUMMARY:
                self.say(f"  {names:<22} {text}")
            self.say("Anything else is evaluated as an expression over the current variables.")
            return None
        return super().do_help(arg)

    do_h = do_help


_ALIASES = {"s": "step", "n": "next", "r": "return", "c": "continue", "cont": "continue", "b": "break",
            "cl": "clear", "l": "list", "ll": "longlist", "w": "where", "bt": "where", "q": "quit",
            "exit": "quit", "a": "args", "locals": "args", "h": "help", "bs": "back", "run": "restart", "u": "up", "d": "down", "j": "jump",
            "rv": "retval"}
# Commands that make the program go on: they end a breakpoint's `commands` list, as in pdb.
RESUMING = {"c", "cont", "continue", "s", "step", "n", "next", "r", "return", "unt", "until", "j", "jump", "q", "quit",
            "exit", "back", "bs", "rc", "restart", "run"}
MAX_ALIAS_DEPTH = 20

_SUMMARY = [
    ("s(tep)", "step into: next line, entering calls"),
    ("n(ext)", "step over: next line in this function"),
    ("r(eturn)", "run until the current function returns"),
    ("c(ont(inue))", "run to the next breakpoint or the end"),
    ("unt(il) [LINE]", "run to a line below this one (or LINE) in this function"),
    ("back", "step back over the previous line (inverse next)"),
    ("rc", "reverse continue: back to the previous breakpoint or the start"),
    ("b(reak) [LINE[, COND]]", "set a breakpoint (no argument: list them)"),
    ("tbreak [LINE]", "a breakpoint removed when first hit"),
    ("cl(ear) [N | :LINE]", "clear breakpoint N, or those at LINE (no argument: all)"),
    ("condition N [COND]", "change breakpoint N's condition"),
    ("disable / enable N", "keep breakpoint N but let it not fire / fire again"),
    ("ignore N [COUNT]", "breakpoint N does not stop the next COUNT times"),
    ("display [EXPR]", "show EXPR at every stop where it changed (undisplay [EXPR]: stop)"),
    ("l(ist) [FIRST[, LAST]]", "show source around the current line (-> current, B breakpoint)"),
    ("ll", "show the whole current function"),
    ("p EXPR / pp EXPR", "print / pretty-print an expression's value"),
    ("whatis EXPR", "print the type of an expression's value"),
    ("retval / rv", "print the current function's return value (at its return)"),
    ("source NAME", "show the source of a function or class of the program"),
    ("interact", "a Python prompt over the variables (the program never runs)"),
    ("alias / unalias", "name a command line (%1 %2 ... %*) / drop the name"),
    ("commands [N]", "commands run when breakpoint N stops the program (end: end)"),
    ("a(rgs)", "show the current frame's variables"),
    ("set NAME = VALUE", "change a variable (also !NAME = VALUE)"),
    ("w(here) / bt", "show the call stack (> marks the selected frame)"),
    ("j(ump) LINE", "continue at LINE of this function, skipping the lines between"),
    ("u(p) / d(own) [N]", "select the caller / back down (callers' values: oracle engine only)"),
    ("infer FUNCTION VALUE", "arguments that make FUNCTION return VALUE, as the model infers them"),
    ("restart", "start the program again"),
    ("q(uit)", "quit"),
]


class _StatusLine:
    """One line, rewritten in place, that says how far an inference has got (terminals only)."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.count = 0

    def checked(self, proposal: Any) -> None:
        self.count += 1
        verdict = "returns it" if proposal.confirmed else f"-> {proposal.predicted_return or proposal.problem}"
        text = f"  {self.count} checked; last: ({proposal.arguments}) {verdict}"
        width = shutil.get_terminal_size().columns - 1
        self.out.write("\r\033[K" + (text if len(text) <= width else text[: width - 3] + "..."))
        self.out.flush()

    def clear(self) -> None:
        if self.count:
            self.out.write("\r\033[K")
            self.out.flush()


def _is_terminal(out: IO[str]) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False


def _show(value: Any) -> str:
    from dap_server.values import show

    return show(value)


def _type_text(value: Any) -> str:
    """What pdb's whatis says of a value: Function f, Method m, Class M.C, or its type."""
    from dap_server.values import Opaque, Record

    if isinstance(value, Opaque):
        text = value.text
        for pattern, kind in ((r"<function (?:[\w.]+\.)?(\w+)", "Function"), (r"<bound method (?:[\w.]+\.)?(\w+)", "Method"),
                              (r"<class '([\w.]+)'>", "Class"), (r"<class ([\w.]+)>", "Class")):
            if (m := re.match(pattern, text)) is not None:
                name = m.group(1)
                return f"{kind} {name if '.' in name or kind != 'Class' else '__main__.' + name}"
        if (m := re.match(r"<([\w.]+) object", text)) is not None:
            return f"<class '{m.group(1)}'>"
        return "<class 'object'>"
    if isinstance(value, Record):
        return f"<class '__main__.{value.name}'>"
    return str(type(value))


def _definition_span(source: str, name: str) -> tuple[int, int] | None:
    """The lines (decorators included) of the function or class `name` (`C.method` for a member)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    path = name.split(".")
    scopes: list[ast.AST] = [tree]
    found: ast.AST | None = None
    for part in path:
        found = None
        for scope in scopes:
            for node in ast.walk(scope):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == part:
                    found = node
                    break
            if found is not None:
                break
        if found is None:
            return None
        scopes = [found]
    assert isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    first = min([found.lineno, *(d.lineno for d in found.decorator_list)])
    return first, found.end_lineno or found.lineno


def _assignment(text: str) -> tuple[str | None, str | None]:
    """`NAME = EXPR` -> (NAME, EXPR); anything else (None, None)."""
    m = re.match(r"^([A-Za-z_]\w*)\s*=(?!=)\s*(.+)$", text)
    return (m.group(1), m.group(2)) if m else (None, None)


def _parse_line(text: str) -> int | None:
    text = text.strip()
    if ":" in text:  # FILE:LINE, for pdb habits: the file can only be the program
        text = text.rsplit(":", 1)[1]
    return int(text) if text.isdigit() else None


def _first_body_line(source: str, name: str) -> int | None:
    """The first line of the body of the program's function `name` (pdb's `break FUNCTION`), after a
    docstring; the last definition wins, as at run time."""
    import ast

    try:
        tree = safe_ast.parse(source)
    except SyntaxError:
        return None
    found: int | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            body = node.body
            if len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]
            found = body[0].lineno
    return found


def _function_span(source: str, line: int) -> tuple[int, int]:
    import ast

    try:
        tree = safe_ast.parse(source)
    except SyntaxError:
        return 1, len(source.splitlines())
    best: tuple[int, int] | None = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            end = node.end_lineno or node.lineno
            if start <= line <= end and (best is None or start >= best[0]):
                best = (start, end)
    return best or (1, len(source.splitlines()))


def run_terminal(program: str, entry: str | None, engine: str, model: str | None, worker: str | None,
                 stdin: IO[str] = sys.stdin, stdout: IO[str] = sys.stdout,
                 engine_factory: EngineFactory | None = None, argv: list[str] | None = None,
                 max_events: int | None = None, follow_steps: int | None = None) -> int:
    """Debug `program` interactively, pdb style. Returns the exit status (0; 2 when it cannot start)."""
    core = DebugCore(engine_factory)
    try:
        stop = core.launch(program, entry, engine, model, worker, argv=argv, max_events=max_events,
                           follow_steps=follow_steps)
    except CoreError as exc:
        stdout.write(f"ndb debug: {exc}\n")
        stdout.flush()
        return 2
    debugger = TerminalDebugger(core, stdin, stdout)
    try:
        debugger.show_stop(stop)
        debugger.cmdloop()
    except KeyboardInterrupt:
        stdout.write("\n")
    finally:
        core.close()
    return 0
