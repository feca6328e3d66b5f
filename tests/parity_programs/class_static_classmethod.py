# parity copy of tests/programs/class_static_classmethod.py; its entry is called at module level (last lines)
# breakpoints: 11, 15
class Stats:
    scale = 10

    def __init__(self, values):
        self.values = values

    @classmethod
    def from_list(cls, xs):
        return cls(sorted(xs))

    @staticmethod
    def mean(xs):
        return sum(xs) / len(xs)

    def scaled_mean(self):
        return Stats.mean(self.values) * self.scale


def build(xs):
    s = Stats.from_list(xs)
    return s.scaled_mean()


result = build([2, 5, 1])
print(result)
