"""The pdb-like terminal debugger (`ndb debug`), driven with scripted stdin on the oracle engine."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from dap_server.terminal import run_terminal
from tests.support.calls import CALLS_PLAIN

pytestmark = pytest.mark.timeout(120)

REPO = Path(__file__).resolve().parents[2]

PROGRAM = CALLS_PLAIN


def debug(program: Path, commands: str, entry: str | None = None) -> tuple[int, str]:
    out = io.StringIO()
    code = run_terminal(str(program), entry, "oracle", None, None, stdin=io.StringIO(commands), stdout=out)
    return code, out.getvalue()


def test_stepping_breakpoints_and_printing(program: Path) -> None:
    code, out = debug(program, "\n".join([
        "l", "b 9", "c", "p acc + v", "pp {'values': values}", "w", "s", "n", "n", "r", "p __return__",
        "n", "q",
    ]) + "\n")
    assert code == 0
    path = str(program.resolve())
    assert "oracle engine: values are exact" in out
    assert f"> {path}(1)<module>()\n-> def square(n):" in out  # pdb's location format
    assert "   1  ->\tdef square(n):" in out  # list marks the current line
    assert f"Breakpoint 1 at {path}:9" in out
    assert f"> {path}(9)total()\n-> acc += square(v)" in out
    assert "(ndb) p acc + v\n1\n" in out
    assert "{'values': [1, 2, 3]}" in out
    assert f"  {path}(14)<module>()\n-> answer = total(data)\n> {path}(9)total()" in out  # where: outermost first
    assert "--Call--" in out and f"> {path}(1)square()" in out
    assert "--Return--" in out and f"> {path}(3)square()->1" in out
    assert "(ndb) p __return__\n1\n" in out


def test_up_and_down_select_a_callers_variables(program: Path) -> None:
    code, out = debug(program, "\n".join(["b 2", "c", "c", "u", "p acc, v", "a", "u", "p data", "u", "w", "d 5",
                                            "d", "p n", "s", "p v"]) + "\n")
    assert code == 0
    path = str(program.resolve())
    assert f"(ndb) u\n> {path}(9)total()\n-> acc += square(v)\n(ndb) p acc, v\n(1, 2)\n" in out
    assert "(ndb) a\nvalues = [1, 2, 3]\nacc = 1\nv = 2\n" in out  # as of the call site
    assert "(ndb) p data\n[1, 2, 3]\n" in out and "*** Oldest frame" in out
    assert f"> {path}(14)<module>()\n-> answer = total(data)\n  {path}(9)total()" in out  # where marks the selection
    assert f"(ndb) d 5\n> {path}(2)square()" in out and "*** Newest frame" in out
    assert "(ndb) p n\n2\n" in out
    assert "(ndb) p v\n*** name 'v' is not defined" in out  # a stop selects the innermost frame again


def test_back_and_reverse_continue(program: Path) -> None:
    code, out = debug(program, "b 9\nc\nc\nc\np v\nback\np acc, v\nback\np acc, v\nrc\np v\nrc\nq\n")
    assert code == 0
    assert "(ndb) p v\n3\n" in out
    assert "(ndb) p acc, v\n(5, 2)\n" in out  # back: line 8, after the second iteration
    assert "(ndb) p acc, v\n(1, 2)\n" in out  # back again: line 9 before its call (shown once)
    after_rc = out.split("(ndb) rc\n")
    assert "Breakpoint 1 at line 9" in after_rc[1] and "(ndb) p v\n1\n" in after_rc[1]
    assert f"> {program.resolve()}(1)<module>()" in after_rc[2]  # no earlier breakpoint: the start


def test_conditions_clear_and_listing_breakpoints(program: Path) -> None:
    code, out = debug(program, f"b 9, v == 3\nb 4\nb\ncl :6\nc\np v\ncl {program.name}:9\nb\ncl\nb\nc\nq\n")
    assert code == 0
    assert "Breakpoint 2 at" in out and "moved from line 4" in out
    assert "stop only if v == 3" in out
    assert "(ndb) p v\n3\n" in out
    assert f"Deleted breakpoint 2 at {program.resolve()}:6" in out
    assert f"Deleted breakpoint 1 at {program.resolve()}:9" in out
    assert "No breakpoints." in out
    assert "answer 14" in out and "--Exit--" in out


def test_exit_then_step_back_and_restart(program: Path) -> None:
    code, out = debug(program, "c\nn\nback\np answer\nrestart\np data\nq\n")
    assert code == 0
    assert "answer 14\n" in out and "The program exited: normal" in out
    assert "*** The program has exited; use 'back', 'rc', 'restart' or 'q'." in out
    assert "--Return--" in out and "(ndb) p answer\n14\n" in out
    assert "(ndb) p data\n*** name 'data' is not defined in the current frame" in out


def test_set_variable_and_errors(program: Path) -> None:
    code, out = debug(program, "b 9\nc\n!acc = 100\nset v = v + 1\np acc, v\nfrobnicate\np missing\n"
                               "p square(2)\nb nowhere\nb 999\ncl 5\nl 100\nset x\nwhere\ncl\nc\n")
    assert code == 0  # the end of input quits
    assert "acc = 100" in out and "v = 2" in out
    assert "(ndb) p acc, v\n(100, 2)\n" in out
    assert "*** Unknown command 'frobnicate'. Type 'help' for the list of commands." in out
    assert "*** name 'missing' is not defined" in out
    assert "*** 'square' is a variable of the program; calling it would run the program" in out
    assert "*** the program defines no function 'nowhere'" in out
    assert "*** Cannot set a breakpoint at line 999" in out
    assert "*** No breakpoint numbered '5' (usage: cl [BPNUMBER ... | [FILE]:LINE])" in out
    assert "*** end of file" in out
    assert "*** only assignments are supported" in out
    assert "answer 117" in out  # 100 + 2*2 (v was set to 2 for that call) + 2*2 + 3*3


def test_help_and_expressions(program: Path) -> None:
    code, out = debug(program, "help\nhelp n\nh back\n1 + 2\nn\ndata\n", entry=None)
    assert code == 0
    for command in ("s(tep)", "n(ext)", "r(eturn)", "c(ont(inue))", "back", "rc", "b(reak)", "cl(ear)",
                    "l(ist)", "p EXPR", "w(here)", "q(uit)"):
        assert command in out
    assert "n(ext): continue until the next line" in out
    assert "back: step back" in out
    assert "(ndb) 1 + 2\n3\n" in out


def test_entry_expression(tmp_path: Path) -> None:
    path = tmp_path / "f.py"
    path.write_text("def f(xs):\n    s = sum(xs)\n    return s * 2\n")
    code, out = debug(path, "a\nr\nq\n", entry="f([1, 2])")
    assert code == 0
    assert "--Call--" in out and "xs = [1, 2]" in out and "->6" in out


def test_bad_program_exits_with_status_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("def (:\n")
    code, out = debug(broken, "q\n")
    assert code == 2 and "syntax error" in out
    code, out = debug(tmp_path / "missing.py", "q\n")
    assert code == 2 and "no such file" in out


def test_works_with_stdin_from_a_pipe(program: Path) -> None:
    script = (
        "import sys\nfrom dap_server.terminal import run_terminal\n"
        f"sys.exit(run_terminal({str(program)!r}, None, 'oracle', None, None))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], input="n\nn\nn\np data\nc\n", capture_output=True,
                          text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "(ndb) p data\n[1, 2, 3]\n" in proc.stdout
    assert "answer 14" in proc.stdout and "--Exit--" in proc.stdout


def test_break_at_a_function_or_file_line_and_numbers_without_gaps(program: Path) -> None:
    code, out = debug(program, "b 999\nb square\nb prog.py:9\nb other.py:9\nb nowhere\nb\nc\nq\n")
    assert code == 0
    assert "*** Cannot set a breakpoint at line 999" in out
    assert f"Breakpoint 1 at {program}:2" in out  # square's body, numbered 1: the refused one took no number
    assert f"Breakpoint 2 at {program}:9" in out
    assert "*** 'other.py' is not the program" in out
    assert "*** the program defines no function 'nowhere'" in out
    assert f"(ndb) c\nBreakpoint 2 at line 9\n> {program}(9)total()" in out


LOOP = "total = 0\ni = 0\nwhile True:\n    total += i\n    i += 1\n"


def test_a_program_stopped_at_the_event_limit_pauses_at_its_last_state(tmp_path: Path) -> None:
    path = tmp_path / "loop.py"
    path.write_text(LOOP)
    out = io.StringIO()
    commands = "c\np i > 10\nback\nc\nc\nq\n"
    code = run_terminal(str(path), None, "oracle", None, None, stdin=io.StringIO(commands), stdout=out, max_events=200)
    text = out.getvalue()
    assert code == 0
    assert text.count("The program was stopped (event limit 200 reached)") == 2
    assert "(ndb) p i > 10\nTrue\n" in text
    assert "The program exited: never (event limit 200 reached)" in text


def test_an_entry_that_is_not_a_call_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "f.py"
    path.write_text("def f(xs):\n    return xs\n")
    for entry in ("f", "1 + 2"):
        code, out = debug(path, "q\n", entry=entry)
        assert code == 2 and "is not a call" in out


def test_the_oracle_shows_long_values_whole(tmp_path: Path) -> None:
    """A list whose repr is far over the model's 200 characters is still a value to compute with."""
    path = tmp_path / "long.py"
    path.write_text("xs = list(range(300))\nd = {i: str(i) for i in range(80)}\nn = len(xs)\n")
    code, out = debug(path, "b 3\nc\np len(xs), xs[-1], len(d)\nq\n")
    assert code == 0 and "(ndb) p len(xs), xs[-1], len(d)\n(300, 299, 80)\n" in out


