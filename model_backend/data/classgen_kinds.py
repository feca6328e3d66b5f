"""The structured parts of `classgen` programs: recursive trees and graphs (`STRUCT_PARTS`), and the
declared kinds (`KIND_PARTS`): state machines, parsers, interpreters and simulations, each tagged with
its kind so that the program carries a `# kind: NAME` comment."""

from __future__ import annotations

from collections.abc import Callable

from model_backend.data.classgen_base import Gen, Part, fill, indent, record_class

# ---------------------------------------------------------------------------------------------------
# recursion on trees and graphs


def bst(g: Gen) -> Part:
    """A binary search tree of Node objects: recursive insert, traversal, height or sum."""
    node = g.name(["Node", "TreeNode", "Leaf", "Branch"])
    insert = g.name(["insert", "add_node", "place"])
    walk = g.name(["inorder", "walk", "collect", "flatten"])
    measure = g.rng.choice(["height", "total", "count_leaves"])
    mname = g.name([measure, measure + "_of"])
    fn = g.name(["build_tree", "tree_report", "sort_by_tree", "grow"])
    repr_def = "\n\n" + indent(fill(g.pick([
        """
        def __repr__(self):
            return f"$node({self.key})\"""",
        """
        def __repr__(self):
            return f"<{self.key}>\"""",
        """
        def __repr__(self):
            kids = sum(1 for c in (self.left, self.right) if c is not None)
            return f"$node({self.key}, kids={kids})\"""",
    ]), node=node))
    mbody = {
        "height": f"""if t is None:
        return 0
    return 1 + max({mname}(t.left), {mname}(t.right))""",
        "total": f"""if t is None:
        return 0
    return t.key + {mname}(t.left) + {mname}(t.right)""",
        "count_leaves": f"""if t is None:
        return 0
    if t.left is None and t.right is None:
        return 1
    return {mname}(t.left) + {mname}(t.right)""",
    }[measure]
    code = fill("""
        class $node:
            def __init__(self, key):
                self.key = key
                self.left = None
                self.right = None$repr


        def $insert(t, key):
            if t is None:
                return $node(key)
            if key < t.key:
                t.left = $insert(t.left, key)
            elif key > t.key:
                t.right = $insert(t.right, key)
            return t


        def $walk(t, out):
            if t is not None:
                $walk(t.left, out)
                out.append(t.key)
                $walk(t.right, out)
            return out


        def $mname(t):
            $mbody


        def $fn(values):
            root = None
            for v in values:
                root = $insert(root, v)
            return $walk(root, []), $mname(root)""", node=node, repr=repr_def, insert=insert, walk=walk,
                mname=mname, mbody=mbody, fn=fn)
    return Part([code], f"{fn}($ARG)", "ints", g.pick(["tree", "ordered", "shape"]))


def folder_tree(g: Gen) -> Part:
    """A nested dict tree (folders and file sizes) walked recursively, with a path list."""
    fn = g.name(["folder_sizes", "disk_usage", "tree_sizes"])
    size = g.name(["size_of", "total_size", "weigh_tree"])
    deepest = g.name(["deepest", "max_depth", "depth_of"])
    tree_n = g.name(["TREE", "LAYOUT", "FILES"])
    names = g.rng.sample(["src", "docs", "lib", "bin", "tmp", "img", "etc", "var"], 4)
    files = g.rng.sample(["a.py", "b.txt", "c.md", "d.png", "e.cfg", "f.log"], 4)
    tree = {names[0]: {files[0]: g.rng.randint(1, 9), names[1]: {files[1]: g.rng.randint(1, 9)}},
            names[2]: {files[2]: g.rng.randint(1, 9)}, files[3]: g.rng.randint(1, 9)}
    code = fill("""
        def $size(node):
            if isinstance(node, int):
                return node
            return sum($size(child) for child in node.values())


        def $deepest(node, path):
            if isinstance(node, int):
                return path
            best = path
            for name, child in sorted(node.items()):
                found = $deepest(child, path + [name])
                if len(found) > len(best):
                    best = found
            return best


        def $fn(n):
            sizes = {name: $size(child) for name, child in $tree.items()}
            big = [name for name, s in sizes.items() if s > n]
            return big, "/".join($deepest($tree, []))""", size=size, deepest=deepest, fn=fn, tree=tree_n)
    return Part([code], f"{fn}($ARG)", "n", g.pick(["usage", "sizes"]), consts=[f"{tree_n} = {tree!r}"])


