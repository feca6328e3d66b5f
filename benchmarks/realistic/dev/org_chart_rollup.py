"""An organisation chart as a tree: recursive headcount and payroll roll-ups, a depth-first walk, and reports filtered from it."""
# entry: org_report([["Rae", "CEO", 250, None], ["Sam", "CTO", 190, "Rae"], ["Tia", "CFO", 180, "Rae"], ["Uma", "Engineer", 120, "Sam"], ["Vic", "Engineer", 115, "Sam"], ["Wes", "Lead", 140, "Sam"], ["Xan", "Intern", 40, "Wes"], ["Yul", "Analyst", 95, "Tia"], ["Zoe", "Designer", 100, "Quinn"]], "Xan")


class OrgError(Exception):
    pass


class Employee:
    def __init__(self, name, title, salary):
        self.name = name
        self.title = title
        self.salary = salary
        self.manager = None
        self.reports = []

    def add_report(self, other):
        other.manager = self
        self.reports.append(other)


def build_chart(rows):
    people = {name: Employee(name, title, salary) for name, title, salary, _ in rows}
    root, orphans = None, []
    for name, _, _, manager in rows:
        if manager is None:
            root = people[name]
        elif manager in people:
            people[manager].add_report(people[name])
        else:
            orphans.append(name)
    if root is None:
        raise OrgError("nobody is at the top")
    return root, people, orphans


def walk(person, depth=0):
    yield depth, person
    for report in person.reports:
        yield from walk(report, depth + 1)


def headcount(person):
    return 1 + sum(headcount(report) for report in person.reports)


def payroll(person):
    return person.salary + sum(payroll(report) for report in person.reports)


def managers(entries):
    for depth, person in entries:
        if person.reports:
            yield depth, person


def chain_of_command(people, name):
    if name not in people:
        raise OrgError(f"{name} is not on the chart")
    chain = []
    person = people[name]
    while person is not None:
        chain.append(person.name)
        person = person.manager
    return " -> ".join(chain)


def org_report(rows, name):
    root, people, orphans = build_chart(rows)
    for depth, person in walk(root):
        print(f"{'  ' * depth}{person.name} ({person.title})")
    teams = {person.name: (headcount(person), payroll(person)) for _, person in managers(walk(root))}
    try:
        chain = chain_of_command(people, name)
    except OrgError as exc:
        chain = str(exc)
    return {"teams": teams, "chain": chain, "orphans": orphans}