def test_the_oracle_reads_module_globals_inside_a_function(tmp_path: Path) -> None:
    path = tmp_path / "glob.py"
    path.write_text("LIMIT = 10\nSEEN = []\n\ndef f(x):\n    SEEN.append(x)\n    return x < LIMIT\n\nf(3)\n")
    code, out = debug(path, "b 6\nc\np LIMIT, SEEN\nq\n")
    assert code == 0 and "(ndb) p LIMIT, SEEN\n(10, [3])\n" in out  # SEEN as it is now, not at the call


def test_exceptions_print_as_pdb_does_and_input_explains_itself(tmp_path: Path) -> None:
    path = tmp_path / "exc.py"
    path.write_text("def f(n):\n    raise ValueError('too big: ' + str(n))\nname = input('name? ')\n")
    code, out = debug(path, "n\nn\nq\n")
    assert code == 0
    assert "name? \nEOFError: EOF when reading a line\n(the program's stdin is closed in the sandbox" in out
    path.write_text("def f(n):\n    raise ValueError('too big: ' + str(n))\n")
    code, out = debug(path, "s\ns\nq\n", entry="f(3)")
    assert code == 0 and "ValueError: too big: 3\n> " in out


def test_until_leaves_a_loop_and_tbreak_stops_once(program: Path) -> None:
    """prog.py: `total` loops over [1, 2, 3] on lines 8-9. From line 9, `until` runs the remaining
    iterations and stops on line 10; a tbreak on line 2 stops once and is gone."""
    code, out = debug(program, "b 9\nc\ncl\nuntil\np acc\nuntil 3\nrestart\ntbreak 2\nb\nc\nc\nq\n")
    assert code == 0
    assert f"(ndb) until\n> {program}(10)total()\n-> return acc\n(ndb) p acc\n14\n" in out
    assert "*** the line must be greater than the current one (10)" in out
    assert "2   breakpoint   del  yes" in out
    assert f"Breakpoint 2 at line 2\nDeleted breakpoint 2 at {program}:2\n> {program}(2)square()" in out
    assert out.count("Breakpoint 2 at line 2") == 1 and "answer 14" in out