def graph(g: Gen) -> Part:
    """A graph as defaultdict(list) from an edge list: recursive DFS for components, or BFS with a
    deque for shortest hops."""
    build = g.name(["build_graph", "adjacency", "link_all"])
    fn = g.name(["components", "reachable", "hops", "route"])
    nodes = g.rng.sample(["a", "b", "c", "d", "e", "f", "g", "h"], 6)

    def edges() -> str:
        es = []
        for _ in range(g.rng.randint(3, 5)):
            x, y = g.rng.sample(nodes, 2)
            if (x, y) not in es and (y, x) not in es:
                es.append((x, y))
        return repr(es)
    g.inputs["edges"] = edges
    head = fill("""
        def $build(edges):
            adj = defaultdict(list)
            for a, b in edges:
                adj[a].append(b)
                adj[b].append(a)
            return adj""", build=build)
    if g.chance(0.5):
        dfs = g.name(["dfs", "visit", "explore"])
        code = fill("""
            def $dfs(adj, node, seen):
                seen.add(node)
                for nxt in adj[node]:
                    if nxt not in seen:
                        $dfs(adj, nxt, seen)
                return seen


            def $fn(edges):
                adj = $build(edges)
                seen = set()
                groups = 0
                for node in sorted(adj):
                    if node not in seen:
                        $dfs(adj, node, seen)
                        groups += 1
                return groups, len(seen)""", dfs=dfs, build=build, fn=fn)
        imports = {"from collections import defaultdict"}
    else:
        code = fill("""
            def $fn(edges):
                adj = $build(edges)
                start = edges[0][0]
                dist = {start: 0}
                queue = deque([start])
                while queue:
                    node = queue.popleft()
                    for nxt in adj[node]:
                        if nxt in dist:
                            continue
                        dist[nxt] = dist[node] + 1
                        queue.append(nxt)
                return max(dist.values()), sorted(dist)""", build=build, fn=fn)
        imports = {"from collections import defaultdict, deque"}
    return Part([head, code], f"{fn}($ARG)", "edges", g.pick(["graph", "reach", "links"]), imports=imports)


# ---------------------------------------------------------------------------------------------------
# declared kinds


def state_machine(g: Gen) -> Part:
    """A class driven by events through a module-level transition table; unknown events are counted or
    ignored; the history of states is kept."""
    table_n = g.name(["TRANSITIONS", "TABLE", "RULES"])
    cls = g.name(["Machine", "Workflow", "Controller", "Door", "Order"])
    fn = g.name(["run_machine", "replay", "drive", "feed_events"])
    states, events = g.rng.choice([
        (["idle", "running", "paused", "done"], ["start", "pause", "resume", "finish"]),
        (["closed", "open", "locked"], ["open", "close", "lock", "unlock"]),
        (["new", "paid", "shipped", "returned"], ["pay", "ship", "return", "cancel"]),
        (["red", "green", "yellow"], ["go", "slow", "stop"]),
    ])
    table: dict[tuple[str, str], str] = {}
    for i, s in enumerate(states):
        for e in g.rng.sample(events, 2):
            table[(s, e)] = states[(i + 1 + g.rng.randint(0, 1)) % len(states)]
    table_text = "{\n" + "".join(f"    ({s!r}, {e!r}): {t!r},\n" for (s, e), t in table.items()) + "}"
    strict = g.chance(0.5)
    on_bad = ("            self.rejected += 1\n            return False" if strict else
              "            return False")
    code = fill("""
        class $cls:
            def __init__(self, state="$s0"):
                self.state = state
                self.history = [state]
                self.rejected = 0

            def fire(self, event):
                key = (self.state, event)
                if key not in $table:
        $on_bad
                self.state = $table[key]
                self.history.append(self.state)
                return True


        def $fn(events):
            m = $cls()
            for e in events:
                m.fire(e)
            return m.state, len(m.history), m.rejected""", cls=cls, s0=states[0], table=table_n, on_bad=on_bad,
                fn=fn)
    g.inputs["events"] = lambda: repr([g.rng.choice(events) for _ in range(g.rng.randint(4, 7))])
    return Part([code], f"{fn}($ARG)", "events", g.pick(["final_state", "machine"]),
                consts=[f"{table_n} = {table_text}"], kind="state_machine")


