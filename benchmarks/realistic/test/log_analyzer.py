"""A web-server log analyzer: regex parsing, a generator pipeline, Counter, defaultdict and OrderedDict."""
# entry: analyze_log(None)
import json
import re
from collections import Counter, defaultdict, OrderedDict

LOG_TEXT = """\
10.0.0.1 - [12:00:01] "GET /index.html HTTP/1.1" 200 5120
10.0.0.2 - [12:00:03] "GET /api/users HTTP/1.1" 200 812
10.0.0.1 - [12:00:04] "POST /api/login HTTP/1.1" 401 64
this line is garbage
10.0.0.3 - [12:01:10] "GET /index.html HTTP/1.1" 304 0
10.0.0.1 - [12:01:15] "POST /api/login HTTP/1.1" 401 64
10.0.0.1 - [12:01:16] "POST /api/login HTTP/1.1" 401 64
10.0.0.2 - [12:02:00] "GET /api/users/7 HTTP/1.1" 500 128
10.0.0.4 - [12:02:30] "GET /static/app.js HTTP/1.1" 200 20480
10.0.0.3 - [12:03:05] "DELETE /api/users/7 HTTP/1.1" 403 32
"""
LINE_RE = re.compile(r'^(\S+) - \[(\d\d):(\d\d):\d\d\] "(\w+) (\S+) [^"]+" (\d{3}) (\d+)$')
FAILED_LOGIN_ALERT = 3


def parse_lines(lines, skipped):
    for number, line in enumerate(lines, start=1):
        match = LINE_RE.match(line)
        if match is None:
            skipped.append(number)
            continue
        ip, hour, minute, method, path, status, size = match.groups()
        yield {"ip": ip, "minute": f"{hour}:{minute}", "method": method,
               "path": path, "status": int(status), "size": int(size)}


def normalise_paths(entries):
    for entry in entries:
        entry["route"] = re.sub(r"/\d+", "/:id", entry["path"])
        yield entry


def analyze_log(text=None):
    if not isinstance(text, str):
        text = LOG_TEXT
    skipped = []
    statuses = Counter()
    bytes_by_ip = defaultdict(int)
    failed_logins = defaultdict(int)
    per_minute = OrderedDict()
    routes = Counter()
    for entry in normalise_paths(parse_lines(text.splitlines(), skipped)):
        statuses[entry["status"] // 100 * 100] += 1
        bytes_by_ip[entry["ip"]] += entry["size"]
        routes[(entry["method"], entry["route"])] += 1
        per_minute[entry["minute"]] = per_minute.get(entry["minute"], 0) + 1
        if entry["route"] == "/api/login" and entry["status"] == 401:
            failed_logins[entry["ip"]] += 1
    alerts = [ip for ip, count in failed_logins.items() if count >= FAILED_LOGIN_ALERT]
    busiest = max(per_minute.items(), key=lambda kv: kv[1])
    print(f"status classes: {dict(sorted(statuses.items()))}")
    print(f"busiest minute {busiest[0]} with {busiest[1]} requests; skipped lines {skipped}")
    for (method, route), count in routes.most_common(3):
        print(f"{count:>3} {method} {route}")
    top_ip = max(bytes_by_ip, key=bytes_by_ip.get)
    summary = {"alerts": alerts, "top_ip": top_ip, "minutes": list(per_minute)}
    return json.dumps(summary, indent=None, separators=(",", ":"))