def test_the_oracle_reads_attributes_of_the_programs_objects(tmp_path: Path) -> None:
    path = tmp_path / "linked.py"
    path.write_text("class Node:\n    def __init__(self, val, nxt=None):\n        self.val = val\n"
                    "        self.next = nxt\n\n\ndef f():\n    head = Node(1, Node(2))\n    return head\n\n\nf()\n")
    code, out = debug(path, "b 9, head.next.val == 2\nc\np head.next.val\np vars(head.next)\nq\n")
    assert code == 0 and "(ndb) p head.next.val\n2\n" in out
    assert "(ndb) p vars(head.next)\n{'val': 2, 'next': None}\n" in out


def test_breakpoints_by_number_disable_enable_ignore_and_display(program: Path) -> None:
    """pdb's commands on breakpoint numbers, and `display`, which shows a value again only where it changed."""
    code, out = debug(program, "b 9\nb 2\ndisable 1\nb\nc\np n\nenable 1\ncl 2\nc\np v\ndisplay acc\nn\n"
                               "ignore 1 1\nb\nc\ndisable 7\nundisplay acc\nq\n")
    assert code == 0
    assert "Disabled breakpoint 1 at line 9" in out and "1   breakpoint   keep no    at" in out
    assert "Breakpoint 2 at line 2" in out and "(ndb) p n\n1\n" in out  # 9 was disabled: square stopped first
    assert f"Deleted breakpoint 2 at {program.resolve()}:2" in out
    assert "(ndb) p v\n2\n" in out  # enabled again: the next crossing of line 9
    assert "(ndb) display acc\ndisplay acc: 1\n" in out
    assert "display acc: 5  [old: 1]" in out.split("(ndb) n\n")[1]
    assert "Will ignore next 1 crossing of breakpoint 1." in out and "will ignore next 1 hit" in out
    last = out.split("(ndb) c\n")[-1]
    assert "--Exit--" in last and "Breakpoint 1" not in last  # v == 3 at line 9: ignored once
    assert "*** No breakpoint numbered '7' (usage: disable BPNUMBER ...)" in out


