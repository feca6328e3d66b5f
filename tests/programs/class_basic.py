# breakpoints: 4, 8
class Counter:
    def __init__(self, start):
        self.count = start

    def incr(self, by=1):
        self.count += by
        return self.count

    def __repr__(self):
        return f"Counter({self.count})"


c = Counter(5)
c.incr()
c.incr(3)
print(c)
