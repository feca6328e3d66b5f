import gc, types
# Switch off the tracer's audit hook, as an attacker would: what is left is the operating system's isolation.
import sys
tampered = False
_trace = sys.gettrace()
sys.settrace(None)  # the search below would take many thousand events
for _obj in gc.get_objects():
    if isinstance(_obj, types.FunctionType) and _obj.__name__ == "hook" and "_FORBIDDEN_EVENTS" in _obj.__globals__:
        _obj.__globals__["_FORBIDDEN_EVENTS"] = ("no.such.event",)
        for _cell in _obj.__closure__ or ():
            if isinstance(_cell.cell_contents, str):
                _cell.cell_contents = ""
        tampered = True
sys.settrace(_trace)
del _obj, _trace
import os, signal, sys, time
pid = os.fork()
if pid == 0:
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    time.sleep(30)
    open(os.path.join(sys.argv[1], "leak"), "w").write("outlived")
    os._exit(0)