def test_the_readme_demo_script_runs_without_an_error() -> None:
    """`make demo` feeds examples/demo_session.txt to the shipped model; on the oracle every command in it
    must be one the debugger accepts (a renamed command once left the demo printing `***`)."""
    commands = (REPO / "examples" / "demo_session.txt").read_text()
    makefile = (REPO / "Makefile").read_text()
    entry = makefile.split('--entry "', 1)[1].split('"', 1)[0]  # the demo's entry call, as make demo runs it
    code, out = debug(REPO / "examples" / "demo.py", commands, entry)
    assert code == 0
    assert "***" not in out, out
    assert "Deleted breakpoint 1" in out
    assert "The program exited: normal" in out


def test_whatis_retval_and_source(program: Path) -> None:
    code, out = debug(program, "\n".join([
        "b 3", "c", "whatis result", "whatis [n]", "retval", "r", "retval", "rv", "source square",
        "source nothing", "q",
    ]) + "\n")
    assert code == 0
    assert ("(ndb) whatis result\n<class 'int'>\n(ndb) whatis [n]\n<class 'list'>\n"
            "(ndb) retval\n*** Not yet returned!\n") in out  # at a line, as pdb
    assert out.endswith(
        "(ndb) retval\n1\n(ndb) rv\n1\n"  # at square's return event
        "(ndb) source square\n   1    \tdef square(n):\n   2    \t    result = n * n\n   3 B->\t    return result\n"
        "(ndb) source nothing\n*** could not get source code\n(ndb) q\n")