def expr_parser(g: Gen) -> Part:
    """A tokenizer and a recursive-descent parser evaluating + - * and parentheses."""
    tok = g.name(["tokenize", "lex", "scan_tokens"])
    cls = g.name(["Parser", "ExprParser", "Reader"])
    fn = g.name(["evaluate", "calc", "compute"])
    use_re = g.chance(0.5)
    toks, pos = g.pick(["tokens", "toks", "items", "queue"]), g.pick(["pos", "i", "index", "cursor", "at"])
    tok_code = fill("""
        def $tok(text):
            return re.findall(r"\\d+|[-+*()]", text)""", tok=tok) if use_re else fill("""
        def $tok(text):
            tokens, num = [], ""
            for ch in text:
                if ch.isdigit():
                    num += ch
                    continue
                if num:
                    tokens.append(num)
                    num = ""
                if ch in "+-*()":
                    tokens.append(ch)
            if num:
                tokens.append(num)
            return tokens""", tok=tok)
    code = fill("""
        class $cls:
            def __init__(self, $toks):
                self.$toks = $toks
                self.$pos = 0

            def peek(self):
                return self.$toks[self.$pos] if self.$pos < len(self.$toks) else None

            def take(self):
                token = self.peek()
                self.$pos += 1
                return token

            def expr(self):
                value = self.term()
                while self.peek() in ("+", "-"):
                    op = self.take()
                    rhs = self.term()
                    value = value + rhs if op == "+" else value - rhs
                return value

            def term(self):
                value = self.factor()
                while self.peek() == "*":
                    self.take()
                    value *= self.factor()
                return value

            def factor(self):
                token = self.take()
                if token == "(":
                    value = self.expr()
                    self.take()
                    return value
                return int(token)


        def $fn(text):
            parser = $cls($tok(text))
            return parser.expr()""", cls=cls, tok=tok, fn=fn, toks=toks, pos=pos)

    def expression() -> str:
        nums = [str(g.rng.randint(1, 9)) for _ in range(g.rng.randint(2, 3))]
        ops = [g.rng.choice("+-*") for _ in nums[1:]]
        text = nums[0] + "".join(o + n for o, n in zip(ops, nums[1:], strict=True))
        if g.rng.random() < 0.4:
            text = f"({text})*{g.rng.randint(2, 4)}"
        return repr(text.replace("+", " + ") if g.rng.random() < 0.3 else text)
    g.inputs["expression"] = expression
    return Part([tok_code, code], f"{fn}($ARG)", "expression", g.pick(["value", "parsed"]),
                imports={"import re"} if use_re else set(), kind="parser")


