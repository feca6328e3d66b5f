# breakpoints: 12, 15
from dataclasses import dataclass, field


@dataclass
class Point:
    x: int
    y: int
    tags: list = field(default_factory=list)

    def __post_init__(self):
        self.tags.append("new")

    def norm1(self):
        return abs(self.x) + abs(self.y)


p = Point(3, -4)
q = Point(1, 1)
print(p.norm1() + q.norm1(), p)
