"""The pieces every part of the class-based program generator (classgen*.py) builds with: the program's
`Domain` (its vocabulary), a `Part` of a program, `Gen` (random choices and unique names for one program),
and the text helpers `fill`, `record_class`, `block` and `indent`."""

from __future__ import annotations

import random
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from string import Template


@dataclass(frozen=True)
class Domain:
    """The vocabulary of one program: an entity and its container, their attributes, sample words."""

    name: str
    entity: str  # a class name, e.g. "Book"
    group: str  # the class that holds entities, e.g. "Library"
    label: str  # a str attribute, e.g. "title"
    qty: str  # an int attribute, e.g. "pages"
    qty2: str  # a second int attribute, e.g. "copies"
    words: tuple[str, ...]  # short sample values of `label`
    item: str  # a loop variable for one entity, e.g. "book"


DOMAINS: tuple[Domain, ...] = (
    Domain("library", "Book", "Library", "title", "pages", "copies",
           ("dune", "emma", "iliad", "odyssey", "hamlet", "walden", "ulysses"), "book"),
    Domain("shop", "Item", "Cart", "name", "price", "qty",
           ("apple", "bread", "milk", "tea", "rice", "soap", "jam"), "item"),
    Domain("bank", "Account", "Bank", "owner", "balance", "limit",
           ("ana", "ben", "cleo", "dev", "eli", "fay", "gus"), "account"),
    Domain("school", "Student", "Course", "name", "grade", "credits",
           ("ivy", "jon", "kim", "lea", "max", "noa", "ola"), "student"),
    Domain("game", "Player", "Team", "nick", "score", "lives",
           ("ace", "bolt", "cyan", "dash", "echo", "fox", "gale"), "player"),
    Domain("shipping", "Parcel", "Depot", "dest", "weight", "priority",
           ("oslo", "rome", "lima", "kyiv", "baku", "doha", "riga"), "parcel"),
    Domain("music", "Track", "Playlist", "title", "seconds", "plays",
           ("intro", "solo", "coda", "riff", "verse", "hook", "outro"), "track"),
    Domain("garden", "Plant", "Bed", "species", "height", "water",
           ("fern", "mint", "sage", "rose", "lily", "basil", "thyme"), "plant"),
    Domain("tasks", "Task", "Board", "label", "effort", "rank",
           ("fix", "test", "docs", "deploy", "review", "plan", "merge"), "task"),
    Domain("fleet", "Vehicle", "Garage", "plate", "km", "fuel",
           ("ab1", "cd2", "ef3", "gh4", "ij5", "kl6", "mn7"), "vehicle"),
    Domain("kitchen", "Recipe", "Menu", "dish", "minutes", "servings",
           ("soup", "stew", "pie", "salad", "curry", "tart", "flan"), "recipe"),
    Domain("cluster", "Host", "Cluster", "hostname", "load", "cores",
           ("alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa"), "host"),
    Domain("hotel", "Room", "Hotel", "guest", "nights", "floor",
           ("smith", "jones", "brown", "lee", "khan", "garcia", "wu"), "room"),
    Domain("sensors", "Sensor", "Station", "sid", "reading", "threshold",
           ("t1", "t2", "h1", "p1", "w1", "t3", "h2"), "sensor"),
    Domain("museum", "Exhibit", "Gallery", "artist", "year", "visitors",
           ("monet", "klimt", "goya", "dali", "miro", "munch", "kahlo"), "exhibit"),
    Domain("clinic", "Patient", "Ward", "patient", "age", "visits",
           ("rita", "omar", "lina", "paul", "sara", "tom", "zoe"), "patient"),
)


@dataclass
class Part:
    """A piece of a program: its top-level definitions and how `main` uses it.

    `call` is a Template of the expression main evaluates, with `$ARG` for the part's input (main's
    parameter of kind `needs`). `result` is a short name for the result. `expect` lists exception
    class names that may end the program uncaught."""

    defs: list[str]
    call: str
    needs: str
    result: str
    imports: set[str] = field(default_factory=set)
    consts: list[str] = field(default_factory=list)
    kind: str | None = None
    expect: tuple[str, ...] = ()
    last: bool = False  # must be the last part main calls (it may raise uncaught)


class Gen:
    """Random choices and unique top-level names for one program."""

    def __init__(self, rng: random.Random, domain: Domain) -> None:
        self.rng = rng
        self.d = domain
        self.used: set[str] = set()
        #: input kind -> a function drawing the literal main receives for it
        self.inputs: dict[str, Callable[[], str]] = {}

    def pick(self, options: list[str] | tuple[str, ...]) -> str:
        return self.rng.choice(list(options))

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def name(self, options: list[str] | tuple[str, ...]) -> str:
        """A top-level name from options not used yet in this program (a numbered one if all are)."""
        free = [o for o in options if o not in self.used]
        name = self.rng.choice(free) if free else f"{options[0]}_{len(self.used)}"
        self.used.add(name)
        return name

    def const(self, options: list[str] | tuple[str, ...], value: object) -> tuple[str, str]:
        """A module constant: (its name, its line)."""
        name = self.name(options)
        return name, f"{name} = {value!r}"

    def words(self, lo: int = 3, hi: int = 5) -> list[str]:
        return self.rng.sample(list(self.d.words), self.rng.randint(lo, hi))

    def ints(self, lo: int = 3, hi: int = 6, top: int = 20) -> list[int]:
        return [self.rng.randint(1, top) for _ in range(self.rng.randint(lo, hi))]


def fill(text: str, **names: object) -> str:
    """`text` dedented, with `$name` placeholders replaced (a missing one raises KeyError)."""
    return Template(textwrap.dedent(text).strip("\n")).substitute({k: str(v) for k, v in names.items()})


def record_class(cls: str, d: Domain) -> str:
    """`class cls` whose __init__ keeps the domain's label and quantity, as fill writes it. A template
    that gives the class more methods takes it as a placeholder on a line of its own at the template's
    outer level, the methods indented one level under it."""
    return fill("""
        class $cls:
            def __init__(self, $label, $qty):
                self.$label = $label
                self.$qty = $qty""", cls=cls, label=d.label, qty=d.qty)


def block(*pieces: str | None) -> str:
    """Join code pieces (each dedented already), leaving out None and empty ones."""
    return "\n".join(p for p in pieces if p)


def indent(text: str, n: int = 1) -> str:
    return textwrap.indent(text, "    " * n)