def record_parser(g: Gen) -> Part:
    """A line parser for 'name:qty' records into objects, skipping comments and malformed lines."""
    d = g.d
    cls = g.name([d.entity, "Line", "Record"])
    parse = g.name(["parse_line", "read_record", "split_record"])
    fn = g.name(["parse_all", "load_records", "read_lines"])
    code = fill("""
        $record


        def $parse(line):
            line = line.strip()
            if not line or line.startswith("#"):
                return None
            head, sep, tail = line.partition(":")
            if not sep or not tail.isdigit():
                raise ValueError(f"bad line {line!r}")
            return $cls(head, int(tail))


        def $fn(lines):
            records, errors = [], 0
            for line in lines:
                try:
                    rec = $parse(line)
                except ValueError:
                    errors += 1
                    continue
                if rec is not None:
                    records.append(rec)
            return sum(r.$qty for r in records), errors""", record=record_class(cls, d), cls=cls, qty=d.qty,
                parse=parse, fn=fn)

    def lines() -> str:
        out = [f"{w}:{g.rng.randint(1, 30)}" for w in g.words(2, 3)]
        out.insert(g.rng.randint(0, len(out)), g.rng.choice(["# header", "", f"{g.d.words[0]}-x", "bad:"]))
        return repr(out)
    g.inputs["lines"] = lines
    return Part([code], f"{fn}($ARG)", "lines", g.pick(["loaded", "parsed_total"]), kind="parser")


def stack_vm(g: Gen) -> Part:
    """A stack machine interpreting a list of instruction strings, dispatching through a dict of methods
    or an if/elif chain."""
    cls = g.name(["VM", "StackMachine", "Interpreter", "Calculator"])
    fn = g.name(["execute", "run_program", "interpret"])
    arity_n = g.name(["ARITY", "OPCODES", "INSTRUCTIONS"])
    arity_l = f'{arity_n} = {{"push": 1, "add": 0, "mul": 0, "dup": 0}}'
    if g.chance(0.5):
        dispatch = fill("""
            def step(self, line):
                op, *args = line.split()
                if len(args) != $arity[op]:
                    raise ValueError(f"{op} takes {$arity[op]} arguments")
                handler = getattr(self, op)
                handler(*[int(a) for a in args])
                self.steps += 1""", arity=arity_n)
    else:
        dispatch = fill("""
            def step(self, line):
                op, *args = line.split()
                if op == "push":
                    self.push(int(args[0]))
                elif op == "add":
                    self.add()
                elif op == "mul":
                    self.mul()
                elif op == "dup":
                    self.dup()
                else:
                    raise ValueError(op)
                self.steps += 1""")
    ops = ""
    code = fill("""
        class $cls:
            def __init__(self):
                self.stack = []
                self.steps = 0$ops

            def push(self, value):
                self.stack.append(value)

            def add(self):
                b, a = self.stack.pop(), self.stack.pop()
                self.stack.append(a + b)

            def mul(self):
                b, a = self.stack.pop(), self.stack.pop()
                self.stack.append(a * b)

            def dup(self):
                self.stack.append(self.stack[-1])

        $dispatch


        def $fn(program):
            vm = $cls()
            for line in program:
                vm.step(line)
            return vm.stack[-1], vm.steps""", cls=cls, ops=("\n" + indent(ops, 2)) if ops else "",
                dispatch=indent(dispatch), fn=fn)

    def program() -> str:
        prog = [f"push {g.rng.randint(1, 9)}"]
        depth = 1
        for _ in range(g.rng.randint(3, 5)):
            if depth >= 2 and g.rng.random() < 0.6:
                prog.append(g.rng.choice(["add", "mul"]))
                depth -= 1
            elif g.rng.random() < 0.3:
                prog.append("dup")
                depth += 1
            else:
                prog.append(f"push {g.rng.randint(1, 9)}")
                depth += 1
        return repr(prog)
    g.inputs["program"] = program
    return Part([code], f"{fn}($ARG)", "program", g.pick(["top", "vm_result"]), consts=[arity_l],
                kind="interpreter")


