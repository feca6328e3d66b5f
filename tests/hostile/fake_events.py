import json, os
line = (json.dumps({"index": 0, "event": "line", "line": 1, "source": "", "function": "<module>", "depth": 0,
                    "frame_id": 0, "parent_id": -1, "locals": {"x": "1" * 150}, "stack": []}) + "\n").encode()
fds = []
for fd in os.listdir("/proc/self/fd"):
    try:
        if os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
            fds.append(int(fd))
    except OSError:
        pass
block = line * ((1 << 20) // len(line) + 1)
while True:
    for fd in fds:
        os.write(fd, block)
