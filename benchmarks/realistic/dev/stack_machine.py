"""An assembler and stack-machine interpreter for a tiny bytecode with jumps, calls and a data stack."""
# entry: run_program(["    push 3", "    call fact", "    print", "    push 6", "    call countdown", "    halt", "fact:", "    dup", "    push 1", "    gt", "    jz fact_base", "    dup", "    push 1", "    sub", "    call fact", "    mul", "    ret", "fact_base:", "    ret", "countdown:", "    dup", "    jz done", "    push 3", "    sub", "    dup", "    print", "    jmp countdown", "done:", "    pop", "    ret"])
# kind: interpreter, parser

from dataclasses import dataclass

MAX_STEPS = 500
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "gt": lambda a, b: int(a > b),
    "eq": lambda a, b: int(a == b),
}
JUMPS = {"jmp", "jz", "call"}


class AssemblyError(Exception):
    pass


class MachineError(Exception):
    pass


@dataclass
class Instruction:
    op: str
    arg: int | None = None

    def __repr__(self):
        return self.op if self.arg is None else f"{self.op} {self.arg}"


def strip_comment(line):
    index = line.find(";")
    return (line if index < 0 else line[:index]).strip()


def first_pass(lines):
    labels = {}
    body = []
    for line in lines:
        text = strip_comment(line)
        if not text:
            continue
        if text.endswith(":"):
            name = text[:-1]
            if name in labels:
                raise AssemblyError(f"duplicate label {name}")
            labels[name] = len(body)
        else:
            body.append(text.split())
    return labels, body


def assemble(lines):
    labels, body = first_pass(lines)
    program = []
    for parts in body:
        op = parts[0]
        if op in JUMPS:
            if parts[1] not in labels:
                raise AssemblyError(f"unknown label {parts[1]}")
            program.append(Instruction(op, labels[parts[1]]))
        elif op == "push":
            program.append(Instruction(op, int(parts[1])))
        else:
            program.append(Instruction(op))
    return program


class Machine:
    def __init__(self, program):
        self.program = program
        self.stack = []
        self.calls = []
        self.pc = 0
        self.output = []
        self.steps = 0
        self.deepest = 0

    def fault(self, message, pc=None):
        """A MachineError naming the failing instruction's address (by default the current one)."""
        return MachineError(f"pc={self.pc if pc is None else pc}: {message}")

    def pop(self):
        if not self.stack:
            raise self.fault("stack underflow")
        return self.stack.pop()

    def step(self):
        instruction = self.program[self.pc]
        self.pc += 1
        op, arg = instruction.op, instruction.arg
        if op == "push":
            self.stack.append(arg)
        elif op == "pop":
            self.pop()
        elif op == "dup":
            value = self.pop()
            self.stack.extend([value, value])
        elif op in BINARY:
            b, a = self.pop(), self.pop()
            self.stack.append(BINARY[op](a, b))
        elif op == "jmp":
            self.pc = arg
        elif op == "jz":
            if self.pop() == 0:
                self.pc = arg
        elif op == "call":
            self.calls.append(self.pc)
            self.deepest = max(self.deepest, len(self.calls))
            self.pc = arg
        elif op == "ret":
            if not self.calls:
                raise self.fault("return outside a call")
            self.pc = self.calls.pop()
        elif op == "print":
            self.output.append(self.stack[-1])
            print(self.stack[-1])
        elif op == "halt":
            return False
        else:
            raise self.fault(f"unknown instruction {op}", self.pc - 1)
        return True

    def run(self):
        while self.steps < MAX_STEPS:
            self.steps += 1
            if not self.step():
                break
        else:
            raise self.fault("step limit reached")
        return self.output


def disassemble(program):
    targets = {ins.arg for ins in program if ins.op in JUMPS}
    listing = []
    for address, instruction in enumerate(program):
        marker = ">" if address in targets else " "
        listing.append(f"{marker}{address:02d} {instruction!r}")
    return listing


def run_program(lines):
    program = assemble(lines)
    listing = disassemble(program)
    print(listing[0], "...", listing[-1])
    machine = Machine(program)
    try:
        output = machine.run()
    except MachineError as exc:
        return {"error": str(exc), "stack": machine.stack}
    return {"output": output, "steps": machine.steps, "deepest": machine.deepest, "stack": machine.stack, "size": len(program)}