def register_vm(g: Gen) -> Part:
    """An interpreter of a tiny register language with a jump (a countdown loop) and a step limit."""
    fn = g.name(["run_registers", "interpret_regs", "machine"])
    limit_n, limit_l = g.const(["MAX_STEPS", "STEP_LIMIT", "FUEL"], 60)
    code = fill("""
        def $fn(n):
            program = [("set", "a", n), ("set", "s", 0), ("add", "s", "a"), ("dec", "a"), ("jnz", "a", 2)]
            regs = {}
            pc = steps = 0
            while pc < len(program):
                op, reg, *rest = program[pc]
                steps += 1
                if steps > $limit:
                    break
                if op == "set":
                    regs[reg] = rest[0]
                elif op == "add":
                    regs[reg] += regs[rest[0]]
                elif op == "dec":
                    regs[reg] -= 1
                elif op == "jnz" and regs[reg] != 0:
                    pc = rest[0]
                    continue
                pc += 1
            return regs["s"], steps""", fn=fn, limit=limit_n)
    return Part([code], f"{fn}($ARG)", "n", g.pick(["registers", "regs"]), consts=[limit_l], kind="interpreter")


def queue_sim(g: Gen) -> Part:
    """A discrete-time queue simulation: customers arrive per tick, servers work through a deque."""
    cls = g.name(["Server", "Teller", "Worker", "Counter"])
    fn = g.name(["simulate_queue", "run_shop", "serve_all"])
    servers = g.rng.randint(1, 2)
    code = fill("""
        class $cls:
            def __init__(self, name):
                self.name = name
                self.busy = 0
                self.served = 0

            def tick(self):
                if self.busy > 0:
                    self.busy -= 1
                    if self.busy == 0:
                        self.served += 1


        def $fn(arrivals):
            queue = deque()
            servers = [$cls(f"s{i}") for i in range($servers)]
            waited = 0
            for t, count in enumerate(arrivals):
                queue.extend([t] * count)
                for s in servers:
                    if s.busy == 0 and queue:
                        queue.popleft()
                        s.busy = $service
                    s.tick()
                waited += len(queue)
            return [s.served for s in servers], waited""", cls=cls, fn=fn, servers=servers,
                service=g.rng.randint(1, 2))
    g.inputs["arrivals"] = lambda: repr([g.rng.randint(0, 2) for _ in range(g.rng.randint(3, 5))])
    return Part([code], f"{fn}($ARG)", "arrivals", g.pick(["served", "queue_stats"]),
                imports={"from collections import deque"}, kind="simulation")


def stock_sim(g: Gen) -> Part:
    """An inventory simulation over days: demand, restocking under a reorder point, lost sales."""
    d = g.d
    cls = g.name([d.entity + "Stock", "Warehouse", "Inventory"])
    fn = g.name(["simulate_days", "run_inventory", "play_out"])
    reorder_n, reorder_l = g.const(["REORDER_POINT", "LOW_WATER", "MIN_STOCK"], g.rng.randint(3, 6))
    code = fill("""
        class $cls:
            def __init__(self, level):
                self.level = level
                self.lost = 0
                self.orders = []

            def sell(self, demand):
                sold = min(demand, self.level)
                self.level -= sold
                self.lost += demand - sold
                return sold

            def restock(self, day):
                if self.level < $reorder:
                    self.orders.append(day)
                    self.level += $batch


        def $fn(demands):
            stock = $cls($start)
            revenue = 0
            for day, demand in enumerate(demands):
                revenue += stock.sell(demand) * $price
                stock.restock(day)
            return revenue, stock.lost, stock.orders""", cls=cls, fn=fn, reorder=reorder_n,
                batch=g.rng.randint(5, 10), start=g.rng.randint(5, 12), price=g.rng.randint(2, 5))
    return Part([code], f"{fn}($ARG)", "ints", g.pick(["inventory", "sales"]), consts=[reorder_l],
                kind="simulation")


STRUCT_PARTS: dict[str, Callable[[Gen], Part]] = {
    "bst": bst,
    "folder_tree": folder_tree,
    "graph": graph,
}

KIND_PARTS: dict[str, Callable[[Gen], Part]] = {
    "state_machine": state_machine,
    "expr_parser": expr_parser,
    "record_parser": record_parser,
    "stack_vm": stack_vm,
    "register_vm": register_vm,
    "queue_sim": queue_sim,
    "stock_sim": stock_sim,
}