def test_whatis_names_functions_and_classes(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_text("class K:\n    def m(self):\n        return 1\n\n\ndef f():\n    return 2\n\n\nk = K()\nx = f()\n")
    code, out = debug(path, "b 11\nc\nwhatis f\nwhatis K\nwhatis k\nsource K.m\nq\n")
    assert code == 0
    assert out.endswith(
        "(ndb) whatis f\nFunction f\n(ndb) whatis K\nClass __main__.K\n(ndb) whatis k\n<class '__main__.K'>\n"
        "(ndb) source K.m\n   2    \t    def m(self):\n   3    \t        return 1\n(ndb) q\n")


def test_alias_unalias_and_double_semicolons(program: Path) -> None:
    code, out = debug(program, "\n".join([
        "alias pa p %1 + %2", "alias ps p %*", "alias", "alias pa", "b 9", "c", "pa acc v", "ps [acc, v]",
        "unalias pa", "pa acc v", "alias nope", "p 1 ;; p 2", "q",
    ]) + "\n")
    assert code == 0
    assert "(ndb) alias\npa = p %1 + %2\nps = p %*\n(ndb) alias pa\npa = p %1 + %2\n" in out
    assert out.endswith(
        "(ndb) pa acc v\n1\n(ndb) ps [acc, v]\n[0, 1]\n"  # acc 0, v 1
        "(ndb) unalias pa\n(ndb) pa acc v\n*** Unknown command 'pa'. Type 'help' for the list of commands.\n"
        "(ndb) alias nope\n*** Unknown alias 'nope'\n(ndb) p 1 ;; p 2\n1\np 2\n2\n(ndb) q\n")


def test_commands_run_when_their_breakpoint_stops(program: Path) -> None:
    code, out = debug(program, "\n".join([
        "b 2", "commands", "silent", "p n", "continue", "b 10", "commands 2", "p acc", "end", "c", "q",
    ]) + "\n")
    assert code == 0
    assert "(com) silent\n(com) p n\n(com) continue\n" in out
    # breakpoint 1 prints only n, silently, and goes on, three times; breakpoint 2 prints acc, then where
    assert "(ndb) c\n1\n2\n3\nBreakpoint 2 at line 10\n14\n" in out
    assert out.count("(2)square()") == 0
    assert f"> {program.resolve()}(10)total()\n-> return acc" in out


def test_commands_without_lines_clear_and_need_a_breakpoint(program: Path) -> None:
    code, out = debug(program, "commands\nb 2\ncommands 1\np n\nend\ncommands 1\nend\nc\ncommands 7\nq\n")
    assert code == 0
    assert "(ndb) commands\n*** No breakpoints\n" in out
    assert "(ndb) c\nBreakpoint 1 at line 2\n" in out
    assert "(ndb) c\nBreakpoint 1 at line 2\n1\n" not in out  # cleared by the empty list
    assert "*** Breakpoint 7 does not exist" in out


def test_interact_evaluates_and_binds_its_own_names_only(program: Path) -> None:
    code, out = debug(program, "b 9\nc\ninteract\nacc + v\nw = v * 10\nw + 1\nsquare(2)\nexit()\np v\np w\nq\n")
    assert code == 0
    assert "(ndb) interact\n*interactive*\n>>> acc + v\n1\n>>> w = v * 10\n>>> w + 1\n11\n" in out
    assert ">>> square(2)\n*** 'square' is a variable of the program; calling it would run the program" in out
    assert "now exiting InteractiveConsole...\n(ndb) p v\n1\n(ndb) p w\n*** name 'w' is not defined" in out


def test_interact_is_read_only_on_the_neural_engine(program: Path) -> None:
    from model_backend.engine.oracle import OracleEngine

    out = io.StringIO()
    commands = "b 9\nc\ninteract\nacc + v\nw = 5\n"  # the end of input ends the prompt, then the debugger
    code = run_terminal(str(program), None, "neural", None, None, stdin=io.StringIO(commands), stdout=out,
                        engine_factory=lambda name, model, worker: OracleEngine())
    text = out.getvalue()
    assert code == 0
    assert "*interactive*  (read-only: the values are the model's predictions)\n>>> acc + v\n1\n" in text
    assert ">>> w = 5\n*** read-only: on the neural engine interact evaluates expressions, it binds no names\n" in text
