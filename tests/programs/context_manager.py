# breakpoints: 8, 12
class Resource:
    def __init__(self, name):
        self.name = name
        self.log = []

    def __enter__(self):
        self.log.append("open")
        return self

    def __exit__(self, exc_type, exc, tb):
        self.log.append("close")
        return False


with Resource("db") as r:
    r.log.append("use")
print(r.log)
