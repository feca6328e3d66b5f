import os, sys
found = {}
for path in (os.path.join(sys.argv[1], "secret.txt"), "/etc/shadow", "/etc/passwd", "/root/.bash_history",
             os.path.expanduser("~/.ssh/id_rsa"), "/work/main/README.md", "/proc/1/environ"):
    try:
        with open(path, "rb") as fh:
            found[path] = fh.read(64)
    except OSError as exc:
        found[path] = type(exc).__name__
outcome = found
